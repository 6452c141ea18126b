package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which events a call becomes: only what the session does not have yet. */
class TurnRecorderTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());

  private static ChatRequest request(String messages) {
    return ChatRequest.parse(("{\"model\":\"m\",\"messages\":" + messages + "}").getBytes(StandardCharsets.UTF_8));
  }

  private static TurnRecorder.Outcome answer(String content) throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + content.hashCode() + "\",\"choices\":"
        + "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},\"finish_reason\":\"stop\"}]}"),
        false);
    return new TurnRecorder.Outcome(c, false, null, 5, 9);
  }

  private static List<SessionInput> record(Set<String> known, String messages, String reply) throws Exception {
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, request(messages), "v1", "v1", null, null, answer(reply));
    in.forEach(i -> known.add(i.eventId()));
    return in;
  }

  private static List<String> contents(List<SessionInput> in) {
    return in.stream().filter(i -> i instanceof SessionInput.Message).map(i -> ((SessionInput.Message) i).content())
        .toList();
  }

  @Test
  void resentHistoryIsNotRecordedAgainEvenInASlidingWindow() throws Exception {
    Set<String> known = new HashSet<>();
    String sys = "{\"role\":\"system\",\"content\":\"be brief\"}";
    assertEquals(List.of("be brief", "q1", "a1"), contents(record(known, "[" + sys + ",{\"role\":\"user\",\"content\":\"q1\"}]", "a1")));
    assertEquals(List.of("q2", "a2"), contents(record(known, "[" + sys + ",{\"role\":\"user\",\"content\":\"q1\"},"
        + "{\"role\":\"assistant\",\"content\":\"a1\"},{\"role\":\"user\",\"content\":\"q2\"}]", "a2")));
    assertEquals(List.of("q3", "a3"), contents(record(known, "[" + sys + ",{\"role\":\"assistant\",\"content\":\"a2\"},"
        + "{\"role\":\"user\",\"content\":\"q3\"}]", "a3")), "the window dropped q1..q2; nothing is lost or doubled");
  }

  /**
   * Trial t110 (openai-python, a window of the last answer and the new question): a question asked again
   * after the window had dropped its every earlier occurrence was numbered from 0, took the first one's id,
   * and was dropped as a duplicate with its answer (the same text as the first answer).
   */
  @Test
  void aMessageAskedAgainAfterTheWindowDroppedItIsStoredWithItsAnswer() throws Exception {
    Set<String> known = new HashSet<>();
    String[] last = {null};
    java.util.function.BiFunction<String, String, List<String>> turn = (messages, reply) -> {
      try {
        List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, last[0], request(messages),
            "v1", null, "v1", null, null, answer(reply), null, null);
        in.forEach(i -> known.add(i.eventId()));
        last[0] = TurnRecorder.lastMessage(in.stream().map(SessionInput::eventId).toList(), last[0]);
        return contents(in);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
    String u = "{\"role\":\"user\",\"content\":\"%s\"}";
    String a = "{\"role\":\"assistant\",\"content\":\"%s\"}";
    assertEquals(List.of("alpha", "re alpha"), turn.apply("[" + u.formatted("alpha") + "]", "re alpha"));
    assertEquals(List.of("beta", "re beta"), turn.apply("[" + a.formatted("re alpha") + "," + u.formatted("beta") + "]",
        "re beta"));
    assertEquals(List.of("alpha", "re alpha"), turn.apply("[" + a.formatted("re beta") + "," + u.formatted("alpha")
        + "]", "re alpha"), "asked again: a new question and a new answer, though the window has neither earlier one");
    assertEquals(List.of("gamma", "re gamma"), turn.apply("[" + u.formatted("alpha") + "," + a.formatted("re alpha")
        + "," + u.formatted("gamma") + "]", "re gamma"), "the second alpha and its answer, resent, are duplicates");
    assertEquals(8, known.stream().filter(TurnRecorder::isMessageId).count(), "eight messages, none twice");
  }

  @Test
  void halfAnEmojiOrANulInAnAnswerIsStoredAsAReplacementCharacter() throws Exception {
    // A model server may answer "\ud83d" (half an emoji, e.g. the simulator before trial t102 cut its
    // echo there): the events API refuses such text, the gateway cannot; stored, GET answered it and exports wrote "?".
    assertEquals(List.of("hi", "half \uFFFD, nul \uFFFD, whole \uD83D\uDE00"), contents(record(new HashSet<>(),
        "[{\"role\":\"user\",\"content\":\"hi\"}]", "half \\ud83d, nul \\u0000, whole \\ud83d\\ude00")));
  }

  @Test
  void aRepeatedMessageIsAnotherMessage() throws Exception {
    Set<String> known = new HashSet<>();
    record(known, "[{\"role\":\"user\",\"content\":\"yes\"}]", "ok");
    assertEquals(List.of("yes", "ok"), contents(record(known, "[{\"role\":\"user\",\"content\":\"yes\"},"
        + "{\"role\":\"assistant\",\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"yes\"}]", "ok")));
  }

  @Test
  void anAnswerResentStrippedOfWhiteSpaceIsTheRecordedOne() throws Exception {
    Set<String> known = new HashSet<>();
    assertEquals(List.of("hi", "\n\nHello there. "), contents(record(known, "[{\"role\":\"user\",\"content\":\"hi\"}]",
        "\\n\\nHello there. ")));
    assertEquals(List.of("next", "ok"), contents(record(known, "[{\"role\":\"user\",\"content\":\"hi\"},"
        + "{\"role\":\"assistant\",\"content\":\"Hello there.\"},{\"role\":\"user\",\"content\":\"next\"}]", "ok")),
        "an agent that strip()s the answer resends the turn it had, not a new one");
  }

  @Test
  void anSdkRetryOfAFailedCallStoresTheQuestionOnceAndEachFailedAttempt() throws Exception {
    // OpenAI's SDKs send a 502/504 again (twice by default): each attempt was a call the version failed,
    // so each is a failed message of its own; the question is stored once and the answer that finally
    // came is stored as usual (trial t6, the Java SDK 4.0.0 against a model server answering 500).
    Set<String> known = new HashSet<>();
    String q = "[{\"role\":\"user\",\"content\":\"q\"}]";
    TurnRecorder.Outcome failed = new TurnRecorder.Outcome(null, false, "the model server answered HTTP 500", 0, 9);
    for (int attempt = 0; attempt < 3; attempt++) {
      List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, request(q), "v1", "v1", null,
          null, failed);
      in.forEach(i -> known.add(i.eventId()));
      assertEquals(attempt == 0 ? List.of("q", "") : List.of(""), contents(in), "attempt " + attempt);
    }
    assertEquals(List.of("a"), contents(record(known, q, "a")), "the answer of the attempt that succeeded");
  }

  @Test
  void idsNeverDeriveFromRawPii() throws Exception {
    List<SessionInput> a = record(new HashSet<>(), "[{\"role\":\"user\",\"content\":\"mail jane@example.com\"}]", "x");
    List<SessionInput> b = record(new HashSet<>(), "[{\"role\":\"user\",\"content\":\"mail joe@example.org\"}]", "x");
    assertEquals(a.get(1).eventId(), b.get(1).eventId(), "the id of the user message hashes its desensitized text");
    assertFalse(a.get(1).eventId().contains("jane"));
  }

  @Test
  void aToolCallIsStoredAsTheModelMadeItAndItsResultAttachedToIt() throws Exception {
    String messages = "[{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"assistant\",\"content\":null,"
        + "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_1\","
        + "\"content\":\"sunny\"}]";
    List<SessionInput> in = record(new HashSet<>(), messages, "It is sunny");
    SessionInput.ToolCall call = in.stream().filter(i -> i instanceof SessionInput.ToolCall)
        .map(i -> (SessionInput.ToolCall) i).findFirst().orElseThrow();
    assertEquals("weather", call.toolName());
    assertEquals("Paris", call.input().path("city").asText());
    assertEquals(null, call.output());
    assertEquals(Boolean.TRUE, call.awaitingResult());
    SessionInput.ToolResult result = in.stream().filter(i -> i instanceof SessionInput.ToolResult)
        .map(i -> (SessionInput.ToolResult) i).findFirst().orElseThrow();
    assertEquals(call.eventId(), result.callEventId(), "the result is attached to its call");
    assertEquals(TurnRecorder.toolResultEventId(call.eventId()), result.eventId(), "its id derives from the call's");
    assertEquals("sunny", result.output().asText());
    assertTrue(contents(in).stream().noneMatch("sunny"::equals), "the tool result is the call's output, not a message");
  }

  /** Trial t123: AgentScope's structured output ends the conversation on the model's generate_response call. */
  @Test
  void anAnswerThatIsOnlyAToolCallStoresTheCallAwaitingItsResult() throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r1\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_9\","
        + "\"type\":\"function\",\"function\":{\"name\":\"generate_response\","
        + "\"arguments\":\"{\\\"summary\\\":\\\"ok\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}"), false);
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), new HashSet<>(),
        request("[{\"role\":\"user\",\"content\":\"report\"}]"), "v1", "v1", null, null,
        new TurnRecorder.Outcome(c, false, null, 5, 9));
    SessionInput last = in.get(in.size() - 1);
    assertTrue(last instanceof SessionInput.ToolCall, "the call after its answer: " + in);
    SessionInput.ToolCall call = (SessionInput.ToolCall) last;
    assertEquals("call_9", call.callId());
    assertEquals("generate_response", call.toolName());
    assertEquals("ok", call.input().path("summary").asText(), "strict JSON arguments as JSON");
    assertEquals(Boolean.TRUE, call.awaitingResult());
    assertEquals(TurnRecorder.toolCallEventId("call_9"), call.eventId(), "the id the next request gives it");
  }

  /**
   * A server may leave a tool call's {@code id} out (review t129): the whole turn went unrecorded, the call's id
   * hashed as null. The question, the answer and the call are stored (the call under the id ""; a request that
   * resends it is refused by the gateway's own check, as OpenAI's API refuses an assistant call without id).
   */
  @Test
  void anAnswersToolCallWithoutAnIdIsStoredWithItsTurn() throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r1\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
        + "\"type\":\"function\",\"function\":{\"name\":\"weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}"), false);
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), new HashSet<>(),
        request("[{\"role\":\"user\",\"content\":\"weather?\"}]"), "v1", "v1", null, null,
        new TurnRecorder.Outcome(c, false, null, 5, 9));
    assertEquals(List.of("weather?"), contents(in).subList(0, 1), "the question: " + in);
    SessionInput.ToolCall call = (SessionInput.ToolCall) in.get(in.size() - 1);
    assertEquals("weather", call.toolName());
    assertEquals("", call.callId());
    assertEquals("Oslo", call.input().path("city").asText());
    assertEquals(Boolean.TRUE, call.awaitingResult());
  }

  /** The legacy functions API: the answer's function_call, named by the answer's own event id. */
  @Test
  void anAnswersLegacyFunctionCallIsStoredUnderItsAnswersId() throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r1\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}},\"finish_reason\":\"function_call\"}]}"), false);
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), new HashSet<>(),
        request("[{\"role\":\"user\",\"content\":\"weather?\"}]"), "v1", "v1", null, null,
        new TurnRecorder.Outcome(c, false, null, 5, 9));
    SessionInput.Message answer = (SessionInput.Message) in.get(in.size() - 2);
    SessionInput.ToolCall call = (SessionInput.ToolCall) in.get(in.size() - 1);
    assertEquals(answer.eventId(), call.callId());
    assertEquals(TurnRecorder.toolCallEventId(answer.eventId()), call.eventId());
    assertEquals("Oslo", call.input().path("city").asText());
    // The next request resends the call and brings the function's result: attached to that call.
    Set<String> known = new HashSet<>();
    in.forEach(i -> known.add(i.eventId()));
    List<SessionInput> next = record(known, "[{\"role\":\"user\",\"content\":\"weather?\"},"
        + "{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}},{\"role\":\"function\",\"name\":\"weather\","
        + "\"content\":\"snow\"}]", "Snow in Oslo.");
    assertEquals(1, next.stream().filter(i -> i instanceof SessionInput.ToolResult).count(), next.toString());
    SessionInput.ToolResult r = (SessionInput.ToolResult) next.stream()
        .filter(i -> i instanceof SessionInput.ToolResult).findFirst().orElseThrow();
    assertEquals(call.eventId(), r.callEventId());
    assertEquals(0, next.stream().filter(i -> i instanceof SessionInput.ToolCall).count(), "the call is stored: " + next);
  }

  /**
   * 13800138000 is a mobile number: builds before standalone hex tokens were opaque refused such an id
   * and spelled its digits in letters. The spelling stays, so that a session recorded then still
   * recognises its resent history.
   */
  @Test
  void aHashThatReadsAsAPhoneNumberIsSpelledInLettersAsEarlierBuildsDid() {
    String hex = "a13800138000bcdef0123456";
    assertEquals(null, io.otl.core.Ids.problem("eventId", "gw:m:" + hex, 128), "the raw form is opaque now");
    String id = TurnRecorder.opaque("gw:m:", hex, ".1");
    assertEquals("gw:m:ahjogghjogggbcdefghijklm.1", id);
    assertEquals(null, io.otl.core.Ids.problem("eventId", id, 128));
    assertEquals(id, TurnRecorder.opaque("gw:m:", hex, ".1"), "deterministic: a resent message is a duplicate");
    assertEquals("gw:m:ab12cd", TurnRecorder.opaque("gw:m:", "ab12cd", ""), "an id that passed keeps its form");
  }
}
