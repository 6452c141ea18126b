package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static io.otl.core.session.RecordPlannerRefusalsTest.msg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.RewardRevised;
import io.otl.core.session.AgentSession.SessionStarted;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.TaskResultRecorded;
import io.otl.core.session.AgentSession.TrajectoryCompleted;
import io.otl.core.session.RecordPlanner.Store;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The events one request becomes: implicit start, duplicates, completion and reward revisions (design §3.1). */
class RecordPlannerEventsTest {
  private static final Instant CLIENT_AT = Instant.parse("2026-11-20T01:59:00Z");
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = State.empty();

  private Store record(Instant now, SessionInput... inputs) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", List.of(inputs), now));
    for (Event e : store.events()) state = state.apply(e);
    return store;
  }

  private static List<Class<?>> types(Store store) {
    List<Class<?>> types = new ArrayList<>();
    for (Event e : store.events()) types.add(e.getClass());
    return types;
  }

  @Test
  void theFirstEventOfASessionWithoutAStartStartsItWithTheEventsTime() {
    Store store = record(NOW, new SessionInput.Message("m1", CLIENT_AT, "user", "hi", null, null));
    assertEquals(new Recorded(1, 0, true), store.reply());
    assertEquals(new SessionStarted("start:m1", CLIENT_AT, NOW, "a1", null, null, Map.of()), store.events().get(0));
    MessageRecorded m = (MessageRecorded) store.events().get(1);
    assertEquals(CLIENT_AT, m.at());
    assertEquals(NOW, m.recordedAt());
    assertEquals(Status.ACTIVE, state.status());
    // The next input brings no second start, and one without a time takes the server's.
    Store next = record(NOW, msg("m2", "assistant", "hello"));
    assertEquals(List.of(MessageRecorded.class), types(next));
    assertEquals(NOW, next.events().get(0).at());
  }

  @Test
  void aSessionStartsAtTheEarliestTimeOfItsFirstRequestNotAtItsFirstInputs() {
    // An OTel agent span comes first (it starts first) but its step is timed at its end, after the
    // chat span's messages: the session must not start after its first message.
    Instant agentEnd = CLIENT_AT.plusSeconds(5);
    Store store = record(NOW,
        new SessionInput.Reasoning("step", agentEnd, null, null, "invoke_agent a", "done"),
        new SessionInput.Message("m1", CLIENT_AT, "user", "hi", null, null),
        new SessionInput.Message("m2", CLIENT_AT.plusSeconds(2), "assistant", "hello", null, null));
    assertEquals(new SessionStarted("start:step", CLIENT_AT, NOW, "a1", null, null, Map.of()), store.events().get(0));
    assertEquals(CLIENT_AT, state.startedAt());
  }

  @Test
  void aStartInputIsTheStartDesensitized() {
    Store store = record(NOW, new SessionInput.Start("s", null, "v1", "m-13812345678",
        Map.of("mail", "alice@example.com")));
    assertEquals(List.of(new SessionStarted("s", NOW, NOW, "a1", "v1", "m-[PHONE]", Map.of("mail", "[EMAIL]"))),
        store.events());
  }

  @Test
  void repeatsWithinARequestAndAcrossRequestsAreCountedNotStored() {
    Store first = record(NOW, msg("m1", "user", "hi"), msg(null, "user", "same"), msg(null, "user", "same"),
        msg("m1", "user", "hi"));
    assertEquals(new Recorded(2, 2, true), first.reply());
    assertEquals(3, first.events().size(), "start, m1, the derived one");
    Store retry = record(NOW, msg(null, "user", "same"), msg("m1", "user", "changed text, same id"));
    assertEquals(new Recorded(0, 2, true), retry.reply());
    assertEquals(List.of(), retry.events());
  }

  @Test
  void aRetryOfARequestStoredUnderItsReleaseZeroOneIdIsADuplicate() {
    record(NOW, msg("m1", "user", "hi"));
    SessionInput old = msg(null, "user", "sent under 0.1.0");
    state = state.apply(new MessageRecorded(DerivedEventIds.legacy(old), NOW, NOW, Role.user, "x", null, null));
    assertEquals(new Recorded(0, 1, true), record(NOW, old).reply());
  }

  @Test
  void aResultSealsTheTrajectoryWithItsRewardQualityCountsAndResponses() {
    record(NOW, msg("m1", "user", "q"), new SessionInput.Message("m2", null, "assistant", "a", "r1", 120L),
        new SessionInput.Message("m3", null, "assistant", "b", null, 80L),
        new SessionInput.Feedback("f1", null, "RATING", 4.0, "f1", "web"));
    Store done = record(NOW, new SessionInput.Result("r", CLIENT_AT, "success", "ok"));
    assertEquals(List.of(TaskResultRecorded.class, TrajectoryCompleted.class), types(done));
    assertEquals(new TaskResultRecorded("r", CLIENT_AT, NOW, TaskStatus.SUCCESS, "ok"), done.events().get(0));
    TrajectoryCompleted c = (TrajectoryCompleted) done.events().get(1);
    assertEquals("completed", c.eventId());
    assertEquals(CLIENT_AT, c.at());
    assertEquals(NOW, c.recordedAt());
    assertEquals("a1", c.agentId());
    // success +1, rating 4 → +0.5: 1.5 clipped to 1; all five quality criteria met.
    assertEquals(1.0, c.reward(), 1e-12);
    assertEquals(1.0, c.qualityScore(), 1e-12);
    assertEquals(new Counts(3, 0, 0, 1), c.counts());
    assertEquals(TaskStatus.SUCCESS, c.outcome().status());
    assertEquals(120.0, c.outcome().latencyP95Ms(), 1e-12);
    assertEquals(List.of("r1"), c.msgIds());
    assertEquals(Status.COMPLETED, state.status());
  }

  @Test
  void lateFeedbackRevisesTheRewardFeedbackBeforeTheResultDoesNot() {
    Store early = record(NOW, msg("m1", "user", "q"),
        new SessionInput.Feedback("f0", null, "THUMBS_DOWN", null, null, "web"));
    assertEquals(3, early.events().size(), "start, message, feedback: no revision while active");
    record(NOW, new SessionInput.Result("r", null, "FAILURE", null));
    assertEquals(-1.0, state.reward(), 1e-12);

    Store late = record(NOW.plusSeconds(60), new SessionInput.Feedback("f1", null, "THUMBS_UP", null, "fb-1", "web"),
        new SessionInput.Feedback(null, null, "ADOPTED", null, "fb-2", "web"));
    assertEquals(new Recorded(2, 0, true), late.reply());
    assertEquals(List.of(FeedbackRecorded.class, RewardRevised.class, FeedbackRecorded.class, RewardRevised.class),
        types(late));
    RewardRevised first = (RewardRevised) late.events().get(1);
    assertEquals("reward:f1", first.eventId());
    assertEquals("fb-1", first.feedbackId());
    assertEquals("a1", first.agentId());
    assertEquals(NOW.plusSeconds(60), first.recordedAt());
    // failure −1, thumbs down −1, thumbs up +1 → −1; then adopted +0.5 → −0.5.
    assertEquals(-1.0, first.reward(), 1e-12);
    RewardRevised second = (RewardRevised) late.events().get(3);
    assertEquals("reward:feedback:fb-2", second.eventId(), "an id derived from the feedbackId");
    assertEquals(-0.5, second.reward(), 1e-12);
    // user turn, result, feedback; no assistant turn, no tool error: 4 of 5.
    assertEquals(0.8, second.qualityScore(), 1e-12);
    assertEquals(1, second.outcome().thumbsUp());
    assertEquals(List.of(), second.msgIds());
    assertEquals(-0.5, state.reward(), 1e-12);
  }

  /** Feedback is keyed by its feedbackId, not by the eventId that carries it (trial t105). */
  @Test
  void feedbackUnderAStoredFeedbackIdIsADuplicateWhateverItsEventId() {
    record(NOW, msg("m1", "user", "q"), new SessionInput.Feedback("evt-1", null, "RATING", 5.0, "fb-1", "kafka"),
        new SessionInput.Feedback("evt-0", null, "THUMBS_UP", null, null, "web"));
    Store again = record(NOW, new SessionInput.Feedback(null, null, "RATING", 5.0, "fb-1", "api"),
        new SessionInput.Feedback("evt-2", null, "RATING", 5.0, "fb-1", "web"),
        // one stored without a feedbackId holds its eventId as one
        new SessionInput.Feedback("evt-3", null, "THUMBS_UP", null, "evt-0", "web"));
    assertEquals(new Recorded(0, 3, true), again.reply());
    assertEquals(List.of(), again.events());
    // In one request too: the second input sees the first.
    Store both = record(NOW, new SessionInput.Feedback("evt-4", null, "ADOPTED", null, "fb-2", "web"),
        new SessionInput.Feedback("evt-5", null, "ADOPTED", null, "fb-2", "web"));
    assertEquals(new Recorded(1, 1, true), both.reply());
    assertEquals(3, state.feedback().size());
  }

  @Test
  void anIdleSessionIsSealedWithATimeoutResult() {
    record(NOW, msg("m1", "user", "q"), msg("m2", "assistant", "a"));
    Instant later = NOW.plusSeconds(3600);
    List<Event> events = planner.timedOut(state, later);
    assertEquals(new TaskResultRecorded("timeout", later, later, TaskStatus.TIMEOUT, "no activity for PT30M"),
        events.get(0));
    TrajectoryCompleted c = (TrajectoryCompleted) events.get(1);
    assertEquals(later, c.at());
    assertEquals(-0.5, c.reward(), 1e-12);
    assertEquals(0.8, c.qualityScore(), 1e-12, "everything but feedback");
    assertEquals(TaskStatus.TIMEOUT, c.outcome().status());
    assertEquals(2, events.size());
    assertNull(c.outcome().meanRating());
  }

  @Test
  void feedbackIsStoredUnderItsCanonicalKindWithAValueOnlyForARating() {
    Store store = record(NOW, msg("m1", "user", "q"),
        new SessionInput.Feedback("f1", null, "USER_RATING", 2.0, null, "web 13812345678"),
        new SessionInput.Feedback("f2", null, "thumbs_up", 5.0, "fb", null));
    FeedbackRecorded rating = (FeedbackRecorded) store.events().get(2);
    assertEquals(new FeedbackRecorded("f1", NOW, NOW, "f1", FeedbackKind.RATING, 2.0, "web [PHONE]"), rating);
    FeedbackRecorded up = (FeedbackRecorded) store.events().get(3);
    assertEquals(new FeedbackRecorded("f2", NOW, NOW, "fb", FeedbackKind.THUMBS_UP, null, null), up);
  }

  /**
   * Behind a round-robin balancer, the node that served the agent's next call stored the answer from
   * that call's history (no msgId, no figures) before the answering node's recording came: its
   * recording adds the details instead of being dropped as a duplicate (trial t21).
   */
  @Test
  void anAnswerStoredFromHistoryFirstGetsItsDetailsFromTheAnsweringNode() {
    record(NOW, msg("q", "user", "where is my order?"), msg("ans", "assistant", "on its way"));
    InferenceCall call = new InferenceCall("v1", "m1", 40L, 12, 4, "stop", null, null, null, null, null);
    Instant answeredAt = NOW.plusSeconds(1);
    Store late = record(NOW.plusSeconds(2), msg("q", "user", "where is my order?"),
        new SessionInput.Message("ans", answeredAt, "assistant", "on its way", "chatcmpl-7", 120L, call, null, null));
    assertEquals(new Recorded(1, 1, true), late.reply());
    assertEquals(List.of(AgentSession.MessageDetailsAdded.class), types(late));
    MessageRecorded answer = state.messages().get(1);
    assertEquals("chatcmpl-7", answer.msgId());
    assertEquals(120L, answer.latencyMs());
    assertEquals(call, answer.inference());
    assertEquals("on its way", answer.content());
    assertEquals(2, state.messages().size());
    // Feedback naming the answer now finds it, and the same recording sent again is a duplicate.
    record(NOW.plusSeconds(3), new SessionInput.Feedback("f1", null, "thumbs_up", null, null, "user", "chatcmpl-7"));
    assertEquals("chatcmpl-7", state.feedback().get(0).msgId());
    Store again = record(NOW.plusSeconds(4),
        new SessionInput.Message("ans", answeredAt, "assistant", "on its way", "chatcmpl-7", 120L, call, null, null));
    assertEquals(new Recorded(0, 1, true), again.reply());
  }

  /** Details never replace what an answer was stored with, and a completed session keeps what it was trained with. */
  @Test
  void detailsAreAddedOnlyToAnOpenSessionsAnswerStoredWithout() {
    record(NOW, msg("q", "user", "hi"), new SessionInput.Message("ans", null, "assistant", "hello", "chatcmpl-1", 5L));
    Store dup = record(NOW, new SessionInput.Message("ans", null, "assistant", "hello", "chatcmpl-2", 9L));
    assertEquals(new Recorded(0, 1, true), dup.reply());
    assertEquals("chatcmpl-1", state.messages().get(1).msgId());

    record(NOW, msg("u2", "user", "bye"), msg("a2", "assistant", "bye"),
        new SessionInput.Result("r", null, "SUCCESS", null));
    Store closed = record(NOW, new SessionInput.Message("a2", null, "assistant", "bye", "chatcmpl-3", 9L));
    assertEquals(new Recorded(0, 1, true), closed.reply());
    assertNull(state.messages().get(3).msgId());
  }
}
