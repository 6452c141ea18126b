package io.otl.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The wire format of an event object as both edges (HTTP bodies, Kafka records) read it: what each
 * type becomes, and that a bad object is refused with a message naming the field, never echoing
 * its value.
 */
class EventJsonTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(String s) throws Exception {
    return JSON.readTree(s);
  }

  private static String refusal(String event) throws Exception {
    return assertThrows(InvalidEventException.class, () -> EventJson.parse(json(event), "events[2]")).getMessage();
  }

  @Test
  void eachTypeBecomesItsSessionInput() throws Exception {
    SessionInput start = EventJson.parse(json("""
        {"type":"start","eventId":"e0","at":"2026-11-20T02:00:00+01:00","modelVersion":"v1",
         "metadata":{"channel":"web"}}"""), "events[0]");
    SessionInput.Start s = (SessionInput.Start) start;
    assertEquals("e0", s.eventId());
    assertEquals(Instant.parse("2026-11-20T01:00:00Z"), s.at());
    assertEquals("v1", s.modelVersion());
    assertEquals(Map.of("channel", "web"), s.metadata());

    SessionInput.Message m = (SessionInput.Message) EventJson.parse(json("""
        {"type":"message","role":"assistant","content":"hi","msgId":"r1","latencyMs":700}"""), "events[1]");
    assertEquals("assistant", m.role());
    assertEquals("r1", m.msgId());
    assertEquals(700L, m.latencyMs());
    assertNull(m.eventId(), "an event without eventId gets its id from the session");

    SessionInput.ToolCall t = (SessionInput.ToolCall) EventJson.parse(json("""
        {"type":"tool_call","callId":"c1","toolName":"lookup","input":{"q":1},"output":{"ok":true},"success":true}"""),
        "events[2]");
    assertEquals("lookup", t.toolName());
    assertEquals(1, t.input().get("q").intValue());
    assertTrue(t.success());

    SessionInput.Feedback f = (SessionInput.Feedback) EventJson.parse(json("""
        {"type":"feedback","kind":"RATING","value":4.5,"msgId":"r1"}"""), "events[3]");
    assertEquals(4.5, f.value());
    assertEquals("r1", f.msgId());

    SessionInput.Reasoning r = (SessionInput.Reasoning) EventJson.parse(json("""
        {"type":"reasoning","index":2,"thought":"look it up"}"""), "events[4]");
    assertEquals(2, r.index());

    SessionInput.Result res = (SessionInput.Result) EventJson.parse(json("""
        {"type":"result","status":"SUCCESS","detail":"ok"}"""), "events[5]");
    assertEquals("SUCCESS", res.status());
  }

  @Test
  void aBadEventIsRefusedNamingTheFieldWithoutItsValue() throws Exception {
    assertEquals("events[2] must be a JSON object", refusal("[1]"));
    // The types in the design's order, as the unknown-type refusal lists them (a set printed them shuffled).
    assertEquals("events[2].type is required: one of start, message, tool_call, reasoning, feedback, result",
        refusal("{\"role\":\"user\"}"));
    assertEquals("events[2].type is not one of the allowed: start, message, tool_call, reasoning, feedback, result",
        refusal("{\"type\":\"chat\"}"));
    String unknown = refusal("{\"type\":\"message\",\"role\":\"user\",\"secret\":\"a@b.cn\"}");
    assertTrue(unknown.startsWith("events[2].secret is not a field of a message event"), unknown);
    assertTrue(!unknown.contains("a@b.cn"), "the refusal never repeats a value: " + unknown);
    assertEquals("events[2].latencyMs must be an integer",
        refusal("{\"type\":\"message\",\"role\":\"user\",\"latencyMs\":1.5}"));
    assertEquals("events[2].content must be a string", refusal("{\"type\":\"message\",\"content\":7}"));
    assertEquals("events[2].content must not contain NUL characters",
        refusal("{\"type\":\"message\",\"content\":\"a\\u0000b\"}"));
    assertEquals("events[2].success must be true or false",
        refusal("{\"type\":\"tool_call\",\"success\":\"yes\"}"));
    assertEquals("events[2].at is not ISO-8601 with an offset, e.g. 2026-11-20T02:00:00Z",
        refusal("{\"type\":\"result\",\"at\":\"2026-11-20 02:00\"}"));
    assertEquals("events[2].at is outside the years 1970-9999 (UTC); send the event's real time or omit at",
        refusal("{\"type\":\"result\",\"at\":\"1969-12-31T23:59:59Z\"}"));
    // The year is judged in UTC, as the time is stored, and as the embedding API judges it.
    assertEquals("events[2].at is outside the years 1970-9999 (UTC); send the event's real time or omit at",
        refusal("{\"type\":\"result\",\"at\":\"9999-12-31T23:00:00-05:00\"}"));
    assertEquals("events[2].at is outside the years 1970-9999 (UTC); send the event's real time or omit at",
        refusal("{\"type\":\"result\",\"at\":\"1970-01-01T00:30:00+01:00\"}"));
    assertEquals("events[2].index is too large: at most 2147483647", refusal("{\"type\":\"reasoning\",\"index\":3000000000}"));
  }

  @Test
  void documentsPastTheLimitsAreNamedByPath() throws Exception {
    assertNull(JsonLimits.problem(json("{\"a\":{\"b\":[1,\"x\"]}}"), "body", 3));
    JsonLimits.Problem deep = JsonLimits.problem(json("{\"a\":{\"b\":{\"c\":{}}}}"), "body", 3);
    assertTrue(deep.tooDeep());
    assertEquals("body.a.b.c is nested 4 levels deep; at most 3 are accepted", deep.message());
    JsonLimits.Problem nul = JsonLimits.problem(json("{\"a\":[\"ok\",\"x\\u0000\"]}"), "body", 32);
    assertEquals("body.a[1] contains a NUL character (\\u0000)", nul.message());
    JsonLimits.Problem lone = JsonLimits.problem(json("{\"t\":\"\\ud800\"}"), "body", 32);
    assertTrue(lone.message().startsWith("body.t contains a lone UTF-16 surrogate"), lone.message());
    JsonLimits.Problem key = JsonLimits.problem(json("{\"a@b.cn\":{\"k\":\"\\u0000\"}}"), "body", 32);
    assertEquals("body.*.k contains a NUL character (\\u0000)", key.message(), "a key that may be PII is not echoed");
  }

  @Test
  void anUnknownFeedbackKindIsNamedBeforeItsValue() throws Exception {
    // the value's type depends on the kind: "value must be a number" sent users fixing the wrong field
    String refused = refusal("""
        {"type":"feedback","kind":"LIKE","value":{"stars":5}}""");
    assertTrue(refused.startsWith("events[2].kind is not one of the allowed: THUMBS_UP,"), refused);
    assertTrue(refusal("""
        {"type":"feedback","kind":"RATING","value":"five"}""").equals("events[2].value must be a number"));
    SessionInput.Feedback alias = (SessionInput.Feedback) EventJson.parse(json("""
        {"type":"feedback","kind":"positive"}"""), "events[0]");
    assertEquals("positive", alias.kind(), "an AgentScope alias passes; the entity stores the canonical kind");
  }

  /** latencyMs 2^70 was refused as "must be an integer": it is one, too large for the field (trial t9). */
  @Test
  void anIntegerPastItsFieldsRangeIsCalledTooLarge() throws Exception {
    assertEquals("events[2].latencyMs is too large: at most 9223372036854775807", refusal("""
        {"type":"message","role":"user","content":"x","latencyMs":1180591620717411303424}"""));
    assertEquals("events[2].index is too large: at most 2147483647", refusal("""
        {"type":"reasoning","index":1099511627776}"""));
    assertEquals("events[2].index is too large: at most 2147483647", refusal("""
        {"type":"reasoning","index":1180591620717411303424}"""));
    assertEquals("events[2].latencyMs must be an integer", refusal("""
        {"type":"message","role":"user","content":"x","latencyMs":1.5}"""));
  }
}
