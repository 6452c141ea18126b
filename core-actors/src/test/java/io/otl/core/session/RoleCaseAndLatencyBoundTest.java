package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static io.otl.core.session.RecordPlannerRefusalsTest.active;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Store;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Trial trial-api: a role was read in lower case only ("USER" a 400) while a feedback kind and a result's
 * status in the same batch were read in any case; and any latencyMs up to Long.MAX_VALUE was stored.
 */
class RoleCaseAndLatencyBoundTest {
  private static final Instant AT = Instant.parse("2026-11-20T01:59:30Z");
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = active(planner);
  private final SessionInputValidation v = new SessionInputValidation(100);

  private Recorded record(SessionInput input) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", List.of(input), NOW));
    for (Event e : store.events()) state = state.apply(e);
    return store.reply();
  }

  private static SessionInput.Message message(String role, Long latencyMs) {
    return new SessionInput.Message(null, AT, role, "hello", null, latencyMs);
  }

  @Test
  void aRoleIsReadInAnyCaseAndStoredInLowerCase() {
    for (String role : List.of("USER", "User", "Assistant", "SYSTEM", "Tool")) {
      assertNull(v.problem(message(role, null)), role);
    }
    int before = state.messages().size();
    assertEquals(1, record(message("USER", null)).accepted());
    assertEquals(Role.user, state.messages().get(before).role());
    // a retry in the stored spelling is the same message
    assertEquals(new Recorded(0, 1, true), record(message("user", null)));
    assertEquals(before + 1, state.messages().size());
    assertEquals(".role is not one of the allowed: system, user, assistant, tool", v.problem(message("bot", null)));
  }

  @Test
  void aLatencyOverADayIsRefusedNamingTheBound() {
    String tooLarge = ".latencyMs is too large: at most 86400000 (24 hours; latencyMs is one call's duration in"
        + " milliseconds)";
    assertNull(v.problem(message("assistant", 86_400_000L)));
    assertEquals(tooLarge, v.problem(message("assistant", 86_400_001L)));
    assertEquals(tooLarge, v.problem(message("assistant", Long.MAX_VALUE)));
    assertEquals(".latencyMs must not be negative", v.problem(message("assistant", -1L)));
    assertEquals(tooLarge, v.problem(new SessionInput.ToolCall(null, null, "c1", "t", null, null, true,
        1_000_000_000_000L)));
  }
}
