package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Derived ids are pinned: these inputs have had these ids since 0.2.0, and must keep them across
 * JDK and Jackson upgrades (a retry after an upgrade must find the id it stored before).
 */
class DerivedEventIdsTest {
  private static final Desensitizer DEFAULT_RULES = new Desensitizer(true, Desensitizer.BUILT_IN, java.util.List.of());

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final SessionInput.Message MESSAGE =
      new SessionInput.Message(null, null, "user", "How do I reset my password?", "msg-1", null);

  @Test
  void theCanonicalTextIsSortedCompactAndLeavesNullsOut() throws Exception {
    assertEquals("message:{\"content\":\"How do I reset my password?\",\"msgId\":\"msg-1\",\"role\":\"user\"}",
        DerivedEventIds.canonical(MESSAGE));
    SessionInput.ToolCall call = new SessionInput.ToolCall(null, Instant.parse("2026-01-01T00:00:03.500Z"), "c1",
        "kb.search", JSON.readTree("{\"q\":\"a\\\"b\\n\",\"limit\":3.0,\"w\":0.1,\"x\":null}"),
        JSON.readTree("[1e2,-0.0,true]"), true, 85L);
    assertEquals("tool_call:{\"at\":\"2026-01-01T00:00:03.500Z\",\"callId\":\"c1\",\"input\":{\"limit\":3,"
        + "\"q\":\"a\\\"b\\u000a\",\"w\":0.1000000000000000055511151231257827021181583404541015625},"
        + "\"latencyMs\":85,\"output\":[100,0,true],\"success\":true,\"toolName\":\"kb.search\"}",
        DerivedEventIds.canonical(call));
  }

  /**
   * Each id is the first 16 bytes of SHA-256 over the canonical text, checked outside Java too:
   * {@code printf '%s' 'message:{"content":"How do I reset my password?","msgId":"msg-1","role":"user"}'
   * | sha256sum | cut -c1-32}.
   */
  @Test
  void knownInputsHaveKnownIds() throws Exception {
    assertEquals("d2:84ae2e6cedf9770db6e53acc28b6e2b8", DerivedEventIds.of(MESSAGE));
    assertEquals("d2:d70e1fa729d5d6a448ee1a37595424a4", DerivedEventIds.of(
        new SessionInput.Result(null, Instant.parse("2026-01-01T00:00:06Z"), "SUCCESS", "resolved")));
    assertEquals("d2:c7d5c669bc9d1e8a2b87bfed3a61fb5f", DerivedEventIds.of(
        new SessionInput.Start(null, null, "1.4.2", "v1", Map.of("channel", "web", "locale", "en"))));
    assertEquals("feedback:fb-2", DerivedEventIds.of(
        new SessionInput.Feedback(null, null, "RATING", 4.0, "fb-2", "survey")));
  }

  @Test
  void keyOrderAndNumberSpellingDoNotChangeTheId() throws Exception {
    SessionInput a = new SessionInput.ToolCall(null, null, null, "t", JSON.readTree("{\"a\":1,\"b\":[2.50,3]}"),
        null, null, null);
    SessionInput b = new SessionInput.ToolCall(null, null, null, "t", JSON.readTree("{\"b\":[2.5,3.0],\"a\":1.0}"),
        null, null, null);
    assertEquals(DerivedEventIds.of(a), DerivedEventIds.of(b));
    Map<String, String> m1 = new LinkedHashMap<>();
    m1.put("x", "1");
    m1.put("y", "2");
    Map<String, String> m2 = new LinkedHashMap<>();
    m2.put("y", "2");
    m2.put("x", "1");
    assertEquals(DerivedEventIds.of(new SessionInput.Start(null, null, null, null, m1)),
        DerivedEventIds.of(new SessionInput.Start(null, null, null, null, m2)));
  }

  @Test
  void differentInputsGetDifferentIds() {
    assertNotEquals(DerivedEventIds.of(MESSAGE), DerivedEventIds.of(
        new SessionInput.Message(null, null, "user", "How do I reset my password", "msg-1", null)));
    // same fields, another input type
    assertNotEquals(DerivedEventIds.of(new SessionInput.Result(null, null, null, "x")),
        DerivedEventIds.of(new SessionInput.Message(null, null, null, null, null, null)));
  }

  @Test
  void anIdStoredByRelease010IsRecognised() {
    // the id the golden journal v0.1.0 holds for MESSAGE (persistence/src/test/resources/golden)
    assertEquals("d:b358117719ff9ac9b67ee8d5bb972f6e", DerivedEventIds.legacy(MESSAGE));
    assertTrue(DerivedEventIds.seenBefore(Set.of("d:b358117719ff9ac9b67ee8d5bb972f6e"), MESSAGE, true, DEFAULT_RULES));
    assertFalse(DerivedEventIds.seenBefore(Set.of("d:b358117719ff9ac9b67ee8d5bb972f6e"), MESSAGE, false, DEFAULT_RULES));
    assertFalse(DerivedEventIds.seenBefore(Set.of(), MESSAGE, true, DEFAULT_RULES));
  }

  /**
   * 0.1.0's rendering of a feedback without feedbackId, checked outside Java: {@code printf '%s'
   * 'Feedback[eventId=null, at=null, kind=RATING, value=4.0, feedbackId=null, source=survey]' |
   * sha256sum | cut -c1-32}.
   */
  @Test
  void release010FeedbackIdsAreRecognisedAndNewerShapesNeverMatchThem() {
    SessionInput.Feedback rating = new SessionInput.Feedback(null, null, "RATING", 4.0, null, "survey");
    assertEquals("d:4193eff550d19ced12abc04394f19e9e", DerivedEventIds.legacy(rating));
    assertEquals("feedback:fb-2",
        DerivedEventIds.legacy(new SessionInput.Feedback(null, null, "RATING", 4.0, "fb-2", "survey")));
    // A per-turn msgId or the gateway's inference did not exist in 0.1.0: no 0.1.0 id can match them.
    SessionInput.Feedback withMsgId = new SessionInput.Feedback(null, null, "RATING", 4.0, null, "survey", "m-1");
    assertNotEquals(DerivedEventIds.legacy(rating), DerivedEventIds.legacy(withMsgId));
    SessionInput.Message withInference = new SessionInput.Message(null, null, "user",
        "How do I reset my password?", "msg-1", null, new InferenceCall("v1", null, null, null, null, null, null,
            null, null, null, null));
    assertNotEquals(DerivedEventIds.legacy(MESSAGE), DerivedEventIds.legacy(withInference));
    // An input with its own eventId was never given a derived id.
    SessionInput.Message withId = new SessionInput.Message("e-1", null, "user", "How do I reset my password?",
        "msg-1", null);
    assertFalse(DerivedEventIds.seenBefore(Set.of(DerivedEventIds.legacy(withId)), withId, true, DEFAULT_RULES));
  }

  /**
   * Inputs whose shape 0.1.0 already had render as their record's {@code toString()}, checked outside
   * Java: {@code printf '%s' 'Result[eventId=null, at=null, status=SUCCESS, detail=ok]' | sha256sum | cut -c1-32}.
   */
  @Test
  void release010IdsOfOtherInputsHashTheirRecordText() {
    assertEquals("d:926d2ab5804a50cf63754c66ecba05f4",
        DerivedEventIds.legacy(new SessionInput.Result(null, null, "SUCCESS", "ok")));
  }
  /**
   * A tool call's 0.1.0 id hashed its record's text, which had no {@code truncated} component: today's
   * record text ends {@code , truncated=null]}, so a retry of a 0.1.0 tool call after the upgrade was
   * stored twice. Ids computed by 0.1.0's records (and checked outside Java: {@code printf '%s'
   * 'ToolCall[eventId=null, at=2026-01-01T00:00:03.500Z, callId=c1, toolName=kb.search, input={"q":"reset
   * password","limit":3}, output={"hits":["kb-12"]}, success=true, latencyMs=85]' | sha256sum | cut -c1-32}).
   */
  @Test
  void release010IdsOfEveryKindAreComputedAs010Did() throws Exception {
    SessionInput.ToolCall call = new SessionInput.ToolCall(null, Instant.parse("2026-01-01T00:00:03.500Z"), "c1",
        "kb.search", JSON.readTree("{\"q\":\"reset password\",\"limit\":3}"), JSON.readTree("{\"hits\":[\"kb-12\"]}"),
        true, 85L);
    assertEquals("d:412bd5f0c838266f47265adb8081da38", DerivedEventIds.legacy(call));
    assertTrue(DerivedEventIds.seenBefore(Set.of("d:412bd5f0c838266f47265adb8081da38"), call, true, DEFAULT_RULES));
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put("channel", "web");
    metadata.put("locale", "en");
    assertEquals("d:510ed844e19f056550f3535d24f1794e",
        DerivedEventIds.legacy(new SessionInput.Start(null, null, "1.4.2", "v1", metadata)));
    assertEquals("d:cc7df2e4e35ce7192b461bd548c0256a", DerivedEventIds.legacy(
        new SessionInput.Reasoning(null, null, 2, "look up the article", "kb.search", null)));
    // A call the gateway cut did not exist in 0.1.0: it never matches a 0.1.0 id.
    SessionInput.ToolCall cut = new SessionInput.ToolCall(null, call.at(), "c1", "kb.search", call.input(),
        call.output(), true, 85L, Map.of("output", 90_000));
    assertNotEquals(DerivedEventIds.legacy(call), DerivedEventIds.legacy(cut));
    // Today's ids of the same inputs are unchanged (d2:, canonical JSON).
    assertEquals("d2:", DerivedEventIds.of(call).substring(0, 3));
  }

  /**
   * An input with personal data gets its id from the text as stored ({@code d3:}), checked outside
   * Java: {@code printf '%s' 'message:{"content":"call me on [PHONE]","role":"user"}' | sha256sum}.
   * Its id over the text as sent (57d40e0f…, what was stored before) is still recognised as a retry.
   */
  @Test
  void anInputWithPersonalDataIsIdentifiedByItsStoredText() {
    Desensitizer d = Desensitizer.builtInScanner();
    SessionInput.Message phone = new SessionInput.Message(null, null, "user", "call me on 13812345678", null, null);
    assertEquals("d3:75c37d5d1fafcc2050c8998ea2d194da", DerivedEventIds.of(phone, d));
    assertEquals("d2:57d40e0fea872d72fddf01f880369939", DerivedEventIds.of(phone), "the id as sent, as before");
    assertEquals(DerivedEventIds.of(MESSAGE), DerivedEventIds.of(MESSAGE, d), "no personal data: the d2 id as before");
    assertEquals(DerivedEventIds.of(MESSAGE), DerivedEventIds.of(MESSAGE, new Desensitizer(false, java.util.List.of(),
        java.util.List.of())), "desensitizing off: the text is stored as sent");
    assertTrue(DerivedEventIds.seenBefore(Set.of("d2:57d40e0fea872d72fddf01f880369939"), phone, true, DEFAULT_RULES));
    assertFalse(DerivedEventIds.seenBefore(Set.of("d2:57d40e0fea872d72fddf01f880369939"), phone, false, DEFAULT_RULES),
        "a new session holds no id of an earlier build");
  }

  /**
   * docs/data-hardening.md "Changing the rules": stored under the default rules ({@code d3:}), retried after
   * the operator left the phone rule out (the retry's own id is then its {@code d2:} id as sent).
   */
  @Test
  void aRetryAfterARuleWasLeftOutIsKnownByItsIdUnderTheDefaultRules() {
    SessionInput.Message phone = new SessionInput.Message(null, null, "user", "call me on 13812345678", null, null);
    Desensitizer narrowed = new Desensitizer(true, java.util.List.of("email"), java.util.List.of());
    assertEquals("d2:57d40e0fea872d72fddf01f880369939", DerivedEventIds.of(phone, narrowed), "the retry's own id");
    assertTrue(DerivedEventIds.seenBefore(Set.of("d3:75c37d5d1fafcc2050c8998ea2d194da"), phone, true, narrowed));
    assertFalse(DerivedEventIds.seenBefore(Set.of("d3:75c37d5d1fafcc2050c8998ea2d194da"), phone, false, narrowed));
    // Under the default rules that id is the input's own, checked before seenBefore is asked.
    assertTrue(DEFAULT_RULES.isBuiltInScanner());
    assertEquals("d3:75c37d5d1fafcc2050c8998ea2d194da", DerivedEventIds.of(phone, DEFAULT_RULES));
  }
}
