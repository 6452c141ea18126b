package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A turn that reaches a node which has not recorded into the session numbers the resent history against
 * the session's state, asked from the node that holds it. That state crosses the wire (or comes from a
 * snapshot) as JSON, and its event ids come back as a HashSet, in no stored order. Trial t93 (3 nodes,
 * turns 1, 2, 3 of a tool-calling conversation on nodes A, B, C): the "last message" read off that set
 * was turn 1's answer, so turn 3 took turn 1's tool call, stored by turn 2, for a new call of the same id,
 * and the session held it twice.
 */
class StoredOnAnotherNodeTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());
  private static final TextCut CUT = new TextCut(D, 65_536);
  private static final String TOOLS = "[{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"parameters\":"
      + "{\"type\":\"object\"}}}]";

  private static ChatRequest request(String messages) {
    return ChatRequest.parse(("{\"model\":\"m\",\"tools\":" + TOOLS + ",\"messages\":" + messages + "}")
        .getBytes(StandardCharsets.UTF_8));
  }

  /** The simulator's answer to "use the lookup tool": no text, one call. */
  private static TurnRecorder.Outcome toolCallAnswer(String callId) throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + callId + "\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" + call(callId) + "]},"
        + "\"finish_reason\":\"tool_calls\"}]}"), false);
    return new TurnRecorder.Outcome(c, false, null, 5, 9);
  }

  private static String call(String id) {
    return "{\"id\":\"" + id + "\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}";
  }

  private static String turns(int n) {
    StringBuilder m = new StringBuilder("[{\"role\":\"system\",\"content\":\"sys\"}");
    for (int i = 1; i <= n; i++) {
      m.append(",{\"role\":\"user\",\"content\":\"use the lookup tool\"}");
      if (i < n) {
        m.append(",{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[").append(call("call_" + i)).append("]}")
            .append(",{\"role\":\"tool\",\"tool_call_id\":\"call_").append(i).append("\",\"content\":\"42\"}");
      }
    }
    return m.append(']').toString();
  }

  @Test
  void aTurnNumberedOnAnotherNodeDoesNotStoreAToolCallAgain() throws Exception {
    // Turns 1 and 2 as nodes A and B recorded them (each knew the session's ids in order).
    Set<String> ids = new LinkedHashSet<>();
    List<AgentSession.MessageRecorded> messages = new ArrayList<>();
    String last = null;
    for (int turn = 1; turn <= 2; turn++) {
      List<SessionInput> in = TurnRecorder.inputs(D, CUT, ids, last, request(turns(turn)), "v0", null, "v0", null,
          null, toolCallAnswer("call_" + turn), null, null);
      for (SessionInput i : in) {
        ids.add(i.eventId());
        if (i instanceof SessionInput.Message m) {
          messages.add(new AgentSession.MessageRecorded(m.eventId(), Instant.EPOCH, Instant.EPOCH,
              SessionModel.Role.parse(m.role()), m.content(), m.msgId(), m.latencyMs(), null, null));
        }
      }
      last = TurnRecorder.lastMessage(in.stream().map(SessionInput::eventId).toList(), last);
    }
    // The state as node C gets it: the same ids, in another order (Jackson's HashSet); here reversed.
    List<String> reversed = new ArrayList<>(ids);
    java.util.Collections.reverse(reversed);
    AgentSession.State state = new AgentSession.State(SessionModel.Status.ACTIVE, "bot", null, "v0", Map.of(),
        Instant.EPOCH, Instant.EPOCH, null, messages, List.of(), List.of(), List.of(), null, null, null, 0,
        new LinkedHashSet<>(reversed));

    TurnRecording.Stored stored = TurnRecording.Stored.of(state, Map.of());
    assertEquals(last, stored.lastMessage(), "the last message stored, whatever the order of the id set");
    List<SessionInput> third = TurnRecorder.inputs(D, CUT, stored.ids(), stored.lastMessage(), request(turns(3)),
        "v0", null, "v0", null, null, toolCallAnswer("call_3"), null, null);
    // Turn 2's answer stored call_2 (awaiting its result); turn 3 brings that result, and makes call_3.
    List<String> newCalls = third.stream().filter(i -> i instanceof SessionInput.ToolCall)
        .map(i -> ((SessionInput.ToolCall) i).callId()).toList();
    assertEquals(List.of("call_3"), newCalls, "only the answer's call is new; call_1 and call_2 are stored already");
    assertEquals(List.of(TurnRecorder.toolCallEventId("call_2")), third.stream()
        .filter(i -> i instanceof SessionInput.ToolResult).map(i -> ((SessionInput.ToolResult) i).callEventId())
        .toList(), "call_2's result, attached to it; call_1's is stored already");
  }

  /** A session's state built write by write, each write with its own recordedAt, as the session applies them. */
  private static final class Session {
    final Set<String> ids = new LinkedHashSet<>();
    final List<AgentSession.MessageRecorded> messages = new ArrayList<>();
    final List<AgentSession.ToolCallRecorded> toolCalls = new ArrayList<>();
    int writes;

    /** Stores the inputs as one write, as the session does; returns the results it attached, as callId=output. */
    List<String> store(List<SessionInput> in) {
      Instant at = Instant.EPOCH.plusSeconds(++writes);
      List<String> results = new ArrayList<>();
      for (SessionInput i : in) {
        if (!ids.add(i.eventId())) continue;
        if (i instanceof SessionInput.Message m) {
          messages.add(new AgentSession.MessageRecorded(m.eventId(), at, at, SessionModel.Role.parse(m.role()),
              m.content(), m.msgId(), m.latencyMs(), null, null));
        } else if (i instanceof SessionInput.ToolCall t) {
          toolCalls.add(new AgentSession.ToolCallRecorded(t.eventId(), at, at, t.callId(), t.toolName(), t.input(),
              null, true, null, null, Boolean.TRUE));
        } else if (i instanceof SessionInput.ToolResult r) {
          AgentSession.ToolResultRecorded e = new AgentSession.ToolResultRecorded(r.eventId(), at, at, r.callEventId(),
              r.output(), true, null, null);
          boolean attached = false;
          for (int k = 0; k < toolCalls.size(); k++) {
            AgentSession.ToolCallRecorded c = toolCalls.get(k);
            if (c.eventId().equals(r.callEventId()) && c.pending()) {
              toolCalls.set(k, e.appliedTo(c));
              results.add(c.callId() + "=" + r.output().asText());
              attached = true;
            }
          }
          assertEquals(true, attached, "a result for a call the session holds awaiting it: " + r);
        }
      }
      return results;
    }

    /** The state as another node gets it (ids in another order), and what the gateway reads off it. */
    TurnRecording.Stored asStored() {
      List<String> reversed = new ArrayList<>(ids);
      java.util.Collections.reverse(reversed);
      return TurnRecording.Stored.of(new AgentSession.State(SessionModel.Status.ACTIVE, "bot", null, "v0", Map.of(),
          Instant.EPOCH, Instant.EPOCH, null, messages, toolCalls, List.of(), List.of(), null, null, null, 0,
          new LinkedHashSet<>(reversed)), Map.of());
    }

    /** The turn numbered on a node that asks the session what it holds, and stored. */
    List<String> turn(String messages, TurnRecorder.Outcome outcome) {
      TurnRecording.Stored stored = asStored();
      return store(TurnRecorder.inputs(D, CUT, stored.ids(), stored.lastMessage(),
          request(messages), "v0", null, "v0", null, null, outcome, null, null));
    }
  }

  private static final TurnRecorder.Outcome FAILED =
      new TurnRecorder.Outcome(null, false, "the model server answered HTTP 503", 0, 9);

  private static String callAndResult(String callId, String result) {
    return ",{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" + call(callId) + "]}"
        + ",{\"role\":\"tool\",\"tool_call_id\":\"" + callId + "\",\"content\":\"" + result + "\"}";
  }

  /**
   * Review t116 on another node (or after a restart): the retry of a call that brought a tool result and failed
   * is numbered against the session's state; the result is keyed by its call, so the retry's is a duplicate.
   */
  @Test
  void aRetryNumberedAgainstTheSessionDoesNotStoreTheResultsOfTheFailedCallAgain() throws Exception {
    Session s = new Session();
    String q = "[{\"role\":\"system\",\"content\":\"sys\"},{\"role\":\"user\",\"content\":\"use the lookup tool\"}";
    assertEquals(List.of(), s.turn(q + "]", toolCallAnswer("call_1")));
    assertEquals(1, s.toolCalls.size(), "the answer's call, awaiting its result");
    String retried = q + callAndResult("call_1", "42") + "]";
    assertEquals(List.of("call_1=42"), s.turn(retried, FAILED));
    assertEquals(List.of(), s.turn(retried, FAILED), "the retry, failed again");
    assertEquals(List.of(), s.turn(retried, toolCallAnswer("call_2")), "the retry answered");
    assertEquals(List.of("call_2=43"), s.turn(q + callAndResult("call_1", "42") + callAndResult("call_2", "43") + "]",
        FAILED));
    assertEquals(2, s.toolCalls.size(), "each call once: " + s.toolCalls);
  }

  /**
   * With a call id the model uses in every turn and a window of the last call and its result, each result is
   * attached to the call it answers, on another node too; the result of a call whose write also stored the model's
   * next call (before review t124 the one case a retry stored again) is a duplicate on retry.
   */
  @Test
  void aResultStoredWithTheLastCallIsNotTakenForOneStoredAfterIt() throws Exception {
    Session s = new Session();
    s.turn("[{\"role\":\"user\",\"content\":\"use the lookup tool\"}]", toolCallAnswer("call_0"));
    String sys = "[{\"role\":\"system\",\"content\":\"sys\"}";
    assertEquals(List.of("call_0=1"), s.turn(sys + callAndResult("call_0", "1") + "]", toolCallAnswer("call_0")));
    assertEquals(List.of("call_0=2"), s.turn(sys + callAndResult("call_0", "2") + "]", FAILED));
    assertEquals(List.of(), s.turn(sys + callAndResult("call_0", "2") + "]", toolCallAnswer("call_0")));
    assertEquals(List.of("call_0=3"), s.turn(sys + callAndResult("call_0", "3") + "]", toolCallAnswer("call_0")));
    assertEquals(4, s.toolCalls.size(), "three answered calls and the last one awaiting: " + s.toolCalls);
    assertEquals(null, s.toolCalls.get(3).output());
  }
}
