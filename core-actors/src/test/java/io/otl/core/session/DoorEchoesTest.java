package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Store;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The gateway and the OpenTelemetry door writing one session (docs/connect-opentelemetry.md, "With the
 * gateway too"): a turn with a tool call, as each door records it, stores each message and tool call once
 * in either arrival order, and the gateway's figures stay with the answer.
 */
class DoorEchoesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final InferenceCall GATEWAY_CALL =
      new InferenceCall("v1", "qwen", 40L, 42, 7, "stop", null, null, null, null, null);
  private static final InferenceCall SPAN_CALL =
      new InferenceCall(null, "qwen", null, 42, 7, "stop", null, null, null, null, null);
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = State.empty();

  private Store record(List<SessionInput> inputs) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", inputs, NOW));
    for (Event e : store.events()) state = state.apply(e);
    return store;
  }

  private static SessionInput.Message msg(String id, String role, String content, String msgId, InferenceCall call) {
    return new SessionInput.Message(id, null, role, content, msgId, null, call);
  }

  /** The gateway's two calls of the turn: the answer calling the tool, then the answer after its result. */
  private static List<List<SessionInput>> gateway() throws Exception {
    return List.of(
        List.of(msg("gw:m:sys", "system", "Be brief.", null, null), msg("gw:m:u1", "user", "Weather?", null, null),
            msg("gw:m:tc", "assistant", "", "resp-1", GATEWAY_CALL)),
        List.of(new SessionInput.ToolCall("gw:tc:1", null, "call-1", "get_weather", JSON.readTree("{\"city\":\"Paris\"}"),
                JSON.readTree("{\"celsius\":21}"), true, null),
            msg("gw:m:a1", "assistant", "21 degrees.", "resp-2", GATEWAY_CALL)));
  }

  /** The spans of the turn, in one batch: each chat span's messages, the execute_tool span's call. */
  private static List<SessionInput> spans() throws Exception {
    return List.of(msg("otlp:m0:sys", "system", "Be brief.", null, null),
        msg("otlp:m1:u1", "user", "Weather?", null, null),
        msg("otlp:m2:tc", "assistant", "", "resp-1", SPAN_CALL),
        new SessionInput.ToolCall("otlp:span-tool", null, "call-1", "get_weather",
            JSON.readTree("{\"city\":\"Paris\"}"), JSON.readTree("{\"celsius\":21}"), true, 12L),
        // the tool's result as the next chat span re-sends it, spaced as the agent sent it
        msg("otlp:m3:tool", "tool", "{\"celsius\": 21}", null, null),
        msg("otlp:m4:a1", "assistant", "21 degrees.", "resp-2", SPAN_CALL));
  }

  private List<String> messages() {
    List<String> got = new ArrayList<>();
    for (MessageRecorded m : state.messages()) got.add(m.role() + ":" + m.content());
    return got;
  }

  /**
   * Review t129: the gateway stores the model's call with its answer, awaiting the result; the spans (or the
   * hook) then bring the call with its output before the agent's next model call, which may never come (the
   * agent stopped after the tool). The output is the stored call's result, not a duplicate dropped.
   */
  @Test
  void anotherDoorsCopyOfACallAwaitingItsResultBringsTheResult() throws Exception {
    record(List.of(msg("gw:m:u1", "user", "Weather?", null, null), msg("gw:m:tc", "assistant", "", "resp-1", GATEWAY_CALL),
        new SessionInput.ToolCall("gw:tc:1", null, "call-1", "get_weather", JSON.readTree("{\"city\":\"Paris\"}"),
            null, null, null, null, true)));
    assertEquals(true, state.toolCalls().get(0).pending());
    record(spans());
    assertEquals(1, state.toolCalls().size(), state.toolCalls().toString());
    assertEquals(false, state.toolCalls().get(0).pending(), "the spans' output is the call's result");
    assertEquals(21, state.toolCalls().get(0).output().path("celsius").asInt());
    assertEquals(List.of("user:Weather?", "assistant:", "assistant:21 degrees."),
        messages().stream().filter(m -> !m.startsWith("system")).toList(), "the tool message is the call's output");
    Store gatewayResult = record(List.of(new SessionInput.ToolResult(
        AgentSession.ToolResultRecorded.eventIdOf("gw:tc:1"), null, "gw:tc:1", JSON.readTree("{\"celsius\":21}"),
        true, null, null)));
    assertEquals(0, gatewayResult.events().size(), "the gateway's own copy of the result is a duplicate");
  }

  @Test
  void spansAfterTheGatewaysRecordsAreDuplicates() throws Exception {
    for (List<SessionInput> call : gateway()) record(call);
    Store spans = record(spans());
    assertEquals(0, spans.events().size(), spans.events().toString());
    assertEquals(6, spans.reply().duplicates());
    assertEquals(List.of("system:Be brief.", "user:Weather?", "assistant:", "assistant:21 degrees."), messages());
    assertEquals(1, state.toolCalls().size());
    assertEquals(GATEWAY_CALL, state.messages().get(3).inference(), "the gateway's figures are kept");
  }

  @Test
  void theGatewaysRecordsAfterTheSpansAreDuplicatesThatAddTheGatewaysFigures() throws Exception {
    record(spans());
    for (List<SessionInput> call : gateway()) record(call);
    // the spans' shape: the tool's result is also the tool message the next call was sent
    assertEquals(List.of("system:Be brief.", "user:Weather?", "assistant:", "tool:{\"celsius\": 21}",
        "assistant:21 degrees."), messages());
    assertEquals(1, state.toolCalls().size());
    for (MessageRecorded m : state.messages()) {
      if (m.msgId() != null) assertEquals(GATEWAY_CALL, m.inference(), "the gateway's figures are added: " + m);
    }
    // the gateway sends the history again with each call: nothing more, nothing twice
    Store again = record(gateway().get(1));
    assertEquals(0, again.events().size(), again.events().toString());
  }

  @Test
  void aToolMessageThatIsNoStoredOutputIsStored() throws Exception {
    for (List<SessionInput> call : gateway()) record(call);
    record(List.of(msg("otlp:m5:tool", "tool", "{\"celsius\": 22}", null, null),
        msg("otlp:m6:tool", "tool", "plain", null, null)));
    assertEquals(6, state.messages().size(), messages().toString());
  }

  @Test
  void aSessionOfOneDoorIsNotSearched() throws Exception {
    record(spans());
    record(List.of(msg("otlp:m9:u", "user", "Weather?", null, null)));
    assertEquals(6, state.messages().size(), "the user asked again: " + messages());
  }
}
