package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** What an agent-events record means, decided before anything reaches a session (EventJson included). */
class AgentEventRecordTest {
  private static AgentEventRecord parse(String key, String value) {
    return AgentEventRecord.parse(key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }

  private static AgentEventRecord.Invalid invalid(String key, String value) {
    return assertInstanceOf(AgentEventRecord.Invalid.class, parse(key, value));
  }

  @Test
  void anEventObjectWithSessionAndAgentBecomesASessionInput() {
    var e = assertInstanceOf(AgentEventRecord.Event.class, parse("s-1",
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"eventId\":\"m1\",\"at\":\"2026-11-20T02:00:00Z\","
            + "\"latencyMs\":12,\"sessionId\":\"s-1\",\"agentId\":\"a-1\"}"));
    assertEquals("s-1", e.sessionId());
    assertEquals("a-1", e.agentId());
    assertEquals(new SessionInput.Message("m1", Instant.parse("2026-11-20T02:00:00Z"), "user", "hi", null, 12L),
        e.input());
  }

  @Test
  void theKeyNamesTheSessionWhenTheValueDoesNot() {
    var e = assertInstanceOf(AgentEventRecord.Event.class,
        parse("s-2", "{\"type\":\"result\",\"status\":\"SUCCESS\",\"agentId\":\"a\"}"));
    assertEquals("s-2", e.sessionId());
  }

  @Test
  void laxJsonAndDeepNestingAreRefusedAsOnTheHttpEdge() {
    String tool = "{\"type\":\"tool_call\",\"callId\":\"c\",\"toolName\":\"t\",\"sessionId\":\"s\",\"agentId\":\"a\","
        + "\"output\":{},\"input\":";
    // value(1) > input(2) and 31 objects inside it: 33 levels, one past the limit of 32.
    var deep = invalid("s", tool + "{\"a\":".repeat(32) + "1" + "}".repeat(32) + "}");
    assertEquals(AgentEventRecord.INVALID_EVENT, deep.code());
    assertTrue(deep.reason().startsWith("value.input" + ".a".repeat(31) + " is nested 33 levels"), deep.reason());
    // Past the parser's own 1,000 levels it is still a valid document too deep, not one that is no JSON
    // (it was NOT_JSON "the document is nested more than 1000 levels deep"; review t122).
    var deeper = invalid("s", tool + "{\"a\":".repeat(1200) + "1" + "}".repeat(1200) + "}");
    assertEquals(AgentEventRecord.INVALID_EVENT, deeper.code());
    assertEquals("value is nested more than 32 levels deep; at most 32 are accepted", deeper.reason());
    assertInstanceOf(AgentEventRecord.Event.class, parse("s", tool + "{\"a\":".repeat(31) + "1" + "}".repeat(31) + "}"));
    assertEquals(AgentEventRecord.INVALID_EVENT, invalid("s", tool + "{\"n\":1e999}}").code());
    assertEquals(AgentEventRecord.INVALID_EVENT, invalid("s", tool + "{\"q\":\"\\ud800\"}}").code());
    assertEquals(AgentEventRecord.INVALID_EVENT, invalid("s", tool + "{\"q\":\"a\\u0000\"}}").code());
    assertEquals(AgentEventRecord.NOT_JSON, invalid("s", tool + "{\"q\":1,\"q\":2}}").code());
    assertTrue(invalid("s", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\",\"sessionId\":\"s\","
        + "\"agentId\":\"a\",\"at\":\"+1000000000-01-01T00:00:00Z\"}").reason().contains("value.at"));
  }

  /**
   * Overlong UTF-8 ({@code C0 AF} for '/', {@code C1 80} for '@') was decoded by Jackson and stored as
   * if sent correctly; the HTTP edge refused it, the Kafka edge did not. Both read through one reader.
   */
  @Test
  void overlongUtf8IsRefusedAsOnTheHttpEdge() {
    byte[] head = "{\"type\":\"message\",\"role\":\"user\",\"sessionId\":\"s\",\"agentId\":\"a\",\"content\":\"a"
        .getBytes(StandardCharsets.UTF_8);
    byte[] tail = "b\"}".getBytes(StandardCharsets.UTF_8);
    for (byte[] overlong : new byte[][] {{(byte) 0xC0, (byte) 0xAF}, {(byte) 0xC1, (byte) 0x80}, {(byte) 0xC0, (byte) 0x80}}) {
      byte[] value = new byte[head.length + overlong.length + tail.length];
      System.arraycopy(head, 0, value, 0, head.length);
      System.arraycopy(overlong, 0, value, head.length, overlong.length);
      System.arraycopy(tail, 0, value, head.length + overlong.length, tail.length);
      var refused = assertInstanceOf(AgentEventRecord.Invalid.class, AgentEventRecord.parse("s", value));
      assertEquals(AgentEventRecord.NOT_JSON, refused.code());
      assertTrue(refused.reason().contains("invalid UTF-8"), refused.reason());
    }
    assertInstanceOf(AgentEventRecord.Event.class, parse("s", "{\"type\":\"message\",\"role\":\"user\","
        + "\"sessionId\":\"s\",\"agentId\":\"a\",\"content\":\"caf\u00e9 \u4f60\u597d \ud83d\ude00\"}"));
  }

  @Test
  void everyKindOfBadRecordIsNamedWithItsCodeAndField() {
    assertEquals(AgentEventRecord.NOT_JSON, invalid("k", null).code());
    assertEquals(AgentEventRecord.NOT_JSON, invalid("k", "{\"type\":").code());
    assertEquals(AgentEventRecord.NOT_JSON, invalid("k", "{} trailing").code());
    assertEquals(AgentEventRecord.NOT_AN_OBJECT, invalid("k", "\"just a string\"").code());
    var noSession = invalid(null, "{\"type\":\"message\",\"agentId\":\"a\"}");
    assertEquals(AgentEventRecord.INVALID_SESSION_ID, noSession.code());
    assertTrue(noSession.reason().contains("sessionId"), noSession.reason());
    assertEquals(AgentEventRecord.INVALID_SESSION_ID,
        invalid("bad id", "{\"type\":\"message\",\"agentId\":\"a\"}").code());
    assertEquals(AgentEventRecord.SESSION_MISMATCH,
        invalid("s-1", "{\"type\":\"message\",\"sessionId\":\"s-2\",\"agentId\":\"a\"}").code());
    assertEquals(AgentEventRecord.INVALID_AGENT_ID, invalid("s", "{\"type\":\"message\",\"sessionId\":\"s\"}").code());
    var type = invalid("s", "{\"type\":\"telepathy\",\"sessionId\":\"s\",\"agentId\":\"a\"}");
    assertEquals(AgentEventRecord.INVALID_EVENT, type.code());
    assertEquals("value.type is not one of the allowed: start, message, tool_call, reasoning, feedback, result",
        type.reason());
    var field = invalid("s", "{\"type\":\"message\",\"contnet\":\"x\",\"sessionId\":\"s\",\"agentId\":\"a\"}");
    assertTrue(field.reason().startsWith("value.contnet is not a field of a message event"), field.reason());
    var wrongType = invalid("s", "{\"type\":\"message\",\"latencyMs\":\"fast\",\"sessionId\":\"s\",\"agentId\":\"a\"}");
    assertEquals("value.latencyMs must be an integer", wrongType.reason());
    var at = invalid("s", "{\"type\":\"message\",\"at\":\"yesterday\",\"sessionId\":\"s\",\"agentId\":\"a\"}");
    assertTrue(at.reason().startsWith("value.at is not ISO-8601"), at.reason());
    assertTrue(!at.reason().contains("yesterday") && !type.reason().contains("telepathy"), "values are never echoed");
  }

  /**
   * A reason names the field as the producer sees it: {@code key} for the record key, {@code value.<field>}
   * for a field of the value, {@code value} for the value as a whole. A bad key was named
   * value.sessionId, a field the value did not even have, and the whole value "the value".
   */
  @Test
  void reasonsNameTheKeyAsKeyAndFieldsOfTheValueAsValueDotField() {
    String message = "{\"type\":\"message\",\"agentId\":\"a\"}";
    assertEquals("key may contain only the characters " + io.otl.core.Ids.ID_CHARSET, invalid("bad id", message).reason());
    assertTrue(invalid(null, message).reason().startsWith("value.sessionId is required ("), invalid(null, message).reason());
    assertTrue(invalid(null, message).reason().endsWith("; or give the record a key"), invalid(null, message).reason());
    assertEquals("value.sessionId may contain only the characters " + io.otl.core.Ids.ID_CHARSET,
        invalid(null, "{\"type\":\"message\",\"sessionId\":\"bad id\",\"agentId\":\"a\"}").reason());
    assertTrue(invalid("s", "{\"type\":\"message\",\"sessionId\":\"s\"}").reason().startsWith("value.agentId is required"));
    assertEquals("value is null (a tombstone); expected an event object with sessionId and agentId",
        invalid("s", null).reason());
    // White space alone is no JSON document (RFC 8259): not_json as an empty value, not "not an object".
    assertEquals("value is empty; expected an event object with sessionId and agentId", invalid("s", " \n ").reason());
    assertEquals(AgentEventRecord.NOT_JSON, invalid("s", " \n ").code());
    assertEquals("value must be a JSON object (one event with sessionId and agentId)", invalid("s", "[]").reason());
    // The session's own refusals, as KafkaIngest writes them into the dead letter.
    assertEquals("value.agentId: session s belongs to agent a, not b", KafkaIngest.recordReason(
        new AgentSession.Rejected(AgentSession.RejectionCode.CONFLICT, "agentId", "session s belongs to agent a, not b")));
    assertEquals("value.msgId is not the msgId of a response recorded in session s", KafkaIngest.recordReason(
        new AgentSession.Rejected(AgentSession.RejectionCode.NOT_FOUND, "events[0].msgId",
            "events[0].msgId is not the msgId of a response recorded in session s")));
    assertEquals("value: session s was completed at 2025-01-01T00:00:00Z; only feedback is accepted now, not message",
        KafkaIngest.recordReason(new AgentSession.Rejected(AgentSession.RejectionCode.CONFLICT, "events[0]",
            "session s was completed at 2025-01-01T00:00:00Z; only feedback is accepted now, not message")));
    assertEquals("value.content is 9000 characters long", KafkaIngest.recordReason(new AgentSession.Rejected(
        AgentSession.RejectionCode.INVALID, "events[0].content", "events[0].content is 9000 characters long")));
  }

  /**
   * The reason is the dead letter's otl-error header and a line of the node's log (docs/api.md: "never
   * the value"). A producer that sent plain text got Jackson's own words back, which quote the token
   * ("Unrecognized token 'mobile13890123456'") or the repeated key, and a key that was no session id
   * was quoted whole: raw personal data in the log.
   */
  @Test
  void reasonsQuoteNeitherTheValuesTokensNorAKeyThatIsNoSessionId() {
    var text = invalid("s", "mobile13890123456 called");
    assertEquals(AgentEventRecord.NOT_JSON, text.code());
    assertTrue(text.reason().startsWith("value is not valid JSON: Unrecognized token '*'"), text.reason());
    // A plain word is a value too, such as a name written without quotes (trial t99).
    var name = invalid("s", "{\"type\":\"message\",\"content\": Alice_Smith}");
    assertEquals(AgentEventRecord.NOT_JSON, name.code());
    assertTrue(name.reason().startsWith("value is not valid JSON: Unrecognized token '*'") && !name.reason().contains("Alice"),
        name.reason());
    var repeated = invalid("s", "{\"type\":\"message\",\"jane.doe@example.com\":1,\"jane.doe@example.com\":2}");
    assertEquals(AgentEventRecord.NOT_JSON, repeated.code());
    assertTrue(!repeated.reason().contains("jane") && repeated.reason().contains("'*'"), repeated.reason());
    var plainWord = invalid("s", "{\"type\":\"message\",\"role\":1,\"role\":2}");
    assertTrue(plainWord.reason().contains("'role'"), "a plain word is still named: " + plainWord.reason());
    var phoneKey = invalid("13890123456", "{\"type\":\"message\",\"sessionId\":\"s-2\",\"agentId\":\"a\"}");
    assertEquals(AgentEventRecord.SESSION_MISMATCH, phoneKey.code());
    assertEquals("key (not a valid session id) is not value.sessionId 's-2'", phoneKey.reason());
    var idKey = invalid("s-1", "{\"type\":\"message\",\"sessionId\":\"s-2\",\"agentId\":\"a\"}");
    assertEquals("key 's-1' is not value.sessionId 's-2'", idKey.reason());
  }
  /**
   * Trial t167: a record keyed by an API key (or naming one as its value.sessionId) beside a different
   * session id was dead-lettered {@code session_mismatch} with the key quoted in {@code otl-error} and in
   * the node's INFO line {@code dead-lettering …}. Keys are assembled at run time.
   */
  @Test
  void aMismatchedSessionIdHoldingAnApiKeyIsNotQuoted() {
    String key = "sk-" + "proj-" + "AbCdEf1234567890GhIjKlMnOpQrStUv" + "WxYz0987";
    var keyed = invalid(key, "{\"type\":\"message\",\"sessionId\":\"s-2\",\"agentId\":\"a\"}");
    assertEquals(AgentEventRecord.SESSION_MISMATCH, keyed.code());
    assertTrue(!keyed.reason().contains("AbCdEf1234567890") && keyed.reason().contains("key-like-id-"), keyed.reason());
    var named = invalid("s-1", "{\"type\":\"message\",\"sessionId\":\"" + key + "\",\"agentId\":\"a\"}");
    assertEquals(AgentEventRecord.SESSION_MISMATCH, named.code());
    assertTrue(!named.reason().contains("AbCdEf1234567890") && named.reason().startsWith("key 's-1' is not value.sessionId 'key-like-id-"),
        named.reason());
  }
}
