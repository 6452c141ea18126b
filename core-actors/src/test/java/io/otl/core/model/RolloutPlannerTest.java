package io.otl.core.model;

import static io.otl.core.model.ModelJournal.T0;
import static io.otl.core.model.ModelJournal.concat;
import static io.otl.core.model.ModelJournal.plan;
import static io.otl.core.model.ModelJournal.ready;
import static io.otl.core.model.ModelJournal.replay;
import static io.otl.core.model.ModelJournal.stable;
import static io.otl.core.model.ModelJournal.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.entity.Plan;
import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentRequested;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutResumed;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelEvents.StepAdvanced;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.serving.Serving;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Which version starts and what a step's look records (design §3.3, docs/rollout.md, the
 * package's "choices where the design is silent"), on states replayed from events, without an
 * entity: the first version without a base model is promoted directly, the oldest READY version
 * starts (FIFO) and only one at a time, a loading backend first records the deployment intent, and
 * a look at a step advances, promotes after the last step below 100 %, rolls back or pauses.
 */
class RolloutPlannerTest {

  private static final ModelSettings DEFAULTS = ModelSettings.defaults();
  private static final Serving STATIC = Serving.registeredEndpoints();
  private static final Serving LOADING = new Serving(new ModelJournal.LoadingBackend(), Optional.empty(),
      Duration.ofMillis(200), Duration.ofSeconds(30), 5);
  private static final Instant LATE = T0.plus(DEFAULTS.stepDuration());

  /** Step 1 (20 %): 400 stable and 100 candidate sessions keep the routed split. */
  private static final OutcomeAggregates STABLE_400 = sessions(7, 400, 0.85);
  private static final OutcomeAggregates SAME_100 = sessions(8, 100, 0.85);
  private static final OutcomeAggregates WORSE_100 = sessions(9, 100, 0.3);

  private static OutcomeAggregates sessions(long seed, int n, double success) {
    return SequentialTestTest.sessions(new SplittableRandom(seed), n, success, 1);
  }

  private static ModelSettings settings(String modelUpdate) {
    return ModelSettings.fromConfig(ConfigFactory.parseString("model-update { " + modelUpdate + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private static RolloutPlanner planner(ModelSettings s, Serving serving) {
    return new RolloutPlanner("a1", s, serving, new DeploymentPlanner("a1", serving));
  }

  /** The one rollout a plan starts, after its deployment's intent and confirmation. */
  private static RolloutStarted started(Plan<State, Event> p) {
    List<RolloutStarted> started = p.events().stream().filter(RolloutStarted.class::isInstance)
        .map(RolloutStarted.class::cast).toList();
    assertEquals(1, started.size(), p.events().toString());
    int at = p.events().indexOf(started.get(0));
    assertTrue(at >= 2 && p.events().get(at - 2) instanceof DeploymentRequested
        && p.events().get(at - 1) instanceof DeploymentConfirmed, p.events().toString());
    return started.get(0);
  }

  // ---- which version starts, and how -----------------------------------------------------------

  @Test
  void withoutAStableTheFirstVersionIsPromotedDirectlyAndTheEventSaysSo() {
    Plan<State, Event> p = plan(replay(ready("v1", T0)));
    planner(DEFAULTS, STATIC).startRollout(p, "v1", T0.plusSeconds(5), "manual promote");
    VersionPromoted e = assertInstanceOf(VersionPromoted.class, p.events().get(0));
    assertEquals(1, p.events().size());
    assertEquals(new VersionPromoted("v1", null, null, false,
        "manual promote: first version of agent a1, no stable to compare with; promoted directly",
        List.of(), T0.plusSeconds(5)), e);
    assertEquals("v1", p.state().models().stable());
    assertEquals(VersionState.STABLE, version(p.state(), "v1").state());

    Plan<State, Event> auto = plan(replay(ready("v1", T0)));
    planner(DEFAULTS, STATIC).startRollout(auto, "v1", T0, "auto-deploy");
    assertTrue(((VersionPromoted) auto.events().get(0)).automatic(), "auto-deploy is no operator's promote");
  }

  /**
   * Design §3.3, READY → DEPLOYING → CANARY under {@code static} too (it went READY → CANARY with no
   * deployment): nothing to call, so the intent, its confirmation and the canary are one write.
   */
  @Test
  void withAStableAndAStaticBackendTheDeploymentIsConfirmedAndTheCanaryStartsInOneWrite() {
    Plan<State, Event> p = plan(replay(concat(stable("v1", T0), ready("v2", T0))));
    Instant at = T0.plusSeconds(1);
    planner(DEFAULTS, STATIC).startRollout(p, "v2", at, "manual promote");
    assertEquals(List.of(
        new DeploymentRequested("v2", "static", "http://v2:8000", null, "manual promote", at),
        new DeploymentConfirmed("v2", "http://v2:8000", null, at),
        new RolloutStarted("v2", "v1", List.of(0.05, 0.20, 0.50, 1.0), "manual promote", at)), p.events());
    RollingOut r = assertInstanceOf(RollingOut.class, p.state());
    assertEquals(VersionState.CANARY, version(r, "v2").state());
    assertEquals(List.of(VersionState.REGISTERED, VersionState.EVALUATING, VersionState.READY,
        VersionState.DEPLOYING, VersionState.CANARY),
        version(r, "v2").history().stream().map(ModelState.HistoryEntry::state).toList());
    assertEquals(Deployments.Status.CONFIRMED, r.models().deployments().get("v2").status());
    assertEquals(0.05, r.rollout().ratio());
  }

  @Test
  void aBackendThatLoadsVersionsRecordsTheIntentAndNoRolloutYet() {
    Plan<State, Event> p = plan(replay(concat(stable("v1", T0), ready("v2", T0))));
    planner(DEFAULTS, LOADING).startRollout(p, "v2", T0, "manual promote");
    assertEquals(1, p.events().size());
    DeploymentRequested d = assertInstanceOf(DeploymentRequested.class, p.events().get(0));
    assertEquals("manual promote", d.reason());
    assertEquals(VersionState.DEPLOYING, version(p.state(), "v2").state());
    assertFalse(p.state() instanceof RollingOut, "nothing routes to an unconfirmed deployment");
  }

  @Test
  void autoDeployStartsTheOldestReadyVersionAndOnlyOne() {
    Plan<State, Event> p = plan(replay(concat(stable("v1", T0), ready("v2", T0), ready("v3", T0))));
    planner(DEFAULTS, STATIC).autoDeploy(p, T0);
    RolloutStarted started = started(p);
    assertEquals("v2", started.version());
    assertEquals("auto-deploy", started.reason());
    assertEquals(VersionState.READY, version(p.state(), "v3").state(), "v3 waits for v2's rollout");
  }

  @Test
  void autoDeployWithoutAStablePromotesTheFirstAndCanariesTheNextAgainstIt() {
    Plan<State, Event> p = plan(replay(concat(ready("v1", T0), ready("v2", T0))));
    planner(DEFAULTS, STATIC).autoDeploy(p, T0);
    assertEquals(4, p.events().size(), "v1 promoted; v2 deployed, confirmed, in canary");
    assertEquals("v1", assertInstanceOf(VersionPromoted.class, p.events().get(0)).version());
    assertNull(p.state().models().deployments().get("v1"), "the first version is promoted directly, as before");
    RolloutStarted next = started(p);
    assertEquals("v2", next.version());
    assertEquals("v1", next.stableVersion());
  }

  @Test
  void autoDeployWaitsWhenOffWhileAVersionDeploysAndWhenNothingIsReady() {
    State twoReady = replay(concat(stable("v1", T0), ready("v2", T0)));
    Plan<State, Event> off = plan(twoReady);
    planner(settings("auto-deploy = false"), STATIC).autoDeploy(off, T0);
    assertTrue(off.isEmpty());

    Plan<State, Event> loading = plan(replay(concat(stable("v1", T0), ready("v2", T0), ready("v3", T0))));
    planner(DEFAULTS, LOADING).autoDeploy(loading, T0);
    assertEquals(1, loading.events().size(), "one version deploys at a time");
    assertEquals("v2", ((DeploymentRequested) loading.events().get(0)).version());
    planner(DEFAULTS, LOADING).autoDeploy(loading, T0);
    assertEquals(1, loading.events().size(), "v2 still deploying blocks v3");

    Plan<State, Event> none = plan(replay(stable("v1", T0)));
    planner(DEFAULTS, STATIC).autoDeploy(none, T0);
    assertTrue(none.isEmpty());

    Plan<State, Event> rolling = plan(replay(concat(stable("v1", T0), ready("v2", T0), ready("v3", T0),
        List.of(new RolloutStarted("v2", "v1", DEFAULTS.steps(), "auto-deploy", T0)))));
    planner(DEFAULTS, STATIC).autoDeploy(rolling, T0);
    assertTrue(rolling.isEmpty(), "one candidate rolls out at a time");
  }

  // ---- a look at the current step ---------------------------------------------------------------

  /** v1 stable, v2 at {@code step} of the default plan with the given step figures, v3 READY. */
  private static RollingOut atStep(int step, boolean paused, OutcomeAggregates stable, OutcomeAggregates cand) {
    List<Event> events = concat(stable("v1", T0), ready("v2", T0), ready("v3", T0),
        List.of(new RolloutStarted("v2", "v1", DEFAULTS.steps(), "auto-deploy", T0)));
    for (int i = 1; i <= step; i++) {
      events.add(new StepAdvanced("v2", i - 1, i, DEFAULTS.steps().get(i), List.of(), T0));
    }
    if (paused) {
      events.add(new RolloutPaused("v2", false, "manual pause", List.of(), T0));
    }
    RollingOut r = (RollingOut) replay(events);
    Rollout o = r.rollout();
    return new RollingOut(r.models(), new Rollout(o.candidate(), o.stableVersion(), o.plan(), o.step(),
        o.stepStartedAt(), o.paused(), cand, stable, o.candidateSessions(), o.stableSessions(), o.scoredMarks()));
  }

  private static Plan<State, Event> evaluate(ModelSettings s, State state, Instant now) {
    Plan<State, Event> p = plan(state);
    planner(s, STATIC).evaluate(p, now);
    return p;
  }

  @Test
  void anIdleStateAndAQuietStepRecordNothing() {
    assertTrue(evaluate(DEFAULTS, replay(concat(stable("v1", T0), ready("v2", T0))), LATE).isEmpty());
    assertTrue(evaluate(DEFAULTS, atStep(1, false, STABLE_400, SAME_100), LATE.minusMillis(1)).isEmpty(),
        "before the step's deadline an equal candidate waits");
  }

  @Test
  void aPassedStepAdvancesToTheNextRatioWithItsEvidence() {
    Plan<State, Event> p = evaluate(DEFAULTS, atStep(1, false, STABLE_400, SAME_100), LATE);
    assertEquals(1, p.events().size());
    StepAdvanced e = assertInstanceOf(StepAdvanced.class, p.events().get(0));
    assertEquals("v2", e.version());
    assertEquals(1, e.fromStep());
    assertEquals(2, e.toStep());
    assertEquals(0.50, e.ratio());
    assertEquals(LATE, e.at());
    assertFalse(e.tests().isEmpty(), "the passed step's tests are the evidence for advancing");
    RollingOut r = (RollingOut) p.state();
    assertEquals(VersionState.RAMP, version(r, "v2").state());
    assertEquals(LATE, r.rollout().stepStartedAt());
  }

  @Test
  void afterTheLastStepBelowOneHundredPercentTheCandidateBecomesStableAndTheNextReadyStarts() {
    OutcomeAggregates stable = sessions(3, 150, 0.85);
    OutcomeAggregates cand = sessions(4, 150, 0.85);
    Plan<State, Event> p = evaluate(DEFAULTS, atStep(2, false, stable, cand), LATE);
    VersionPromoted promoted = assertInstanceOf(VersionPromoted.class, p.events().get(0));
    assertEquals("v2", promoted.version());
    assertEquals("v1", promoted.previousStable());
    assertEquals(LATE.plus(Duration.ofDays(7)), promoted.previousRetainedUntil(), "retain-previous 7 d");
    assertTrue(promoted.automatic());
    assertEquals("all rollout steps passed (last: RAMP at 0.50, step 2 of 3)", promoted.reason());
    assertFalse(promoted.tests().isEmpty());
    RolloutStarted next = started(p);
    assertEquals("v3", next.version());
    assertEquals("v2", next.stableVersion(), "the next candidate canaries against the new stable");
    assertEquals(4, p.events().size(), "promoted; v3 deployed, confirmed, in canary");
  }

  @Test
  void aDegradedCandidateIsRolledBackWithTheFiguresAndTheNextReadyStarts() {
    Plan<State, Event> p = evaluate(DEFAULTS, atStep(1, false, STABLE_400, WORSE_100), T0.plusSeconds(60));
    VersionRolledBack rb = assertInstanceOf(VersionRolledBack.class, p.events().get(0));
    assertEquals("v2", rb.version());
    assertTrue(rb.automatic());
    assertNull(rb.restoredStable(), "the stable keeps serving; nothing is restored");
    assertTrue(rb.reason().startsWith("degraded at RAMP at 0.20, step 1 of 3: "), rb.reason());
    assertTrue(rb.tests().stream().anyMatch(t -> t.degraded() && t.metric() == Metric.TASK_SUCCESS_RATE));
    assertTrue(rb.reason().contains(rb.tests().stream().filter(CanaryStatistics.TestResult::degraded)
        .findFirst().orElseThrow().summary()), rb.reason());
    assertEquals(VersionState.ROLLED_BACK, version(p.state(), "v2").state());
    RolloutStarted next = started(p);
    assertEquals("v3", next.version());
    assertEquals("v1", next.stableVersion());
  }

  @Test
  void withoutRollbackOnDegradationADegradedCandidateIsPausedOnce() {
    ModelSettings noRollback = settings("rollback-on-degradation = false");
    Plan<State, Event> p = evaluate(noRollback, atStep(1, false, STABLE_400, WORSE_100), LATE);
    assertEquals(1, p.events().size());
    RolloutPaused paused = assertInstanceOf(RolloutPaused.class, p.events().get(0));
    assertTrue(paused.automatic());
    assertTrue(paused.reason().startsWith("degraded at RAMP at 0.20, step 1 of 3: "), paused.reason());
    assertTrue(paused.reason().endsWith(" (rollback-on-degradation is off: paused for an operator)"),
        paused.reason());
    assertFalse(paused.tests().isEmpty());
    assertEquals(VersionState.PAUSED, version(p.state(), "v2").state());
    assertTrue(evaluate(noRollback, atStep(1, true, STABLE_400, WORSE_100), LATE).isEmpty(),
        "an already paused rollout is not paused again");
  }

  @Test
  void aSampleRatioMismatchPausesOnceUntilAnOperatorResumes() {
    // 400 against 400 sessions where 20 % were routed to the candidate.
    OutcomeAggregates cand = sessions(10, 400, 0.85);
    Plan<State, Event> p = evaluate(DEFAULTS, atStep(1, false, STABLE_400, cand), LATE);
    assertEquals(1, p.events().size());
    RolloutPaused paused = assertInstanceOf(RolloutPaused.class, p.events().get(0));
    assertTrue(paused.automatic());
    assertTrue(paused.reason().startsWith(CanaryRules.MISMATCH_PREFIX + " at RAMP at 0.20, step 1 of 3: "),
        paused.reason());
    assertTrue(paused.reason().endsWith("; no step-up until an operator resumes, promotes or rolls back (a "
        + "candidate whose figures read degraded once the split reads consistent again is still rolled back)"),
        paused.reason());
    assertTrue(evaluate(DEFAULTS, atStep(1, true, STABLE_400, cand), LATE).isEmpty());

    // The operator resumes: the same split no longer pauses this step, and it advances.
    Plan<State, Event> resumed = plan(p.state());
    resumed.add(new RolloutResumed("v2", T0));
    planner(DEFAULTS, STATIC).evaluate(resumed, LATE);
    assertInstanceOf(StepAdvanced.class, resumed.events().get(1));
  }

  /**
   * A mismatch pause holds the step, not a rollback: once the split reads consistent again, a candidate
   * whose figures read degraded is rolled back without waiting for an operator, rolling back being the
   * safe direction (trial t142 met it at 15 candidate and 37 stable sessions, sequential p 0.0011, while
   * the pause's reason still promised "no rollback on these figures"; the reason now says what happens).
   */
  @Test
  void aMismatchPauseStillRollsBackADegradedCandidateOnceTheSplitReadsConsistent() {
    Plan<State, Event> p = evaluate(DEFAULTS, atStep(1, false, STABLE_400, sessions(10, 400, 0.85)), LATE);
    RolloutPaused paused = assertInstanceOf(RolloutPaused.class, p.events().get(0));
    assertFalse(paused.reason().contains("no rollback"), paused.reason());
    Rollout o = ((RollingOut) p.state()).rollout();
    RollingOut laterInTheStep = new RollingOut(p.state().models(), new Rollout(o.candidate(), o.stableVersion(),
        o.plan(), o.step(), o.stepStartedAt(), true, WORSE_100, STABLE_400, o.candidateSessions(),
        o.stableSessions(), o.scoredMarks()));
    assertInstanceOf(VersionRolledBack.class, evaluate(DEFAULTS, laterInTheStep, LATE.plusSeconds(60)).events()
        .get(0));

    // With rollback-on-degradation off nothing rolls back on its own, and the reason promises nothing of it.
    ModelSettings noRollback = settings("rollback-on-degradation = false");
    RolloutPaused held = assertInstanceOf(RolloutPaused.class,
        evaluate(noRollback, atStep(1, false, STABLE_400, sessions(10, 400, 0.85)), LATE).events().get(0));
    assertFalse(held.reason().contains("rolled back"), held.reason());
    assertTrue(evaluate(noRollback, laterInTheStep, LATE.plusSeconds(60)).isEmpty());
  }

  @Test
  void theRolloutInWords() {
    assertEquals("CANARY at 0.05, step 0 of 3", RolloutPlanner.describe(atStep(0, false, OutcomeAggregates.EMPTY,
        OutcomeAggregates.EMPTY)));
    assertEquals("RAMP at 0.20, step 1 of 3", RolloutPlanner.describe(atStep(1, false, OutcomeAggregates.EMPTY,
        OutcomeAggregates.EMPTY)));
    assertEquals("PAUSED RAMP at 0.50, step 2 of 3", RolloutPlanner.describe(atStep(2, true,
        OutcomeAggregates.EMPTY, OutcomeAggregates.EMPTY)));
  }
}
