package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * An SDK's retry of a later turn (the gateway knows the last message it recorded) after a failed or cut-short
 * call: the question asked again by the retry is not another question. Guards alignedCounts' numbering of a
 * message after the last one recorded (trial t110) against taking a retry for a question asked again: the failed
 * or partial attempt stored the question, which is then the last message recorded (review t116).
 */
class TurnRecorderRetryTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());

  private static ChatRequest request(String messages) {
    return ChatRequest.parse(("{\"model\":\"m\",\"messages\":" + messages + "}").getBytes(StandardCharsets.UTF_8));
  }

  private static TurnRecorder.Outcome answer(String content, boolean aborted) throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + content.hashCode() + "\",\"choices\":"
        + "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},\"finish_reason\":\"stop\"}]}"),
        false);
    return new TurnRecorder.Outcome(c, aborted, null, 5, 9);
  }

  private final Set<String> known = new HashSet<>();
  private String last;
  /** The results each turn attached to a call, as callId=output. */
  private final List<String> calls = new java.util.ArrayList<>();
  /** The tool calls stored (awaiting their results): event id → call id. */
  private final java.util.Map<String, String> callIds = new java.util.HashMap<>();

  private List<String> turn(String messages, TurnRecorder.Outcome outcome) {
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, last, request(messages),
        "v1", null, "v1", null, null, outcome, null, null);
    in.forEach(i -> known.add(i.eventId()));
    List<String> ids = in.stream().map(SessionInput::eventId).toList();
    last = TurnRecorder.lastMessage(ids, last);
    for (SessionInput i : in) {
      if (i instanceof SessionInput.ToolCall c) {
        assertEquals(Boolean.TRUE, c.awaitingResult(), "a call is stored as the model made it: " + c);
        callIds.put(c.eventId(), c.callId());
      } else if (i instanceof SessionInput.ToolResult r) {
        // A result is attached to a call the session holds (stored by this turn or an earlier one).
        calls.add(java.util.Objects.requireNonNull(callIds.get(r.callEventId()), r.toString()) + "="
            + r.output().asText());
      }
    }
    return in.stream().filter(i -> i instanceof SessionInput.Message).map(i -> ((SessionInput.Message) i).content())
        .toList();
  }

  private static TurnRecorder.Outcome callOf(String callId) throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + callId + "\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" + call(callId) + "]},"
        + "\"finish_reason\":\"tool_calls\"}]}"), false);
    return new TurnRecorder.Outcome(c, false, null, 5, 9);
  }

  private static String call(String id) {
    return "{\"id\":\"" + id + "\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}";
  }

  private static String assistantCall(String id) {
    return "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" + call(id) + "]}";
  }

  private static String result(String id, String content) {
    return "{\"role\":\"tool\",\"tool_call_id\":\"" + id + "\",\"content\":\"" + content + "\"}";
  }

  private static final String SYS = "{\"role\":\"system\",\"content\":\"be brief\"}";
  private static final String Q1 = "{\"role\":\"user\",\"content\":\"q1\"}";
  private static final String A1 = "{\"role\":\"assistant\",\"content\":\"a1\"}";
  private static final String Q2 = "{\"role\":\"user\",\"content\":\"q2\"}";

  @Test
  void anSdkRetryOfAFailedSecondTurnStoresTheQuestionOnce() throws Exception {
    assertEquals(List.of("be brief", "q1", "a1"), turn("[" + SYS + "," + Q1 + "]", answer("a1", false)));
    TurnRecorder.Outcome failed = new TurnRecorder.Outcome(null, false, "the model server answered HTTP 500", 0, 9);
    String r2 = "[" + SYS + "," + Q1 + "," + A1 + "," + Q2 + "]";
    assertEquals(List.of("q2", ""), turn(r2, failed), "first attempt: the question and a failed answer");
    assertEquals(List.of(""), turn(r2, failed), "the SDK's retry: another failed answer, the question once");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the SDK's last retry: the answer");
  }

  @Test
  void aRetryAfterAnAnswerCutShortStoresTheQuestionOnce() throws Exception {
    assertEquals(List.of("be brief", "q1", "a1"), turn("[" + SYS + "," + Q1 + "]", answer("a1", false)));
    String r2 = "[" + SYS + "," + Q1 + "," + A1 + "," + Q2 + "]";
    assertEquals(List.of("q2", "a2 par"), turn(r2, answer("a2 par", true)), "the client left mid-stream");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the client's retry: the question once");
  }

  private static final TurnRecorder.Outcome FAILED =
      new TurnRecorder.Outcome(null, false, "the model server answered HTTP 503", 0, 9);

  @Test
  void anSdkRetryOfAFailedCallThatBroughtToolResultsStoresThemOnce() throws Exception {
    assertEquals(List.of("be brief", "q1", ""), turn("[" + SYS + "," + Q1 + "]", callOf("call_1")));
    String r2 = "[" + SYS + "," + Q1 + "," + assistantCall("call_1") + "," + result("call_1", "42") + "]";
    assertEquals(List.of(""), turn(r2, FAILED), "first attempt: the result, then the failed answer");
    assertEquals(List.of("call_1=42"), calls);
    assertEquals(List.of(""), turn(r2, FAILED), "the SDK's retry fails too");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the SDK's last retry: the answer");
    assertEquals(List.of("call_1=42"), calls, "the result once: keyed by its call, a retry's is a duplicate");
    // The conversation goes on: the next result of a call id used again is a new call.
    String r3 = "[" + SYS + "," + Q1 + "," + assistantCall("call_1") + "," + result("call_1", "42") + ","
        + "{\"role\":\"assistant\",\"content\":\"a2\"}," + Q2 + "]";
    assertEquals(List.of("q2", ""), turn(r3, callOf("call_1")));
    String r4 = r3.substring(0, r3.length() - 1) + "," + assistantCall("call_1") + "," + result("call_1", "43") + "]";
    assertEquals(List.of("a4"), turn(r4, answer("a4", false)));
    assertEquals(List.of("call_1=42", "call_1=43"), calls);
  }

  @Test
  void aRetryAfterAnAnswerCutShortThatFollowedToolResultsStoresThemOnce() throws Exception {
    turn("[" + SYS + "," + Q1 + "]", callOf("call_1"));
    String r2 = "[" + SYS + "," + Q1 + "," + assistantCall("call_1") + "," + result("call_1", "42") + "]";
    assertEquals(List.of("a2 par"), turn(r2, answer("a2 par", true)), "the client left mid-stream");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the client's retry");
    assertEquals(List.of("call_1=42"), calls);
  }

  @Test
  void aRetryInASlidingWindowOfACallIdUsedInEveryTurnStoresTheResultOnceAndTheNextOneAgain() throws Exception {
    // The model calls call_0 in every turn; the agent resends only the last call and its result.
    turn("[" + SYS + "," + Q1 + "]", callOf("call_0"));
    String r2 = "[" + assistantCall("call_0") + "," + result("call_0", "1") + "]";
    assertEquals(List.of(""), turn(r2, callOf("call_0")));
    String r3 = "[" + assistantCall("call_0") + "," + result("call_0", "2") + "]";
    turn(r3, FAILED);
    turn(r3, callOf("call_0"));
    String r4 = "[" + assistantCall("call_0") + "," + result("call_0", "3") + "]";
    turn(r4, answer("done", false));
    assertEquals(List.of("call_0=1", "call_0=2", "call_0=3"), calls, "each call once, the retried one too");
  }

  @Test
  void theSameResultUnderAnotherCallIdIsStoredAlsoWhenItsCallIsRetried() throws Exception {
    turn("[" + SYS + "," + Q1 + "]", callOf("call_a"));
    String r2 = "[" + SYS + "," + Q1 + "," + assistantCall("call_a") + "," + result("call_a", "sunny") + "]";
    turn(r2, callOf("call_b"));
    String r3 = r2.substring(0, r2.length() - 1) + "," + assistantCall("call_b") + "," + result("call_b", "sunny") + "]";
    turn(r3, FAILED);
    turn(r3, answer("both sunny", false));
    assertEquals(List.of("call_a=sunny", "call_b=sunny"), calls);
  }
}
