package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static io.otl.core.session.RecordPlannerRefusalsTest.msg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.NotAfter;
import io.otl.core.session.RecordPlanner.Store;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A gateway's write numbered from its node's memory of the session is stored only after the write that
 * memory ends with (AgentSession.Record#after): another node's gateway that recorded since makes the memory
 * stale, and a recurring message numbered from it took an id the session held (trial t93). Other doors'
 * writes (the AgentScope hook, the events API) do not touch the gateway's numbering, and leave it valid.
 */
class RecordPlannerGatewayWritesTest {
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = State.empty();

  private RecordPlanner.Plan plan(String writer, String after, SessionInput... inputs) {
    RecordPlanner.Plan plan = planner.plan(state, "a1", List.of(inputs), NOW, writer, after);
    if (plan instanceof Store store) for (Event e : store.events()) state = state.apply(e);
    return plan;
  }

  @Test
  void aWriteAfterTheSessionsLastGatewayWriteIsStored() {
    assertInstanceOf(Store.class, plan("x:1", null, msg("gw:m:a", "user", "continue")));
    Store store = assertInstanceOf(Store.class, plan("x:2", "x:1", msg("gw:m:b", "assistant", "ok")));
    assertEquals(new Recorded(1, 0, true), store.reply());
  }

  @Test
  void aWriteAfterAnOlderGatewayWriteStoresNothing() {
    plan("x:1", null, msg("gw:m:a", "user", "continue"));
    plan("y:1", "x:1", msg("gw:m:a.1", "user", "continue")); // another node's gateway
    NotAfter stale = assertInstanceOf(NotAfter.class, plan("x:2", "x:1", msg("gw:m:a.1", "user", "continue"),
        msg("gw:m:b", "assistant", "ok")));
    assertEquals(2, state.messages().size(), "nothing stored: " + state.messages());
    // The session as stored, to number the turn again against, and the write to send it after.
    assertEquals(state, stale.reply().state());
    assertEquals("y:1", stale.reply().lastWrite());
    assertInstanceOf(Store.class, plan("x:3", "y:1", msg("gw:m:a.2", "user", "continue")));
    assertInstanceOf(Store.class, plan("x:4", "x:3", msg("gw:m:b", "assistant", "ok")));
  }

  @Test
  void anotherDoorsWriteLeavesTheGatewaysNumberingValid() {
    plan("x:1", null, msg("gw:m:a", "user", "continue"));
    assertInstanceOf(Store.class, plan(null, null, msg("as-1", "assistant", "from the hook")));
    assertInstanceOf(Store.class, plan("x:2", "x:1", msg("gw:m:b", "assistant", "ok")));
  }

  @Test
  void aResentWriteThatLandedIsADuplicateAndStaysTheLast() {
    plan("x:1", null, msg("gw:m:a", "user", "continue"));
    // The first send of x:2 landed but its reply was lost; the resend is unconditional (TurnRecorder).
    plan("x:2", "x:1", msg("gw:m:b", "assistant", "ok"));
    Store resent = assertInstanceOf(Store.class, plan("x:2", null, msg("gw:m:b", "assistant", "ok")));
    assertEquals(new Recorded(0, 1, true), resent.reply());
    assertInstanceOf(Store.class, plan("x:3", "x:2", msg("gw:m:a.1", "user", "continue")));
  }

  @Test
  void aSessionThatForgotItsLastGatewayWriteAsksForANumberingAgainstItself() {
    plan("x:1", null, msg("gw:m:a", "user", "continue"));
    RecordPlanner restarted = new RecordPlanner("s1", FULL); // the entity restarted or moved: memory only
    assertInstanceOf(NotAfter.class, restarted.plan(state, "a1", List.of(msg("gw:m:b", "assistant", "ok")), NOW,
        "x:2", "x:1"));
  }

  @Test
  void aWriteAfterNoneIsStoredOnlyWhileNoGatewayWroteAndAnAskStoresNothing() {
    assertInstanceOf(Store.class, plan("x:1", "", msg("gw:m:a", "user", "continue")));
    NotAfter second = assertInstanceOf(NotAfter.class, plan("y:1", "", msg("gw:m:a", "user", "continue")));
    assertEquals("x:1", second.reply().lastWrite());
    // What a gateway that does not know the session sends first: nothing, after a write no gateway names.
    NotAfter ask = assertInstanceOf(NotAfter.class, planner.plan(state, "a1", List.of(), NOW, null, "?"));
    assertEquals(1, ask.reply().state().messages().size());
    assertEquals("x:1", ask.reply().lastWrite());
  }

  @Test
  void aRefusedWriteIsNotTheLast() {
    plan("x:1", null, msg("gw:m:a", "user", "continue"));
    assertInstanceOf(RecordPlanner.Refused.class, planner.plan(state, "another-agent",
        List.of(msg("gw:m:b", "assistant", "ok")), NOW, "y:1", null));
    assertInstanceOf(Store.class, plan("x:2", "x:1", msg("gw:m:b", "assistant", "ok")));
  }
}
