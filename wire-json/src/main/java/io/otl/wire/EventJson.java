package io.otl.wire;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.session.FeedbackKindAliases;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Turns one event object of design §7.1 (an element of the HTTP body's {@code events}, or the
 * value of an {@code agent-events} Kafka record) into a {@link SessionInput}. Every field's JSON
 * type is checked and unknown fields are refused, so a typo is an error naming the field instead
 * of silently dropped data. Domain rules (roles, rating range, sizes) stay in the entity.
 *
 * <p>Pure Jackson: shared by the HTTP edge and Kafka ingestion. Errors are {@link
 * InvalidEventException}s whose message starts with {@code where} (e.g. {@code events[3].role}).
 */
public final class EventJson {
  /** The event types and the fields of each, besides {@link #COMMON_FIELDS}. */
  public static final Map<String, Set<String>> FIELDS = Map.of(
      "start", Set.of("agentVersion", "modelVersion", "metadata"),
      "message", Set.of("role", "content", "msgId", "latencyMs"),
      "tool_call", Set.of("callId", "toolName", "input", "output", "success", "latencyMs"),
      "reasoning", Set.of("index", "thought", "action", "observation"),
      "feedback", Set.of("kind", "value", "feedbackId", "source", "msgId"),
      "result", Set.of("status", "detail"));

  /** Fields every event object may carry (sessionId and agentId are set on Kafka records). */
  public static final Set<String> COMMON_FIELDS = Set.of("type", "eventId", "at", "sessionId", "agentId");

  private static final List<String> TYPE_ORDER = List.of("start", "message", "tool_call", "reasoning", "feedback",
      "result");

  private EventJson() {}

  /**
   * One event object.
   *
   * @param where prefix of field names in error messages, e.g. {@code events[0]} or {@code value}
   * @throws InvalidEventException naming the offending field
   */
  public static SessionInput parse(JsonNode e, String where) {
    if (e == null || !e.isObject()) throw invalid(where + " must be a JSON object");
    String type = text(e, where, "type");
    if (type == null) throw invalid(where + ".type is required: one of " + String.join(", ", TYPE_ORDER));
    Set<String> allowed = FIELDS.get(type);
    if (allowed == null) {
      throw invalid(where + ".type is not one of the allowed: " + String.join(", ", TYPE_ORDER));
    }
    Iterator<String> names = e.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!allowed.contains(name) && !COMMON_FIELDS.contains(name)) {
        throw invalid(where + "." + JsonLimits.shownKey(name) + " is not a field of a " + type + " event; allowed: "
            + new TreeSet<>(allowed) + " and eventId, at");
      }
    }
    String eventId = text(e, where, "eventId");
    Instant at = instant(e, where);
    return switch (type) {
      case "start" -> new SessionInput.Start(eventId, at, text(e, where, "agentVersion"),
          text(e, where, "modelVersion"), stringMap(e, where, "metadata"));
      case "message" -> new SessionInput.Message(eventId, at, text(e, where, "role"), text(e, where, "content"),
          text(e, where, "msgId"), longValue(e, where, "latencyMs"));
      case "tool_call" -> new SessionInput.ToolCall(eventId, at, text(e, where, "callId"),
          text(e, where, "toolName"), e.get("input"), e.get("output"), bool(e, where, "success"),
          longValue(e, where, "latencyMs"));
      case "reasoning" -> {
        Long index = longValue(e, where, "index", Integer.MAX_VALUE);
        yield new SessionInput.Reasoning(eventId, at, index == null ? null : index.intValue(),
            text(e, where, "thought"), text(e, where, "action"), text(e, where, "observation"));
      }
      case "feedback" -> new SessionInput.Feedback(eventId, at, feedbackKind(e, where), number(e, where, "value"),
          text(e, where, "feedbackId"), text(e, where, "source"), text(e, where, "msgId"));
      case "result" -> new SessionInput.Result(eventId, at, text(e, where, "status"), text(e, where, "detail"));
      default -> throw new IllegalStateException(type);
    };
  }

  /** A string field, null when absent or JSON null; refuses other JSON types and NUL characters. */
  public static String text(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isTextual()) throw invalid(where + "." + field + " must be a string");
    String s = v.textValue();
    if (s.indexOf('\u0000') >= 0) throw invalid(where + "." + field + " must not contain NUL characters");
    return s;
  }

  /**
   * The kind, checked before the value: a kind that is not known makes any complaint about the value
   * (whose type depends on the kind) beside the point.
   */
  private static String feedbackKind(JsonNode e, String where) {
    String kind = text(e, where, "kind");
    if (kind != null && SessionModel.FeedbackKind.parse(kind) == null) {
      throw invalid(where + ".kind" + FeedbackKindAliases.UNKNOWN_KIND);
    }
    return kind;
  }

  private static Long longValue(JsonNode e, String where, String field) {
    return longValue(e, where, field, Long.MAX_VALUE);
  }

  private static Long longValue(JsonNode e, String where, String field, long max) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isIntegralNumber()) throw invalid(where + "." + field + " must be an integer");
    // an integer all the same: "must be an integer" sent the client looking for a decimal point
    if (!v.canConvertToLong() || v.longValue() > max) throw invalid(where + "." + field + " is too large: at most " + max);
    return v.longValue();
  }

  private static Double number(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isNumber()) throw invalid(where + "." + field + " must be a number");
    double d = v.doubleValue();
    if (!Double.isFinite(d)) throw invalid(where + "." + field + " must be a finite number");
    return d;
  }

  private static Boolean bool(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isBoolean()) throw invalid(where + "." + field + " must be true or false");
    return v.booleanValue();
  }

  private static Instant instant(JsonNode e, String where) {
    String s = text(e, where, "at");
    if (s == null) return null;
    try {
      Instant t = OffsetDateTime.parse(s).toInstant();
      String p = io.otl.core.StrictValues.timeProblem(t);
      if (p != null) throw invalid(where + ".at " + p + "; send the event's real time or omit at");
      return t;
    } catch (DateTimeParseException ex) {
      throw invalid(where + ".at is not ISO-8601 with an offset, e.g. 2026-11-20T02:00:00Z");
    }
  }

  private static Map<String, String> stringMap(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isObject()) throw invalid(where + "." + field + " must be an object of strings");
    Map<String, String> out = new LinkedHashMap<>();
    var it = v.fields();
    while (it.hasNext()) {
      var f = it.next();
      if (!f.getValue().isTextual()) throw invalid(where + "." + field + "." + JsonLimits.shownKey(f.getKey()) + " must be a string");
      out.put(f.getKey(), f.getValue().textValue());
    }
    return out;
  }

  private static InvalidEventException invalid(String message) {
    return new InvalidEventException(message);
  }
}
