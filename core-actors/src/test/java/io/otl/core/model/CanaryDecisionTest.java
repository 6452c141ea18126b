package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.model.CanaryRules.Action;
import io.otl.core.model.CanaryRules.Decision;
import io.otl.core.model.CanaryRules.Method;
import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.VersionState;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The step rule's remaining branches, each at one deterministic look (no simulated rollouts, so
 * they are cheap to rerun under every mutant): degradation while the step still waits, rollback or
 * pause by configuration, a paused step, the step's deadline to the instant, the fixed-level
 * method, and how the operator's resume is read from a history.
 */
class CanaryDecisionTest {
  private static final ModelSettings DEFAULTS = ModelSettings.defaults();
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant LATE = START.plus(DEFAULTS.stepDuration());

  /** Step 1 (20 %): 400 stable and 100 candidate sessions keep the intended split. */
  private static final OutcomeAggregates STABLE = SequentialTestTest.sessions(new SplittableRandom(7), 400, 0.85, 1);
  private static final OutcomeAggregates SAME = SequentialTestTest.sessions(new SplittableRandom(8), 100, 0.85, 1);
  private static final OutcomeAggregates WORSE = SequentialTestTest.sessions(new SplittableRandom(9), 100, 0.3, 1);

  private static Decision decide(ModelSettings s, Method method, boolean paused, OutcomeAggregates candidate,
      Instant now) {
    return CanaryRules.decide(s, method, s.steps(), 1, START, paused, STABLE, candidate, false, now);
  }

  @Test
  void aDegradedCandidateIsRolledBackEvenBeforeTheStepsDeadline() {
    Decision d = decide(DEFAULTS, Method.SEQUENTIAL, false, WORSE, START.plusSeconds(60));
    assertEquals(Action.ROLLBACK, d.action(), d.detail());
    TestResult success = d.tests().stream().filter(t -> t.metric() == Metric.TASK_SUCCESS_RATE).findFirst()
        .orElseThrow();
    assertTrue(success.degraded());
    assertTrue(d.detail().contains(success.summary()), d.detail());
    assertFalse(d.sampleRatio().mismatch());
    // Paused by an operator, the rule still reports the degradation.
    assertEquals(Action.ROLLBACK, decide(DEFAULTS, Method.SEQUENTIAL, true, WORSE, LATE).action());
  }

  @Test
  void withoutRollbackOnDegradationTheRolloutPausesInstead() {
    ModelSettings noRollback = ModelSettings.fromConfig(ConfigFactory.parseString(
            "model-update.rollback-on-degradation = false")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
    assertEquals(Action.PAUSE_DEGRADED, decide(noRollback, Method.SEQUENTIAL, false, WORSE, LATE).action());
  }

  @Test
  void anEqualCandidateWaitsForTheDeadlineToTheInstantAndNotWhilePaused() {
    Decision early = decide(DEFAULTS, Method.SEQUENTIAL, false, SAME, LATE.minusMillis(1));
    assertEquals(Action.WAIT, early.action());
    assertEquals("step duration not over", early.detail());
    assertEquals(List.of(), early.tests(), "a quiet look builds no reports");
    Decision due = decide(DEFAULTS, Method.SEQUENTIAL, false, SAME, LATE);
    assertEquals(Action.ADVANCE, due.action(), due.detail());
    assertFalse(due.tests().isEmpty());
    Decision paused = decide(DEFAULTS, Method.SEQUENTIAL, true, SAME, LATE);
    assertEquals(Action.WAIT, paused.action());
    assertEquals("paused", paused.detail());
  }

  @Test
  void theLastStepBelowOneHundredPercentPromotes() {
    List<Double> plan = DEFAULTS.steps();
    int last = plan.size() - 2;
    // At 50 % the split is even.
    OutcomeAggregates stable = SequentialTestTest.sessions(new SplittableRandom(3), 150, 0.85, 1);
    OutcomeAggregates candidate = SequentialTestTest.sessions(new SplittableRandom(4), 150, 0.85, 1);
    assertEquals(Action.PROMOTE, CanaryRules.decide(DEFAULTS, Method.SEQUENTIAL, plan, last, START, false,
        stable, candidate, false, LATE).action());
    assertEquals(Action.ADVANCE, CanaryRules.decide(DEFAULTS, Method.SEQUENTIAL, plan, last - 1, START, false,
        SequentialTestTest.sessions(new SplittableRandom(3), 400, 0.85, 1), SAME, false, LATE).action());
  }

  @Test
  void theFixedLevelMethodTestsOnlyTheEvaluationMetricsAndHasNoSampleRatioCheck() {
    Decision worse = decide(DEFAULTS, Method.FIXED_LEVEL, false, WORSE, LATE);
    assertEquals(Action.ROLLBACK, worse.action());
    assertNull(worse.sampleRatio());
    assertEquals(DEFAULTS.evaluationMetrics(), worse.tests().stream().map(TestResult::metric).toList());
    // A split far from the intended 20 % (400 against 400) is no reason to pause for this method.
    OutcomeAggregates many = SequentialTestTest.sessions(new SplittableRandom(10), 400, 0.85, 1);
    Decision skewed = decide(DEFAULTS, Method.FIXED_LEVEL, false, many, LATE);
    assertEquals(Action.ADVANCE, skewed.action(), skewed.detail());
    assertEquals(Action.PAUSE_MISMATCH, decide(DEFAULTS, Method.SEQUENTIAL, false, many, LATE).action());
  }

  @Test
  void onlyAResumeWithinTheCurrentStepAcknowledgesAMismatch() {
    HistoryEntry ready = new HistoryEntry(VersionState.READY, null, START, "offline gate passed");
    HistoryEntry canary = new HistoryEntry(VersionState.CANARY, 0.05, START, null);
    HistoryEntry pausedSrm = new HistoryEntry(VersionState.PAUSED, 0.05, START, CanaryRules.MISMATCH_PREFIX + " at …");
    HistoryEntry resumed = new HistoryEntry(VersionState.CANARY, 0.05, START, "resumed at step 0");
    HistoryEntry rampResumed = new HistoryEntry(VersionState.RAMP, 0.2, START, "resumed at step 1");
    assertFalse(CanaryRules.mismatchAcknowledged(List.of()));
    assertFalse(CanaryRules.mismatchAcknowledged(List.of(ready)));
    assertFalse(CanaryRules.mismatchAcknowledged(List.of(ready, resumed)));
    assertFalse(CanaryRules.mismatchAcknowledged(List.of(canary, resumed)));
    assertTrue(CanaryRules.mismatchAcknowledged(List.of(canary, pausedSrm, rampResumed)));
    // A mismatch pause that nobody resumed yet acknowledges nothing.
    assertFalse(CanaryRules.mismatchAcknowledged(List.of(ready, pausedSrm)));
  }
}
