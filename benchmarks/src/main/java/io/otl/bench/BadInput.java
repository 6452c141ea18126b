package io.otl.bench;

import java.nio.charset.StandardCharsets;

/**
 * Generated malformed requests for R3. Kinds cycle with the request number; half of them aim at
 * sessions that exist (r3-ok-*, which must not change), half at sessions that must never exist
 * (r3-bad-*). Kinds that would be valid against an existing session (a missing agentId) or against a
 * new one (another agent) only aim where they are wrong.
 */
final class BadInput {
  private BadInput() {}

  record Request(String kind, String method, String path, byte[] body) {}

  private static final String MSG = "{\"type\":\"message\",\"eventId\":\"x\",\"role\":\"user\",\"content\":\"hi\"}";
  private static final String[] KINDS = {
    "invalid-json", "empty-body", "json-array", "events-not-array", "events-empty", "unknown-type", "unknown-role",
    "content-not-string", "text-too-long", "too-many-events", "body-over-1MiB", "agent-id-chars", "agent-id-too-long",
    "result-status", "feedback-kind", "rating-out-of-range", "rate-score-11", "thumbs-not-boolean", "session-id-chars",
    "session-id-too-long", "invalid-utf8", "nesting-too-deep", "at-not-iso", "unknown-field", "success-not-boolean",
    "negative-latency", "wrong-method", "atomic-batch-with-one-bad", "missing-agent-new-session",
    "other-agent-existing-session", "feedback-unknown-session",
    // Lax JSON (issue #14.7) and the ingest nesting limit (#14.6).
    "trailing-garbage", "two-documents", "duplicate-key", "nul-escape", "lone-surrogate", "number-overflow",
    "year-out-of-range", "nesting-33"
  };

  /** The i-th bad request. */
  static Request request(int i, int okSessions) {
    String kind = KINDS[i % KINDS.length];
    boolean existing = (i / KINDS.length) % 2 == 0;
    if (kind.equals("missing-agent-new-session") || kind.equals("feedback-unknown-session")) existing = false;
    if (kind.equals("other-agent-existing-session")) existing = true;
    String sid = existing ? "r3-ok-" + (i % okSessions) : "r3-bad-" + (i % 500);
    String events = "/v1/sessions/" + sid + "/events";
    String agent = "\"agentId\":\"rel-agent\"";
    return switch (kind) {
      case "invalid-json" -> post(kind, events, "{\"agentId\":\"rel-agent\",\"events\":[" + MSG);
      case "empty-body" -> new Request(kind, "POST", events, new byte[0]);
      case "json-array" -> post(kind, events, "[" + MSG + "]");
      case "events-not-array" -> post(kind, events, "{" + agent + ",\"events\":" + MSG + "}");
      case "events-empty" -> post(kind, events, "{" + agent + ",\"events\":[]}");
      case "unknown-type" -> post(kind, events, "{" + agent + ",\"events\":[{\"type\":\"bogus\",\"eventId\":\"b\"}]}");
      case "unknown-role" -> post(kind, events, batch(agent, MSG.replace("\"user\"", "\"robot\"")));
      case "content-not-string" -> post(kind, events, batch(agent, MSG.replace("\"hi\"", "{\"a\":1}")));
      case "text-too-long" -> post(kind, events, batch(agent, MSG.replace("\"hi\"", "\"" + "x".repeat(70_000) + "\"")));
      case "too-many-events" -> {
        StringBuilder sb = new StringBuilder("{" + agent + ",\"events\":[");
        for (int k = 0; k < 1001; k++) sb.append(k == 0 ? "" : ",").append(MSG.replace("\"x\"", "\"m" + k + "\""));
        yield post(kind, events, sb.append("]}").toString());
      }
      case "body-over-1MiB" -> post(kind, events, batch(agent, MSG.replace("\"hi\"",
          "\"" + "y".repeat(1_100_000) + "\"")));
      case "agent-id-chars" -> post(kind, events, batch("\"agentId\":\"bad agent!\"", MSG));
      case "agent-id-too-long" -> post(kind, events, batch("\"agentId\":\"" + "a".repeat(65) + "\"", MSG));
      case "result-status" -> post(kind, events, batch(agent,
          "{\"type\":\"result\",\"eventId\":\"r\",\"status\":\"MAYBE\"}"));
      case "feedback-kind" -> post(kind, "/v1/sessions/" + sid + "/feedback",
          "{\"kind\":\"LOVE\",\"feedbackId\":\"f" + i + "\"}");
      case "rating-out-of-range" -> post(kind, "/v1/sessions/" + sid + "/feedback",
          "{\"kind\":\"RATING\",\"value\":7,\"feedbackId\":\"f" + i + "\"}");
      case "rate-score-11" -> post(kind, "/v1/feedback/rate?sessionId=" + sid + "&score=11", null);
      case "thumbs-not-boolean" -> post(kind, "/v1/feedback/thumbs?sessionId=" + sid + "&helpful=maybe", null);
      case "session-id-chars" -> post(kind, "/v1/sessions/r3-bad%24" + (i % 500) + "/events", batch(agent, MSG));
      case "session-id-too-long" -> post(kind, "/v1/sessions/r3-bad-" + "z".repeat(130) + "/events", batch(agent, MSG));
      case "invalid-utf8" -> {
        byte[] head = ("{" + agent + ",\"events\":[{\"type\":\"message\",\"eventId\":\"u\",\"role\":\"user\",\"content\":\"")
            .getBytes(StandardCharsets.UTF_8);
        byte[] tail = "\"}]}".getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[head.length + 3 + tail.length];
        System.arraycopy(head, 0, body, 0, head.length);
        body[head.length] = (byte) 0xC3;
        body[head.length + 1] = (byte) 0x28;
        body[head.length + 2] = (byte) 0xFF;
        System.arraycopy(tail, 0, body, head.length + 3, tail.length);
        yield new Request(kind, "POST", events, body);
      }
      case "nesting-too-deep" -> post(kind, events, batch(agent,
          "{\"type\":\"tool_call\",\"eventId\":\"t\",\"callId\":\"c\",\"toolName\":\"t\",\"success\":true,\"input\":"
              + "[".repeat(5000) + "]".repeat(5000) + ",\"output\":{}}"));
      case "at-not-iso" -> post(kind, events, batch(agent, MSG.replace("\"eventId\":\"x\"",
          "\"eventId\":\"x\",\"at\":\"yesterday\"")));
      case "unknown-field" -> post(kind, events, batch(agent, MSG.replace("\"content\"", "\"contnet\"")));
      case "success-not-boolean" -> post(kind, events, batch(agent,
          "{\"type\":\"tool_call\",\"eventId\":\"t\",\"callId\":\"c\",\"toolName\":\"t\",\"success\":\"yes\","
              + "\"input\":{},\"output\":{}}"));
      case "negative-latency" -> post(kind, events, batch(agent,
          "{\"type\":\"message\",\"eventId\":\"n\",\"role\":\"assistant\",\"content\":\"a\",\"latencyMs\":-5}"));
      case "wrong-method" -> new Request(kind, "PUT", events, batch(agent, MSG).getBytes(StandardCharsets.UTF_8));
      case "atomic-batch-with-one-bad" -> post(kind, events, batch(agent,
          MSG.replace("\"x\"", "\"ok" + i + "\"") + "," + MSG.replace("\"user\"", "\"robot\"")));
      case "missing-agent-new-session" -> post(kind, events, "{\"events\":[" + MSG + "]}");
      case "other-agent-existing-session" -> post(kind, events, batch("\"agentId\":\"someone-else\"",
          MSG.replace("\"x\"", "\"o" + i + "\"")));
      case "feedback-unknown-session" -> post(kind, "/v1/sessions/" + sid + "/feedback",
          "{\"kind\":\"THUMBS_UP\",\"feedbackId\":\"f" + i + "\"}");
      case "trailing-garbage" -> post(kind, events, batch(agent, MSG.replace("\"x\"", "\"tg" + i + "\"")) + "x");
      case "two-documents" -> {
        String doc = batch(agent, MSG.replace("\"x\"", "\"td" + i + "\""));
        yield post(kind, events, doc + doc);
      }
      case "duplicate-key" -> post(kind, events, batch(agent,
          MSG.replace("\"x\"", "\"dk" + i + "\"").replace("\"content\":\"hi\"", "\"content\":\"a\",\"content\":\"b\"")));
      case "nul-escape" -> post(kind, events, batch(agent,
          MSG.replace("\"x\"", "\"nu" + i + "\"").replace("\"hi\"", "\"h\\u0000i\"")));
      case "lone-surrogate" -> post(kind, events, batch(agent,
          MSG.replace("\"x\"", "\"ls" + i + "\"").replace("\"hi\"", "\"h\\ud800i\"")));
      case "number-overflow" -> post(kind, events, batch(agent,
          "{\"type\":\"tool_call\",\"eventId\":\"no" + i + "\",\"callId\":\"c\",\"toolName\":\"t\",\"success\":true,"
              + "\"input\":{\"num\":1e999},\"output\":{}}"));
      case "year-out-of-range" -> post(kind, events, batch(agent, MSG.replace("\"eventId\":\"x\"",
          "\"eventId\":\"yr" + i + "\",\"at\":\"+1000000000-01-01T00:00:00Z\"")));
      case "nesting-33" -> post(kind, events, batch(agent,
          "{\"type\":\"tool_call\",\"eventId\":\"d" + i + "\",\"callId\":\"c\",\"toolName\":\"t\",\"success\":true,\"input\":"
              + "{\"a\":".repeat(30) + "1" + "}".repeat(30) + ",\"output\":{}}"));
      default -> throw new IllegalStateException(kind);
    };
  }

  /** A valid request: two messages; {@code v < 0} is the session's first request. */
  static String valid(String sid, int v) {
    String k = v < 0 ? "init" : "v" + v;
    return "{\"agentId\":\"rel-agent\",\"events\":["
        + "{\"type\":\"message\",\"eventId\":\"" + k + "q\",\"role\":\"user\",\"content\":\"question " + k + "\"},"
        + "{\"type\":\"message\",\"eventId\":\"" + k + "a\",\"role\":\"assistant\",\"content\":\"answer\",\"latencyMs\":100}]}";
  }

  private static String batch(String agentField, String events) {
    return "{" + agentField + ",\"events\":[" + events + "]}";
  }

  private static Request post(String kind, String path, String body) {
    return new Request(kind, "POST", path, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
  }
}
