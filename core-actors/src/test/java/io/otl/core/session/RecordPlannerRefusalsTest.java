package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.AgentSession.RejectionCode;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Plan;
import io.otl.core.session.RecordPlanner.Refused;
import io.otl.core.session.RecordPlanner.Store;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which requests a session refuses, in which order, with which code and field (design §3.1, §7.1). */
class RecordPlannerRefusalsTest {
  static final Instant NOW = Instant.parse("2026-11-20T02:00:00Z");
  static final SessionSettings FULL = settings("full", 1.0);

  static SessionSettings settings(String mode, double rate) {
    return new SessionSettings(mode, rate, true, List.of("phone", "id_card", "email"), List.of("secret-\\d+"),
        1000, Duration.ofMinutes(30), Duration.ofDays(7), Duration.ofMinutes(2),
        SessionSettings.RewardWeights.defaults());
  }

  static SessionInput.Message msg(String id, String role, String content) {
    return new SessionInput.Message(id, null, role, content, null, null);
  }

  static Rejected refused(Plan plan) {
    return assertInstanceOf(Refused.class, plan).rejection();
  }

  static void assertRefused(Plan plan, RejectionCode code, String field) {
    Rejected r = refused(plan);
    assertEquals(code, r.code(), r.message());
    assertEquals(field, r.field(), r.message());
  }

  /** A session of agent a1 that holds one user message, received at {@code NOW}. */
  static State active(RecordPlanner planner) {
    Store store = (Store) planner.plan(State.empty(), "a1", List.of(msg("m1", "user", "hi")), NOW);
    State s = State.empty();
    for (AgentSession.Event e : store.events()) s = s.apply(e);
    return s;
  }

  @Test
  void anInvalidSessionIdIsRefusedBeforeAnythingElse() {
    Plan plan = new RecordPlanner("not a valid id", FULL).plan(State.empty(), null, List.of(), NOW);
    assertRefused(plan, RejectionCode.INVALID, "sessionId");
    assertTrue(refused(plan).message().startsWith("sessionId may contain only"), refused(plan).message());
  }

  @Test
  void anUnknownSessionNeedsTheAgentId() {
    Plan plan = new RecordPlanner("s1", FULL).plan(State.empty(), null, List.of(msg("m1", "user", "hi")), NOW);
    assertRefused(plan, RejectionCode.NOT_FOUND, "sessionId");
    assertEquals("session s1 is unknown; its first events must name the agentId", refused(plan).message());
  }

  @Test
  void theAgentIdFollowsTheIdRulesOnEveryRequest() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    assertRefused(planner.plan(State.empty(), "not valid", List.of(msg("m1", "user", "hi")), NOW),
        RejectionCode.INVALID, "agentId");
    assertInstanceOf(Store.class, planner.plan(State.empty(), "a1", List.of(msg("m1", "user", "hi")), NOW));
    // A valid agent id seen before does not excuse the next, different one.
    assertRefused(planner.plan(State.empty(), "a/2", List.of(msg("m1", "user", "hi")), NOW),
        RejectionCode.INVALID, "agentId");
  }

  @Test
  void aSessionBelongsToItsFirstAgentAndAnOmittedAgentMeansThatOne() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    State s = active(planner);
    Plan other = planner.plan(s, "a2", List.of(msg("m2", "user", "hi")), NOW);
    assertRefused(other, RejectionCode.CONFLICT, "agentId");
    assertEquals("session s1 belongs to agent a1, not a2", refused(other).message());
    Store same = assertInstanceOf(Store.class, planner.plan(s, null, List.of(msg("m2", "user", "again")), NOW));
    assertEquals(new AgentSession.Recorded(1, 0, true), same.reply());
  }

  @Test
  void aRequestNeedsAtLeastOneEvent() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    for (List<SessionInput> none : java.util.Arrays.<List<SessionInput>>asList(null, List.of())) {
      Plan plan = planner.plan(State.empty(), "a1", none, NOW);
      assertRefused(plan, RejectionCode.INVALID, "events");
      assertEquals("at least one event is required", refused(plan).message());
    }
  }

  @Test
  void anInvalidEventIsNamedByItsPositionAndField() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    Plan plan = planner.plan(State.empty(), "a1", List.of(msg("m1", "user", "hi"), msg("m2", null, "x")), NOW);
    assertRefused(plan, RejectionCode.INVALID, "events[1].role");
    assertEquals("events[1].role is required: system, user, assistant or tool", refused(plan).message());
    Plan nullEvent = planner.plan(State.empty(), "a1", java.util.Arrays.asList(msg("m1", "user", "hi"), null), NOW);
    assertRefused(nullEvent, RejectionCode.INVALID, "events[1]");
    assertEquals("events[1] is null", refused(nullEvent).message());
  }

  @Test
  void feedbackOnAResponseTheSessionDoesNotHoldIsNotFoundAndTheIdIsNotEchoed() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    var question = new SessionInput.Message("m1", null, "user", "q", "r1", null);
    var answer = new SessionInput.Message("m2", null, "assistant", "a", "r2", null);
    Store asked = (Store) planner.plan(State.empty(), "a1", List.of(question, answer), NOW);
    State s = State.empty();
    for (AgentSession.Event e : asked.events()) s = s.apply(e);

    // r1 names the user's message: only an assistant message is a response.
    Plan plan = planner.plan(s, "a1", List.of(msg("m3", "user", "x"), feedbackOn("f1", "r1")), NOW);
    assertRefused(plan, RejectionCode.NOT_FOUND, "events[1].msgId");
    assertFalse(refused(plan).message().contains("r1"), refused(plan).message());
    assertRefused(planner.plan(s, "a1", List.of(feedbackOn("f1", "r3")), NOW), RejectionCode.NOT_FOUND,
        "events[0].msgId");
    assertEquals(new AgentSession.Recorded(1, 0, true),
        assertInstanceOf(Store.class, planner.plan(s, "a1", List.of(feedbackOn("f1", "r2")), NOW)).reply());
  }

  /**
   * Builds before hex tokens were opaque stored an upstream id holding a phone-shaped run with a
   * placeholder: feedback naming the id as the upstream gave it still reaches that response, and is
   * stored under the id the session holds.
   */
  @Test
  void feedbackReachesAResponseWhoseIdAnEarlierBuildDesensitized() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    State s = State.empty();
    for (AgentSession.Event e : List.<AgentSession.Event>of(
        new AgentSession.SessionStarted("start", NOW, NOW, "a1", null, null, java.util.Map.of()),
        new AgentSession.MessageRecorded("m1", NOW, NOW, SessionModel.Role.assistant, "a",
            "chatcmpl-e56b96ab1a[PHONE]c0d5beb3db6", null))) {
      s = s.apply(e);
    }
    Store fed = assertInstanceOf(Store.class,
        planner.plan(s, "a1", List.of(feedbackOn("f1", "chatcmpl-e56b96ab1a13478386902c0d5beb3db6")), NOW));
    assertEquals("chatcmpl-e56b96ab1a[PHONE]c0d5beb3db6",
        ((AgentSession.FeedbackRecorded) fed.events().get(0)).msgId());
    assertRefused(planner.plan(s, "a1", List.of(feedbackOn("f2", "chatcmpl-e56b96ab1a1347838690Zc0d5beb3db6")), NOW),
        RejectionCode.NOT_FOUND, "events[0].msgId");
  }

  private static SessionInput.Feedback feedbackOn(String id, String msgId) {
    return new SessionInput.Feedback(id, null, "THUMBS_UP", null, id, "web", msgId);
  }

  @Test
  void aCompletedSessionTakesOnlyFeedbackAndOnlyWithinTheWindow() {
    RecordPlanner planner = new RecordPlanner("s1", FULL);
    Store done = (Store) planner.plan(active(planner), "a1",
        List.of(new SessionInput.Result("r1", null, "SUCCESS", null)), NOW);
    State s = active(planner);
    for (AgentSession.Event e : done.events()) s = s.apply(e);

    Plan message = planner.plan(s, "a1", List.of(msg("m9", "user", "more")), NOW);
    assertRefused(message, RejectionCode.CONFLICT, "events[0]");
    assertEquals("session s1 was completed at " + NOW + "; only feedback is accepted now, not message",
        refused(message).message());

    var late = List.<SessionInput>of(new SessionInput.Feedback("f1", null, "THUMBS_UP", null, "f1", "web"));
    Instant windowEnd = NOW.plus(Duration.ofDays(7));
    assertInstanceOf(Store.class, planner.plan(s, "a1", late, windowEnd), "the window's last instant is inside it");
    Plan afterWindow = planner.plan(s, "a1", late, windowEnd.plusMillis(1));
    assertRefused(afterWindow, RejectionCode.CONFLICT, "events[0]");
    assertEquals("the feedback window of session s1 closed at " + windowEnd, refused(afterWindow).message());
  }

  @Test
  void aSessionIsSampledOnceWholeAndASampledOutOneStoresNothing() {
    // Rate 0: every new session is dropped; a session already kept is never dropped later.
    RecordPlanner planner = new RecordPlanner("s1", settings("sampled", 0.0));
    Store dropped = assertInstanceOf(Store.class,
        planner.plan(State.empty(), "a1", List.of(msg("m1", "user", "hi")), NOW));
    assertEquals(List.of(), dropped.events());
    assertEquals(new AgentSession.Recorded(0, 0, false), dropped.reply());

    // Its later feedback names no agent (AgentScope's rate/thumbs): acknowledged the same way, not a 404.
    SessionInput.Feedback rating = new SessionInput.Feedback(null, null, "RATING", 5.0, null, "agentscope");
    Store late = assertInstanceOf(Store.class, planner.plan(State.empty(), null, List.of(rating), NOW));
    assertEquals(List.of(), late.events());
    assertEquals(new AgentSession.Recorded(0, 0, false), late.reply());
    SessionInput.Feedback bad = new SessionInput.Feedback(null, null, "RATING", 9.0, null, "agentscope");
    assertRefused(planner.plan(State.empty(), null, List.of(bad), NOW), RejectionCode.INVALID, "events[0].value");
    // A session sampling keeps is still unknown until its first events name the agent.
    assertRefused(new RecordPlanner("s1", FULL).plan(State.empty(), null, List.of(rating), NOW),
        RejectionCode.NOT_FOUND, "sessionId");

    State kept = active(new RecordPlanner("s1", FULL));
    Store stored = (Store) planner.plan(kept, "a1", List.of(msg("m2", "user", "hi")), NOW);
    assertEquals(new AgentSession.Recorded(1, 0, true), stored.reply());
    assertEquals(1, stored.events().size());
  }
}
