package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.otl.core.entity.Rejection;
import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.ReasoningStepRecorded;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.AgentSession.RejectionCode;
import io.otl.core.session.AgentSession.RewardRevised;
import io.otl.core.session.AgentSession.SessionStarted;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.TaskResultRecorded;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.AgentSession.TrajectoryCompleted;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The event handler that the live entity, replay and "state as of T" share (design §3.1). */
class SessionStateTest {
  private static final Instant T0 = Instant.parse("2026-11-20T02:00:00Z");

  private static Instant t(int seconds) {
    return T0.plusSeconds(seconds);
  }

  private static ToolCallRecorded tool(String id, boolean success) {
    return new ToolCallRecorded(id, t(0), t(3), "c", "search", null, null, success, null);
  }

  @Test
  void aStartSetsTheAgentAndVersionsAndALaterStartFillsOnlyWhatItNames() {
    State s = State.empty().apply(new SessionStarted("s1", t(-5), t(1), "a1", "v1", null, Map.of("k", "1")));
    assertEquals(Status.ACTIVE, s.status());
    assertEquals("a1", s.agentId());
    assertEquals(t(-5), s.startedAt(), "the client's time of the start");
    assertEquals(t(1), s.lastActivityAt(), "activity is the server's time");
    s = s.apply(new SessionStarted("s2", t(2), t(3), "a1", null, "m7", Map.of("j", "2", "k", "3")));
    assertEquals("v1", s.agentVersion());
    assertEquals("m7", s.modelVersion());
    assertEquals(t(-5), s.startedAt(), "the first start stays the start");
    assertEquals(Map.of("k", "3", "j", "2"), s.metadata());
    s = s.apply(new SessionStarted("s3", t(4), t(5), "a1", "v2", null, null));
    assertEquals("v2", s.agentVersion());
    assertEquals("m7", s.modelVersion());
    assertEquals(List.of("s1", "s2", "s3"), List.copyOf(s.eventIds()));
  }

  /**
   * An OpenTelemetry exporter sends the chat span (it ends first) before the agent span that began
   * earlier: the start came timed at the chat, and the session "started" after its first step.
   */
  @Test
  void aStepOrMessageTimedBeforeTheStartMovesTheStartBackButFeedbackAndCompletionDoNot() {
    State s = State.empty().apply(new SessionStarted("start", t(10), t(11), "a1", null, null, Map.of()))
        .apply(new MessageRecorded("m", t(10), t(11), Role.user, "hi", null, null))
        .apply(new ReasoningStepRecorded("agent-span", t(8), t(20), 0, "invoke_agent", "done", null));
    assertEquals(t(8), s.startedAt());
    s = s.apply(new FeedbackRecorded("f", t(1), t(21), "f", FeedbackKind.ADOPTED, null, null));
    assertEquals(t(8), s.startedAt(), "feedback is about the session, not a step of it");
    assertEquals(Status.ACTIVE, s.status());
  }

  @Test
  void aFailedToolCallStaysUnexplainedUntilTheAgentAnswersOrReasons() {
    State s = State.empty().apply(tool("t1", false)).apply(tool("t2", false)).apply(tool("t3", true));
    assertEquals(2, s.unexplainedToolErrors());
    assertEquals(2, s.apply(new MessageRecorded("u", t(0), t(4), Role.user, "?", null, null)).unexplainedToolErrors(),
        "a user turn explains nothing");
    assertEquals(0, s.apply(new MessageRecorded("a", t(0), t(4), Role.assistant, "!", null, null))
        .unexplainedToolErrors());
    assertEquals(0, s.apply(new ReasoningStepRecorded("r", t(0), t(4), 0, "retry", null, null))
        .unexplainedToolErrors());
    assertEquals(2, s.apply(new FeedbackRecorded("f", t(0), t(4), "f", FeedbackKind.ADOPTED, null, null))
        .unexplainedToolErrors());
    assertEquals(new Counts(0, 3, 0, 0), s.counts());
  }

  @Test
  void eachEventLandsInItsPlaceAndMovesTheActivityTime() {
    var m = new MessageRecorded("m", t(0), t(1), Role.user, "q", null, null);
    var r = new ReasoningStepRecorded("r", t(0), t(2), 0, "think", null, null);
    var f = new FeedbackRecorded("f", t(0), t(3), "f", FeedbackKind.THUMBS_UP, null, null);
    var res = new TaskResultRecorded("x", t(0), t(4), TaskStatus.SUCCESS, null);
    State s = State.empty().apply(m).apply(r).apply(f).apply(res);
    assertEquals(List.of(m), s.messages());
    assertEquals(List.of(r), s.steps());
    assertEquals(List.of(f), s.feedback());
    assertEquals(res, s.result());
    assertEquals(t(4), s.lastActivityAt());
    assertEquals(new Counts(1, 0, 1, 1), s.counts());
    assertThrows(UnsupportedOperationException.class, () -> s.messages().add(m));
  }

  @Test
  void completionSealsAndARevisionChangesOnlyTheFigures() {
    Outcome outcome = new Outcome(TaskStatus.SUCCESS, null, 0, 0, 0, null);
    State s = State.empty().apply(new SessionStarted("s", t(0), t(0), "a1", null, null, Map.of()))
        .apply(new TrajectoryCompleted("completed", t(1), t(2), "a1", null, 0.5, 0.6, new Counts(0, 0, 0, 0), outcome));
    assertEquals(Status.COMPLETED, s.status());
    assertEquals(t(2), s.completedAt());
    assertEquals(0.5, s.reward());
    assertEquals(0.6, s.qualityScore());
    State revised = s.apply(new RewardRevised("reward:f", t(9), t(10), "a1", null, "f", -0.25, 0.8, outcome));
    assertEquals(Status.COMPLETED, revised.status());
    assertEquals(t(2), revised.completedAt(), "still completed when it was");
    assertEquals(-0.25, revised.reward());
    assertEquals(0.8, revised.qualityScore());
    assertEquals(t(10), revised.lastActivityAt());
  }

  @Test
  void anEmptySessionIsNewWithNothingInIt() {
    State s = State.empty();
    assertEquals(Status.NEW, s.status());
    assertNull(s.agentId());
    assertEquals(new Counts(0, 0, 0, 0), s.counts());
    assertEquals(0, s.eventIds().size());
  }

  @Test
  void aRejectionTellsTheEdgeWhichAnswerToGive() {
    assertEquals(Rejection.Kind.INVALID_INPUT, new Rejected(RejectionCode.INVALID, "f", "m").rejectionKind());
    assertEquals(Rejection.Kind.CONFLICT, new Rejected(RejectionCode.CONFLICT, "f", "m").rejectionKind());
    assertEquals(Rejection.Kind.NOT_FOUND, new Rejected(RejectionCode.NOT_FOUND, "f", "m").rejectionKind());
  }
}
