package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static io.otl.core.session.RecordPlannerRefusalsTest.msg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.ReasoningStepRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.RecordPlanner.Store;
import io.otl.core.session.SessionModel.Role;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What each input is stored as: every free-text field desensitized, the gateway's markers kept (design §3.1, §7.5). */
class RecordPlannerStoredFieldsTest {
  private static final String UUID = "0f8fad5b-d9cb-469f-a165-70867728950e";

  /** The input's own event, after the implicit start of a new session. */
  private static Event stored(SessionInput input) {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    Store store = (Store) planner.plan(State.empty(), "a1", List.of(msg("m0", "user", "hi"), input), NOW);
    return store.events().get(store.events().size() - 1);
  }

  @Test
  void aMessageKeepsItsRoleLatencyAndAUuidResponseIdAndLosesPii() {
    var in = new SessionInput.Message("m1", null, "assistant", "call 13812345678", UUID, 42L);
    assertEquals(new MessageRecorded("m1", NOW, NOW, Role.assistant, "call [PHONE]", UUID, 42L), stored(in));
    var phoneId = new SessionInput.Message("m1", null, "assistant", "x", "resp-13812345678", null);
    assertEquals("resp-[PHONE]", ((MessageRecorded) stored(phoneId)).msgId());
  }

  @Test
  void theGatewaysErrorTextIsDesensitizedAndItsFiguresKept() {
    var call = new InferenceCall("v2", "served", 15L, 10, 20, "stop", true, "upstream said alice@example.com",
        "v3", List.of(1, 2), List.of(-0.5, -0.25));
    var m = (MessageRecorded) stored(new SessionInput.Message("m1", null, "assistant", "", "r1", 7L, call));
    assertEquals(new InferenceCall("v2", "served", 15L, 10, 20, "stop", true, "upstream said [EMAIL]", "v3",
        List.of(1, 2), List.of(-0.5, -0.25)), m.inference());
    var clean = new InferenceCall("v2", "served", 15L, 10, 20, "stop", false, null, null, null, null);
    assertSame(clean, ((MessageRecorded) stored(new SessionInput.Message("m1", null, "assistant", "", "r1", 7L,
        clean))).inference());
  }

  @Test
  void cutFieldsAreStoredInNameOrderAndAnEmptyMarkerAsNone() {
    var cut = new SessionInput.Message("m1", null, "assistant", "x".repeat(10), null, null, null,
        Map.of("content", 5000));
    Map<String, Integer> truncated = ((MessageRecorded) stored(cut)).truncated();
    assertEquals(Map.of("content", 5000), truncated);
    assertThrows(UnsupportedOperationException.class, () -> truncated.put("content", 1));
    var none = new SessionInput.Message("m1", null, "assistant", "x", null, null, null, Map.of());
    assertNull(((MessageRecorded) stored(none)).truncated());

    var tool = new SessionInput.ToolCall("t1", null, "c1", "search", null, null, true, null,
        Map.of("output", 2000, "input", 3000));
    Map<String, Integer> both = ((ToolCallRecorded) stored(tool)).truncated();
    assertEquals(List.of("input", "output"), List.copyOf(both.keySet()));
    assertEquals(3000, both.get("input"));
  }

  @Test
  void aToolCallIsDesensitizedKeysAndValuesAndSucceedsUnlessItSaysOtherwise() {
    ObjectNode input = JsonNodeFactory.instance.objectNode().put("to", "alice@example.com");
    ObjectNode output = JsonNodeFactory.instance.objectNode().put("13812345678", "ok");
    var call = new SessionInput.ToolCall("t1", null, "call-13812345678", "lookup secret-42", input, output, null, 9L);
    ToolCallRecorded t = (ToolCallRecorded) stored(call);
    assertEquals("call-[PHONE]", t.callId());
    assertEquals("lookup [REDACTED]", t.toolName());
    assertEquals("{\"to\":\"[EMAIL]\"}", t.input().toString());
    assertEquals("{\"[PHONE]\":\"ok\"}", t.output().toString());
    assertTrue(t.success(), "a call that does not say is taken as a success");
    assertEquals(9L, t.latencyMs());
    assertNull(t.truncated());
    var failed = new SessionInput.ToolCall("t1", null, "c", "search", null, null, false, null);
    assertFalse(((ToolCallRecorded) stored(failed)).success());
  }

  @Test
  void aReasoningStepWithoutIndexIsStoredAsMinusOne() {
    var step = new SessionInput.Reasoning("s1", null, null, "mail alice@example.com", "call 13812345678",
        "got secret-7");
    assertEquals(new ReasoningStepRecorded("s1", NOW, NOW, -1, "mail [EMAIL]", "call [PHONE]", "got [REDACTED]"),
        stored(step));
    var indexed = new SessionInput.Reasoning("s1", null, 3, null, null, null);
    assertEquals(3, ((ReasoningStepRecorded) stored(indexed)).index());
  }

  @Test
  void aResultsDetailIsDesensitized() {
    var result = new SessionInput.Result("r", null, "timeout", "asked alice@example.com");
    Store store = (Store) new RecordPlanner("s1", FULL).plan(State.empty(), "a1", List.of(result), NOW);
    // start, result, completion
    Event stored = store.events().get(1);
    assertEquals(new AgentSession.TaskResultRecorded("r", NOW, NOW, SessionModel.TaskStatus.TIMEOUT,
        "asked [EMAIL]"), stored);
  }
}
