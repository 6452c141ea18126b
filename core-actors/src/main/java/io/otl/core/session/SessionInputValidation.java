package io.otl.core.session;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.Ids;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import java.util.Map;

/** The checks {@link AgentSession} makes on each input before it stores anything (a 400 otherwise). */
final class SessionInputValidation {
  private final int maxTextLength;

  SessionInputValidation(int maxTextLength) {
    this.maxTextLength = maxTextLength;
  }

  /** Why the input cannot be stored, as a suffix of "events[i]" (".field is ..."), or null. */
  String problem(SessionInput input) {
    if (input == null) return " is null";
    String eventIdProblem = input.eventId() == null ? null : Ids.problem(".eventId", input.eventId(), 128);
    if (eventIdProblem != null) return eventIdProblem;
    if (input instanceof SessionInput.Start s) {
      if (s.metadata() != null) {
        int i = 0;
        // Keys may be PII: the field is named by position, never by key.
        for (Map.Entry<String, String> e : s.metadata().entrySet()) {
          String p = firstProblem(tooLong(".metadata key #" + i, e.getKey()), tooLong(".metadata value #" + i, e.getValue()));
          if (p != null) return p;
          i++;
        }
      }
      return firstProblem(tooLong(".agentVersion", s.agentVersion()), tooLong(".modelVersion", s.modelVersion()));
    } else if (input instanceof SessionInput.Message m) {
      if (m.role() == null) return ".role is required: system, user, assistant or tool";
      if (Role.parse(m.role()) == null) return ".role is not one of the allowed: system, user, assistant, tool";
      if (m.content() == null) return ".content is required";
      String latency = latencyProblem(m.latencyMs());
      if (latency != null) return latency;
      return firstProblem(cutProblem(m.truncated(), "content"), tooLong(".content", m.content()),
          tooLong(".msgId", m.msgId()));
    } else if (input instanceof SessionInput.ToolCall t) {
      if (t.toolName() == null || t.toolName().isBlank()) return ".toolName is required";
      String latency = latencyProblem(t.latencyMs());
      if (latency != null) return latency;
      return firstProblem(cutProblem(t.truncated(), "input", "output"), tooLong(".toolName", t.toolName()),
          tooLong(".callId", t.callId()),
          tooLong(".input", t.input()), tooLong(".output", t.output()));
    } else if (input instanceof SessionInput.ToolResult t) {
      if (t.eventId() == null || t.callEventId() == null) return ".eventId and .callEventId are required";
      String latency = latencyProblem(t.latencyMs());
      if (latency != null) return latency;
      return firstProblem(cutProblem(t.truncated(), "output"), tooLong(".output", t.output()));
    } else if (input instanceof SessionInput.Reasoning r) {
      if (r.index() != null && r.index() < 0) return ".index must not be negative";
      return firstProblem(tooLong(".thought", r.thought()), tooLong(".action", r.action()),
          tooLong(".observation", r.observation()));
    } else if (input instanceof SessionInput.Feedback f) {
      FeedbackKind kind = FeedbackKind.parse(f.kind());
      if (kind == null) {
        return ".kind" + FeedbackKindAliases.UNKNOWN_KIND;
      }
      String valueProblem = valueProblem(kind, f.value());
      if (valueProblem != null) return valueProblem;
      String idProblem = f.feedbackId() == null ? null : Ids.problem(".feedbackId", f.feedbackId(), 128);
      return firstProblem(idProblem, tooLong(".source", f.source()), tooLong(".msgId", f.msgId()));
    } else if (input instanceof SessionInput.Result r) {
      if (r.status() == null) return ".status is required: SUCCESS, FAILURE or TIMEOUT";
      if (TaskStatus.parse(r.status()) == null) {
        return ".status is not one of the allowed: SUCCESS, FAILURE, TIMEOUT";
      }
      return tooLong(".detail", r.detail());
    }
    return " has an unknown type";
  }

  private static String latencyProblem(Long latencyMs) {
    if (latencyMs == null) return null;
    if (latencyMs < 0) return ".latencyMs must not be negative";
    if (latencyMs > SessionModel.MAX_LATENCY_MS) {
      return ".latencyMs is too large: at most " + SessionModel.MAX_LATENCY_MS + " (24 hours; latencyMs is one call's duration in"
          + " milliseconds)";
    }
    return null;
  }

  /**
   * A RATING's value is an integer from 1 to 5. The other kinds take none (design §3.1.1): a value sent
   * with them is accepted and not stored (clients send 1 with a thumb up, -1 with a thumb down), unless it
   * says the opposite of the kind. THUMBS_UP with -1 was stored as a thumb up without a word, so a client
   * that meant "down" rewarded the answer it disliked.
   */
  private static String valueProblem(FeedbackKind kind, Double value) {
    if (kind == FeedbackKind.RATING) {
      if (value == null) return ".value is required for a RATING (an integer from 1 to 5)";
      double v = value;
      if (v != Math.rint(v)) return ".value must be a whole number for a RATING (an integer from 1 to 5)";
      if (v < 1 || v > 5) return ".value is out of range: a RATING is an integer from 1 to 5";
      return null;
    }
    if (value == null) return null;
    if (kind == FeedbackKind.THUMBS_UP && value < 0) {
      return ".value is negative, which contradicts kind THUMBS_UP: send THUMBS_DOWN, or no value"
          + " (a thumb takes none; a positive value or 0 is accepted and not stored)";
    }
    if (kind == FeedbackKind.THUMBS_DOWN && value > 0) {
      return ".value is positive, which contradicts kind THUMBS_DOWN: send THUMBS_UP, or no value"
          + " (a thumb takes none; a negative value or 0 is accepted and not stored)";
    }
    return null;
  }

  /** The gateway's marker of cut fields: only the named fields, each with the length it had before. */
  private String cutProblem(Map<String, Integer> truncated, String... fields) {
    if (truncated == null) return null;
    for (Map.Entry<String, Integer> e : truncated.entrySet()) {
      if (!java.util.List.of(fields).contains(e.getKey())) {
        return ".truncated names a field that cannot be cut; allowed: " + String.join(", ", fields);
      }
      if (e.getValue() == null || e.getValue() <= maxTextLength) {
        return ".truncated." + e.getKey() + " must be the field's length before the cut, over " + maxTextLength;
      }
    }
    return null;
  }

  private String tooLong(String field, String value) {
    if (value != null && value.length() > maxTextLength) {
      // The limit counts UTF-16 units: 40,000 emoji read "80000 characters long" with nothing saying why.
      String units = value.length() != value.codePointCount(0, value.length())
          ? " (UTF-16 units: an emoji or another character outside the BMP counts 2)" : "";
      return field + " is " + value.length() + " characters long" + units + "; at most " + maxTextLength
          + " are allowed (data-collector.max-text-length)";
    }
    return null;
  }

  /**
   * As for text, on the JSON text of the tree. The text is built only when a cheap upper bound of its
   * length exceeds the limit: rendering every tool input and output just to measure it was a visible
   * share of ingestion (W1 profile, benchmarks/BENCHMARKS.md). Same verdict, same message.
   */
  private String tooLong(String field, JsonNode value) {
    if (value == null || jsonLengthAtMost(value, maxTextLength) <= maxTextLength) return null;
    return tooLong(field, value.toString());
  }

  /**
   * An upper bound of {@code node.toString().length()}, or a number above {@code limit} as soon as the
   * bound passes it (or the node is of a kind not bounded here; the caller then renders it).
   */
  static long jsonLengthAtMost(JsonNode node, int limit) {
    long over = limit + 1;
    switch (node.getNodeType()) {
      case STRING:
        // Quotes, and every character escaped at worst as six (backslash-u and four hex digits).
        return 2 + 6L * node.textValue().length();
      case BOOLEAN:
        return 5;
      case NULL:
        return 4;
      case NUMBER:
        if (node.isInt() || node.isLong() || node.isShort()) return node.asText().length();
        if (node.isDouble() || node.isFloat()) return 32; // Double.toString: at most 24 characters
        return over; // BigDecimal/BigInteger: rendering may differ from asText(); render it
      case ARRAY:
      case OBJECT: {
        long total = 2 + Math.max(0, node.size() - 1); // brackets and commas
        if (node.isArray()) {
          for (JsonNode child : node) {
            long length = jsonLengthAtMost(child, limit);
            if (length > limit) return over;
            total += length;
            if (total > limit) return over;
          }
          return total;
        }
        for (var fields = node.fields(); fields.hasNext(); ) {
          var f = fields.next();
          long length = jsonLengthAtMost(f.getValue(), limit);
          if (length > limit) return over;
          total += 3 + 6L * f.getKey().length() + length; // quotes, colon
          if (total > limit) return over;
        }
        return total;
      }
      default:
        return over;
    }
  }

  private static String firstProblem(String... problems) {
    for (String p : problems) if (p != null) return p;
    return null;
  }
}
