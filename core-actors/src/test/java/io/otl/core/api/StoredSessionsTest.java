package io.otl.core.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.session.AgentSession;
import io.otl.core.session.NewSessionRefusals;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionSettings;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What is asked of the journal before a session is addressed: nothing for a write a new session takes
 * or a session this node knows stored (the hot paths: events, feedback to a live session), one read
 * otherwise; and the refusal answered at the door is the one a new session's entity gives.
 */
class StoredSessionsTest {
  private final List<String> asked = new ArrayList<>();
  private final SessionSettings settings = SessionSettings.fromConfig(
      ConfigFactory.load().getConfig("agentscope.training"));

  private StoredSessions journalHolding(String... sessionIds) {
    Set<String> stored = Set.of(sessionIds);
    SessionOwners journal = id -> {
      asked.add(id);
      return CompletableFuture.completedFuture(stored.contains(id)
          ? Optional.of(new SessionOwners.Owner("a1", null)) : Optional.empty());
    };
    return new StoredSessions(journal, new NewSessionRefusals(settings, Clock.systemUTC()), 2);
  }

  @Test
  void aSessionIsReadFromTheJournalOnceAndThenRemembered() {
    StoredSessions sessions = journalHolding("s-old");
    assertTrue(sessions.mayBeStored("s-old").toCompletableFuture().join());
    assertTrue(sessions.mayBeStored("s-old").toCompletableFuture().join());
    assertFalse(sessions.mayBeStored("s-probe").toCompletableFuture().join());
    assertFalse(sessions.mayBeStored("s-probe").toCompletableFuture().join(), "an unknown session is not remembered");
    sessions.stored("s-new");
    assertTrue(sessions.mayBeStored("s-new").toCompletableFuture().join());
    assertEquals(List.of("s-old", "s-probe", "s-probe"), asked);
  }

  @Test
  void aFailedReadLetsTheSessionAnswer() {
    SessionOwners down = id -> CompletableFuture.failedFuture(new IllegalStateException("database down"));
    StoredSessions sessions = new StoredSessions(down, null, 10);
    assertTrue(sessions.mayBeStored("s-1").toCompletableFuture().join());
  }

  @Test
  void onlyWhatANewSessionRefusesIsRefusedAtTheDoor() {
    StoredSessions sessions = journalHolding();
    var user = new SessionInput.Message("u1", null, "user", "hello", null, null);
    assertNull(sessions.refusalIfNew("s-1", "a1", List.of(user)));
    AgentSession.Rejected robot = sessions.refusalIfNew("s-1", "a1",
        List.of(new SessionInput.Message("u1", null, "robot", "hello", null, null)));
    assertNotNull(robot);
    assertEquals("events[0].role", robot.field());
    AgentSession.Rejected feedback = sessions.refusalIfNew("s-1", null,
        List.of(new SessionInput.Feedback(null, null, "THUMBS_UP", null, null, "api")));
    assertEquals(AgentSession.RejectionCode.NOT_FOUND, feedback.code());
    // an answer and the feedback on it in one request: a new session takes both
    var answer = new SessionInput.Message("a1", null, "assistant", "hi", "m-1", null);
    assertNull(sessions.refusalIfNew("s-1", "a1", List.of(answer,
        new SessionInput.Feedback(null, null, "THUMBS_UP", null, null, "api", "m-1"))));
    assertEquals(List.of(), asked, "deciding a refusal reads nothing");
  }

  @Test
  void aMissingListOrInputIsRefusedNamingIt() {
    // The plan's walk over the inputs ran before the checks that refuse a null: a NullPointerException
    // failed the embedded API's stage (EmbeddedApiInputTest, CI on ddc6859e).
    StoredSessions sessions = journalHolding();
    assertEquals("events", sessions.refusalIfNew("s-1", "a1", null).field());
    var user = new SessionInput.Message("u1", null, "user", "hello", null, null);
    assertEquals("events[1]", sessions.refusalIfNew("s-1", "a1", java.util.Arrays.asList(user, null)).field());
  }
}
