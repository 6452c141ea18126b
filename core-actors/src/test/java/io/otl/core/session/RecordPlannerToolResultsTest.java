package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.AgentSession.ToolResultRecorded;
import io.otl.core.session.RecordPlanner.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The inference gateway stores a model's tool call when the model makes it (awaiting its result) and the
 * result when the agent's next request brings it, attached to that call: a conversation that ends on the call
 * (AgentScope's structured output) keeps it, and the session holds each call once.
 */
class RecordPlannerToolResultsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = State.empty();
  private final List<Event> journal = new ArrayList<>();

  private Store plan(SessionInput... inputs) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", List.of(inputs), NOW));
    for (Event e : store.events()) {
      state = state.apply(e);
      journal.add(e);
    }
    return store;
  }

  private static SessionInput.ToolCall call(String eventId, String callId) throws Exception {
    return new SessionInput.ToolCall(eventId, null, callId, "weather", JSON.readTree("{\"city\":\"Paris\"}"), null,
        null, null, null, true);
  }

  private static SessionInput.ToolResult result(String callEventId, String output, Map<String, Integer> cut)
      throws Exception {
    JsonNode out = JSON.getNodeFactory().textNode(output);
    return new SessionInput.ToolResult(callEventId + ":out", null, callEventId, out, true, null, cut);
  }

  @Test
  void aCallIsStoredAwaitingItsResultAndTheResultIsAttachedToIt() throws Exception {
    plan(call("gw:tc:a", "call_1"));
    ToolCallRecorded waiting = state.toolCalls().get(0);
    assertTrue(waiting.pending());
    assertNull(waiting.output());
    assertEquals("Paris", waiting.input().path("city").asText());

    Store store = plan(call("gw:tc:a", "call_1"), result("gw:tc:a", "sunny", Map.of("output", 70_000)));
    assertEquals(new Recorded(1, 1, true), store.reply(), "the call resent is a duplicate, the result is new");
    assertInstanceOf(ToolResultRecorded.class, store.events().get(0));
    assertEquals(1, state.toolCalls().size(), "one call, with its result: " + state.toolCalls());
    ToolCallRecorded answered = state.toolCalls().get(0);
    assertEquals(false, answered.pending());
    assertNull(answered.awaitingResult(), "absent, as in calls stored whole");
    assertEquals("sunny", answered.output().asText());
    assertEquals(Map.of("output", 70_000), answered.truncated());
    assertEquals("gw:tc:a", answered.eventId());
    assertEquals(1, state.counts().toolCalls());

    assertEquals(new Recorded(0, 1, true), plan(result("gw:tc:a", "sunny", null)).reply(), "a retry's result");
  }

  @Test
  void aResultForACallStoredWholeOrNotHeldIsADuplicate() throws Exception {
    // A call an earlier build stored with its result (or the events API), and one another door's copy replaced.
    plan(new SessionInput.ToolCall("gw:tc:b", null, "call_2", "weather", JSON.readTree("{}"),
        JSON.getNodeFactory().textNode("rain"), true, null));
    assertEquals(new Recorded(0, 2, true), plan(result("gw:tc:b", "sun", null), result("gw:tc:x", "sun", null))
        .reply());
    assertEquals("rain", state.toolCalls().get(0).output().asText(), "the stored result stays");
  }

  @Test
  void theResultOfAFailedToolCountsAsAnUnexplainedError() throws Exception {
    plan(call("gw:tc:c", "call_3"));
    assertEquals(0, state.unexplainedToolErrors(), "a call awaiting its result has not failed");
    plan(new SessionInput.ToolResult("gw:tc:c:out", null, "gw:tc:c", JSON.getNodeFactory().textNode("boom"), false,
        12L, null));
    assertEquals(1, state.unexplainedToolErrors());
    assertEquals(false, state.toolCalls().get(0).success());
    assertEquals(12L, state.toolCalls().get(0).latencyMs());
  }

  @Test
  void theResultIsDesensitizedBeforeItIsStored() throws Exception {
    plan(call("gw:tc:d", "call_4"));
    plan(result("gw:tc:d", "call me on 13812345678", null));
    assertTrue(!state.toolCalls().get(0).output().asText().contains("13812345678"), state.toolCalls().toString());
  }

  @Test
  void aReplayOfTheJournalGivesTheSameState() throws Exception {
    plan(call("gw:tc:e", "call_5"));
    plan(result("gw:tc:e", "ok", null));
    State replayed = State.empty();
    for (Event e : journal) replayed = replayed.apply(e);
    assertEquals(state, replayed);
  }
}
