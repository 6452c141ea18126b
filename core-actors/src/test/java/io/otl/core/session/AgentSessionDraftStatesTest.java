package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.AgentSession.Command;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.RecordReply;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Store;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The entity's event handler takes the plan's draft states for the write it planned (session 47) instead
 * of applying each event again: the state it ends with must be the one the events give when applied one
 * by one, live and after a recovery, for every kind of write (start, tool result, duplicate, details,
 * completion, feedback and its reward revision).
 */
class AgentSessionDraftStatesTest {
  private static ActorTestKit testKit;
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-20T02:00:00Z"));

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()));
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static List<List<SessionInput>> requests() throws Exception {
    return List.of(
        List.of(new SessionInput.Start("e0", null, "1.0", "v1", Map.of("channel", "web")),
            AgentSessionTest.msg("e1", "user", "call me at 13812345678"),
            new SessionInput.ToolCall("e2", null, "c-e2", "search", JSON.readTree("{\"q\":\"weather\"}"), null, null,
                120L, null, true),
            new SessionInput.Message("e3", null, "assistant", "let me look", null, null)),
        List.of(new SessionInput.ToolResult("e4", null, "e2", JSON.readTree("{\"temp\":21}"), true, 30L, null),
            AgentSessionTest.msg("e1", "user", "call me at 13812345678"),
            new SessionInput.Message("e3", null, "assistant", "let me look", "chatcmpl-1", 800L)),
        List.of(new SessionInput.Feedback("f1", null, "THUMBS_UP", null, "f1", "web", null),
            new SessionInput.Result("e5", null, "SUCCESS", "done")),
        List.of(new SessionInput.Feedback("f2", null, "RATING", 4.0, "f2", "web", "chatcmpl-1")));
  }

  @Test
  void theStateAfterEachWriteIsTheOneItsEventsGiveAppliedOneByOne() throws Exception {
    var kit = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-drafts", AgentSessionTest.settings("full", 1.0), clock, null));
    State applied = State.empty();
    for (List<SessionInput> inputs : requests()) {
      CommandResultWithReply<Command, Event, State, RecordReply> r =
          kit.runCommand(reply -> new AgentSession.Record("agent-a", inputs, reply));
      assertInstanceOf(AgentSession.Recorded.class, r.reply());
      for (Event e : r.events()) applied = applied.apply(e);
      assertEquals(applied, r.state());
      clock.advance(java.time.Duration.ofSeconds(1));
    }
    assertEquals(SessionModel.Status.COMPLETED, applied.status());
    assertEquals(applied, kit.restart().state(), "recovery applies the journal's events to the same state");
  }

  @Test
  void thePlansStatesAreItsEventsAppliedInOrder() throws Exception {
    RecordPlanner planner = new RecordPlanner("s-plan", AgentSessionTest.settings("full", 1.0));
    State state = State.empty();
    Instant now = Instant.parse("2026-11-20T02:00:00Z");
    for (List<SessionInput> inputs : requests()) {
      Store store = assertInstanceOf(Store.class, planner.plan(state, "agent-a", inputs, now));
      assertEquals(store.events().size(), store.states().size());
      List<State> expected = new ArrayList<>();
      for (Event e : store.events()) expected.add(state = state.apply(e));
      assertEquals(expected, store.states());
      now = now.plusSeconds(1);
    }
  }
}
