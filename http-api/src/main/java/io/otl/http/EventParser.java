package io.otl.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the event objects of DESIGN §7.1 (HTTP body, Kafka record) into session inputs, checking
 * every field's type and refusing unknown fields, so a typo is a 400 naming the field instead of
 * silently dropped data. Domain rules (roles, rating range, sizes) stay in the entity.
 */
public final class EventParser {
  private static final Map<String, Set<String>> FIELDS = Map.of(
      "start", Set.of("agentVersion", "modelVersion", "metadata"),
      "message", Set.of("role", "content", "msgId", "latencyMs"),
      "tool_call", Set.of("callId", "toolName", "input", "output", "success", "latencyMs"),
      "reasoning", Set.of("index", "thought", "action", "observation"),
      "feedback", Set.of("kind", "value", "feedbackId", "source"),
      "result", Set.of("status", "detail"));
  private static final Set<String> COMMON = Set.of("type", "eventId", "at", "sessionId", "agentId");

  private final int maxEvents;

  public EventParser(int maxEvents) {
    this.maxEvents = maxEvents;
  }

  /** The {@code events} array of a request body. */
  public List<SessionInput> parseBatch(JsonNode events) {
    if (events == null || events.isNull()) throw BadRequest.invalid("events is required: an array of event objects");
    if (!events.isArray()) throw BadRequest.invalid("events must be an array of event objects");
    if (events.isEmpty()) throw BadRequest.invalid("events must hold at least one event");
    if (events.size() > maxEvents) {
      throw new BadRequest(413, "too_many_events", "events holds " + events.size() + " events; at most " + maxEvents
          + " are accepted per request (data-collector.max-events-per-request): split the batch");
    }
    List<SessionInput> out = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) out.add(parse(events.get(i), "events[" + i + "]"));
    return out;
  }

  /** One event object; {@code where} prefixes field names in errors. */
  public SessionInput parse(JsonNode e, String where) {
    if (e == null || !e.isObject()) throw BadRequest.invalid(where + " must be a JSON object");
    String type = text(e, where, "type");
    if (type == null) throw BadRequest.invalid(where + ".type is required: one of " + FIELDS.keySet());
    Set<String> allowed = FIELDS.get(type);
    if (allowed == null) {
      throw BadRequest.invalid(where + ".type is '" + type + "'; allowed: start, message, tool_call, reasoning, "
          + "feedback, result");
    }
    Iterator<String> names = e.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!allowed.contains(name) && !COMMON.contains(name)) {
        throw BadRequest.invalid(where + "." + name + " is not a field of a " + type + " event; allowed: "
            + new java.util.TreeSet<>(allowed) + " and eventId, at");
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
        Long index = longValue(e, where, "index");
        if (index != null && index > Integer.MAX_VALUE) throw BadRequest.invalid(where + ".index is too large");
        yield new SessionInput.Reasoning(eventId, at, index == null ? null : index.intValue(),
            text(e, where, "thought"), text(e, where, "action"), text(e, where, "observation"));
      }
      case "feedback" -> new SessionInput.Feedback(eventId, at, text(e, where, "kind"), number(e, where, "value"),
          text(e, where, "feedbackId"), text(e, where, "source"));
      case "result" -> new SessionInput.Result(eventId, at, text(e, where, "status"), text(e, where, "detail"));
      default -> throw new IllegalStateException(type);
    };
  }

  static String text(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isTextual()) throw BadRequest.invalid(where + "." + field + " must be a string");
    String s = v.textValue();
    if (s.indexOf('\u0000') >= 0) throw BadRequest.invalid(where + "." + field + " must not contain NUL characters");
    return s;
  }

  private static Long longValue(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw BadRequest.invalid(where + "." + field + " must be an integer");
    }
    return v.longValue();
  }

  private static Double number(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isNumber()) throw BadRequest.invalid(where + "." + field + " must be a number");
    double d = v.doubleValue();
    if (!Double.isFinite(d)) throw BadRequest.invalid(where + "." + field + " must be a finite number");
    return d;
  }

  private static Boolean bool(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isBoolean()) throw BadRequest.invalid(where + "." + field + " must be true or false");
    return v.booleanValue();
  }

  private static Instant instant(JsonNode e, String where) {
    String s = text(e, where, "at");
    if (s == null) return null;
    try {
      return java.time.OffsetDateTime.parse(s).toInstant();
    } catch (DateTimeParseException ex) {
      throw BadRequest.invalid(where + ".at is '" + s + "'; expected ISO-8601 with an offset, e.g. "
          + "2026-11-20T02:00:00Z");
    }
  }

  private static Map<String, String> stringMap(JsonNode e, String where, String field) {
    JsonNode v = e.get(field);
    if (v == null || v.isNull()) return null;
    if (!v.isObject()) throw BadRequest.invalid(where + "." + field + " must be an object of strings");
    Map<String, String> out = new LinkedHashMap<>();
    var it = v.fields();
    while (it.hasNext()) {
      var f = it.next();
      if (!f.getValue().isTextual()) {
        throw BadRequest.invalid(where + "." + field + "." + f.getKey() + " must be a string");
      }
      out.put(f.getKey(), f.getValue().textValue());
    }
    return out;
  }
}
