package io.otl.core.model;

import static io.otl.core.model.ModelJournal.T0;
import static io.otl.core.model.ModelJournal.concat;
import static io.otl.core.model.ModelJournal.ready;
import static io.otl.core.model.ModelJournal.replay;
import static io.otl.core.model.ModelJournal.stable;
import static io.otl.core.model.ModelJournal.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.entity.Rejection;
import io.otl.core.model.ModelEvents.EvaluationStarted;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.OfflineGateFailed;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutResumed;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelEvents.StepAdvanced;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRegistered;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The pure event handler (also what replays and the audit's "state as of T" run): each fact's
 * effect on versions, stable and rollout as design §3.3 and the package's choices describe it —
 * one candidate in rollout, the step's figures reset at each step while the dedup sets last the
 * whole rollout, PAUSED holding the ratio, a resume restarting the step's duration, promotion
 * retiring the previous stable until its retention deadline, a rollback of the stable restoring it.
 */
class ModelEventHandlerTest {

  private static final List<Double> STEPS = ModelSettings.defaults().steps();
  private static final Instant T1 = T0.plusSeconds(60);
  private static final Instant T2 = T0.plusSeconds(120);

  private static HistoryEntry last(State s, String v) {
    List<HistoryEntry> h = version(s, v).history();
    return h.get(h.size() - 1);
  }

  private static OutcomeRecorded outcome(String session, String v, boolean success) {
    return new OutcomeRecorded(session, v, success, 5.0, 1, 0, 900.0, T1);
  }

  private static List<Event> canary() {
    return concat(stable("v1", T0), ready("v2", T0), List.of(new RolloutStarted("v2", "v1", STEPS, "auto-deploy", T0)));
  }

  @Test
  void theHistorySaysWhereAVersionCameFromAndWhatItWasComparedWith() {
    State s = replay(List.of(
        new VersionRegistered("m", "s3://m", "http://m", null, Map.of(), true, T0),
        new VersionRegistered("c", "s3://c", "http://c", null, Map.of(), false, T0),
        new VersionRegistered("j", "s3://j", "http://j", "job-7", Map.of(), false, T0),
        new EvaluationStarted("m", null, T0),
        new EvaluationStarted("c", "v1", T0)));
    assertEquals(new HistoryEntry(VersionState.REGISTERED, null, T0, "registered by hand"),
        version(s, "m").history().get(0));
    assertEquals("registered as candidate", version(s, "c").history().get(0).reason());
    assertEquals("registered from job job-7", last(s, "j").reason());
    assertEquals(VersionState.REGISTERED, version(s, "j").state());
    assertEquals(new HistoryEntry(VersionState.EVALUATING, null, T0, "offline evaluation (no stable yet)"),
        last(s, "m"));
    assertEquals("offline evaluation against v1", last(s, "c").reason());
  }

  @Test
  void theOfflineGateEndsInReadyRejectedOrNoEvidenceAndSupersessionRetiresForGood() {
    List<Event> evaluating = List.of(
        new VersionRegistered("v2", "s3://v2", "http://v2", "job-2", Map.of(), false, T0),
        new EvaluationStarted("v2", null, T0));
    State rejected = replay(concat(evaluating, List.of(new OfflineGateFailed("v2", List.of(),
        List.of("task-success-rate: too low", "response-latency: too slow"), T1))));
    assertEquals(new HistoryEntry(VersionState.REJECTED, null, T1,
        "offline gate failed: task-success-rate: too low; response-latency: too slow"), last(rejected, "v2"));

    State noEvidence =
        replay(concat(evaluating, List.of(new EvalEvidence.GateWithoutEvidence("v2", "no evidence", T1))));
    assertEquals(VersionState.NO_EVIDENCE, version(noEvidence, "v2").state());
    assertEquals(T1, last(noEvidence, "v2").at());
    assertEquals("no evidence", last(noEvidence, "v2").reason(), "the history says why (docs/rollout.md)");

    State superseded = replay(concat(ready("v2", T0), ready("v3", T0),
        List.of(new Supersession.CandidateSuperseded("v2", "v3", T1))));
    VersionRecord v2 = version(superseded, "v2");
    assertEquals(VersionState.RETIRED, v2.state());
    assertEquals(T1, v2.retiredAt());
    assertNull(v2.retainedUntil(), "a superseded candidate was never stable: nothing to restore");
    assertTrue(superseded.models().restorablePrevious(T1).isEmpty());
  }

  @Test
  void aRolloutStartsAtTheFirstRatioOfItsOwnPlan() {
    RollingOut r = assertInstanceOf(RollingOut.class, replay(canary()));
    assertEquals(new HistoryEntry(VersionState.CANARY, 0.05, T0, "auto-deploy: canary against v1"), last(r, "v2"));
    assertEquals(Rollout.start("v2", "v1", STEPS, T0), r.rollout());
    assertEquals(0.05, r.rollout().ratio());
    assertEquals("v1", r.models().stable(), "the stable keeps serving during the canary");
  }

  @Test
  void outcomesCountForTheStepAndTheVersionAndTheirSessionsForTheWholeRollout() {
    List<Event> events = canary();
    events.add(outcome("s1", "v2", true));
    events.add(outcome("s2", "v1", false));
    RollingOut r = (RollingOut) replay(events);
    assertEquals(1, r.rollout().candidateStep().sessions());
    assertEquals(1.0, r.rollout().candidateStep().value(Metric.TASK_SUCCESS_RATE));
    assertEquals(1, r.rollout().stableStep().sessions());
    assertEquals(0.0, r.rollout().stableStep().value(Metric.TASK_SUCCESS_RATE));
    assertEquals(1, version(r, "v2").online().sessions());
    assertEquals(1, version(r, "v1").online().sessions());
    assertTrue(r.rollout().candidateSessions().contains("s1"));
    assertFalse(r.rollout().candidateSessions().contains("s2"));
    assertTrue(r.rollout().stableSessions().contains("s2"));

    events.add(new StepAdvanced("v2", 0, 1, 0.20, List.of(), T2));
    RollingOut next = (RollingOut) replay(events);
    assertEquals(new HistoryEntry(VersionState.RAMP, 0.20, T2, "step 0 passed, step 1 starts"), last(next, "v2"));
    assertEquals(1, next.rollout().step());
    assertEquals(T2, next.rollout().stepStartedAt());
    assertEquals(OutcomeAggregates.EMPTY, next.rollout().candidateStep(), "each step measures afresh");
    assertEquals(OutcomeAggregates.EMPTY, next.rollout().stableStep());
    assertTrue(next.rollout().candidateSessions().contains("s1"), "deduplication lasts the whole rollout");
    assertTrue(next.rollout().stableSessions().contains("s2"));
    assertEquals(1, version(next, "v2").online().sessions(), "online figures are cumulative");
  }

  @Test
  void pausedHoldsTheRatioAndTheFiguresAndAResumeRestartsTheStepsDuration() {
    List<Event> events = canary();
    events.add(new StepAdvanced("v2", 0, 1, 0.20, List.of(), T0));
    events.add(outcome("s1", "v2", true));
    events.add(new RolloutPaused("v2", false, "manual pause", List.of(), T1));
    RollingOut paused = (RollingOut) replay(events);
    assertEquals(new HistoryEntry(VersionState.PAUSED, 0.20, T1, "manual pause"), last(paused, "v2"));
    assertTrue(paused.rollout().paused());
    assertEquals(T0, paused.rollout().stepStartedAt());
    assertEquals(1, paused.rollout().candidateStep().sessions());

    events.add(new RolloutResumed("v2", T2));
    RollingOut resumed = (RollingOut) replay(events);
    assertEquals(new HistoryEntry(VersionState.RAMP, 0.20, T2, "resumed at step 1"), last(resumed, "v2"));
    assertFalse(resumed.rollout().paused());
    assertEquals(T2, resumed.rollout().stepStartedAt());
    assertEquals(1, resumed.rollout().candidateStep().sessions(), "the step keeps what it measured");

    // Resumed in the first step it is a CANARY again.
    List<Event> first = canary();
    first.add(new RolloutPaused("v2", false, "manual pause", List.of(), T1));
    first.add(new RolloutResumed("v2", T2));
    assertEquals(VersionState.CANARY, version(replay(first), "v2").state());
  }

  @Test
  void promotionRetiresThePreviousStableUntilItsRetentionDeadline() {
    Instant until = T1.plus(Duration.ofDays(7));
    List<Event> events = canary();
    events.add(new VersionPromoted("v2", "v1", until, true, "all rollout steps passed", List.of(), T1));
    Idle s = assertInstanceOf(Idle.class, replay(events));
    assertEquals("v2", s.models().stable());
    assertEquals(new HistoryEntry(VersionState.STABLE, 1.0, T1, "all rollout steps passed"), last(s, "v2"));
    VersionRecord v1 = version(s, "v1");
    assertEquals(VersionState.RETIRED, v1.state());
    assertEquals(T1, v1.retiredAt());
    assertEquals(until, v1.retainedUntil());
    assertEquals("superseded by v2; restorable until " + until, last(s, "v1").reason());
    assertEquals("v1", s.models().restorablePrevious(until.minusMillis(1)).orElseThrow().version());
    assertTrue(s.models().restorablePrevious(until).isEmpty(), "restorable until, not at, the deadline");
  }

  @Test
  void rollingBackACandidateKeepsTheStableAndRollingBackTheStableRestoresThePrevious() {
    List<Event> events = canary();
    events.add(new VersionRolledBack("v2", true, "degraded", List.of(), null, T1));
    Idle back = assertInstanceOf(Idle.class, replay(events));
    assertEquals("v1", back.models().stable());
    assertEquals(new HistoryEntry(VersionState.ROLLED_BACK, 0.0, T1, "degraded"), last(back, "v2"));

    List<Event> promoted = canary();
    promoted.add(new VersionPromoted("v2", "v1", T1.plus(Duration.ofDays(7)), true, "passed", List.of(), T1));
    promoted.add(new VersionRolledBack("v2", false, "manual rollback", List.of(), "v1", T2));
    Idle restored = assertInstanceOf(Idle.class, replay(promoted));
    assertEquals("v1", restored.models().stable());
    VersionRecord v1 = version(restored, "v1");
    assertEquals(VersionState.STABLE, v1.state());
    assertNull(v1.retiredAt(), "back in service: no longer retired");
    assertNull(v1.retainedUntil());
    assertEquals(new HistoryEntry(VersionState.STABLE, 1.0, T2, "restored by the rollback of v2"),
        last(restored, "v1"));
    assertEquals(VersionState.ROLLED_BACK, version(restored, "v2").state());
  }

  @Test
  void theStateRefusesUnknownVersionsAndKeepsRecordsImmutable() {
    State s = replay(stable("v1", T0));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.models().require("v9"));
    assertEquals("unknown version v9", e.getMessage());
    VersionRecord noMetrics = new VersionRecord("v", "a", "e", null, false, null, VersionState.READY, T0, null, null,
        OutcomeAggregates.EMPTY, List.of());
    assertEquals(Map.of(), noMetrics.offlineMetrics());
    assertEquals(1, new ModelState.Models(List.of(noMetrics), null, null).versions().size());
    assertEquals(Map.of(), new ModelState.Models(List.of(), null, null).deployments());
    assertTrue(s.models().oldestReady().isEmpty());
    State two = replay(concat(ready("v3", T0), ready("v2", T0)));
    assertEquals("v3", two.models().oldestReady().orElseThrow().version(), "registration order, not name order");
  }

  @Test
  void transitionsAreTaggedForTheReadSideAndOutcomesAreNot() {
    assertEquals(Set.of(ModelEvents.TRANSITIONS_TAG), ModelVersion.tagsOf(new RolloutResumed("v2", T0)));
    assertEquals(Set.of(), ModelVersion.tagsOf(outcome("s1", "v2", true)));
    assertEquals("model-transitions", ModelEvents.TRANSITIONS_TAG);
    State start = ModelVersion.initialState();
    assertEquals(new Idle(ModelState.Models.EMPTY), start);
    State s = ModelVersion.applyEvent(replay(canary()), new RolloutResumed("v2", T1));
    assertEquals(VersionState.CANARY, version(s, "v2").state());
    assertEquals("v2", ModelVersion.view("a1", s, Duration.ofHours(1)).candidate());
    assertEquals(0.05, ModelVersion.routingTable(s).candidateRatio());
  }

  @Test
  void refusalsMapToTheHttpKindsTheProtocolDocuments() {
    // NOT_FOUND → 404, ALREADY_EXISTS → 409, INVALID_TRANSITION → 409, INVALID_INPUT → 400, NO_VERSION → 404.
    assertEquals(Rejection.Kind.NOT_FOUND, new Failure(ErrorCode.NOT_FOUND, "x").rejectionKind());
    assertEquals(Rejection.Kind.NOT_FOUND, new Failure(ErrorCode.NO_VERSION, "x").rejectionKind());
    assertEquals(Rejection.Kind.CONFLICT, new Failure(ErrorCode.ALREADY_EXISTS, "x").rejectionKind());
    assertEquals(Rejection.Kind.INVALID_TRANSITION, new Failure(ErrorCode.INVALID_TRANSITION, "x").rejectionKind());
    assertEquals(Rejection.Kind.INVALID_INPUT, new Failure(ErrorCode.INVALID_INPUT, "x").rejectionKind());
    State s = replay(stable("v1", T0));
    assertEquals(new Failure(ErrorCode.INVALID_TRANSITION, "cannot promote v1: it is STABLE"),
        Failure.invalidTransition("promote", version(s, "v1")));
    assertEquals("version v1 already exists (it is STABLE)", Failure.alreadyExists(version(s, "v1")).message());
    assertEquals("version v9 is not registered", Failure.notFound("v9").message());
    assertSame(ErrorCode.INVALID_INPUT, Failure.invalidInput("bad").code());
  }
}
