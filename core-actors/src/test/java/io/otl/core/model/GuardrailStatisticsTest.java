package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.CanaryRules.Action;
import io.otl.core.model.CanaryRules.Method;
import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.SimulatedRollout.End;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The guardrails (upstream error rate, tokens per session) in the real step rule, over whole
 * seeded rollouts at 200 sessions/hour looked at after every session: equal candidates are not
 * rolled back by them, clearly worse ones are, and a rollout whose sessions carry no gateway
 * figures is not held back by them. Outcomes, not timings.
 */
class GuardrailStatisticsTest {

  private static final ModelSettings DEFAULTS = ModelSettings.defaults();

  /**
   * @param errorRise points added to the candidate's per-call upstream failure chance (stable 2 %)
   * @param tokenFactor the candidate's tokens per session relative to the stable's
   * @param gateway whether the sessions carry the gateway's figures at all
   */
  static End rollout(SplittableRandom rnd, double errorRise, double tokenFactor, boolean gateway) {
    return SimulatedRollout.run(Method.SEQUENTIAL, rnd, (side, toCandidate, r) -> {
      boolean success = r.nextDouble() < 0.8;
      double rating = 1 + Math.min(4, Math.floor(r.nextDouble() * 5));
      double latency = 1200 * Math.exp(0.5 * MsprtTest.gaussian(r));
      if (!gateway) return side.add(success, rating, 0, 0, latency, null, null, null);
      int calls = 1 + r.nextInt(6);
      double p = 0.02 + (toCandidate ? errorRise : 0);
      int errors = 0;
      for (int k = 0; k < calls; k++) {
        errors += r.nextDouble() < p ? 1 : 0;
      }
      long tokens = Math.round(1500 * Math.exp(0.6 * MsprtTest.gaussian(r)) * (toCandidate ? tokenFactor : 1));
      return side.add(success, rating, 0, 0, latency, calls, errors, tokens);
    });
  }

  @Test
  void equalCandidatesWithGatewayFiguresAreRarelyRolledBack() {
    // The bound over the whole rollout, guardrails included, is 0.05: 4 of 60 would be far above.
    int rolledBack = 0;
    for (int i = 0; i < 60; i++) {
      End end = rollout(new SplittableRandom(1900 + i), 0, 1, true);
      rolledBack += end.action() == Action.ROLLBACK ? 1 : 0;
    }
    assertTrue(rolledBack <= 3, rolledBack + " of 60 equal candidates rolled back");
  }

  @Test
  void twentyFiveMorePointsOfUpstreamErrorsRollBackOnThatGuardrail() {
    // Gross, on purpose: at 100 samples per step +10 points is caught about 6 times in 10 (the
    // always-valid bar is high; Bench C1 measures the power for each size).
    int rolledBack = 0;
    for (int i = 0; i < 10; i++) {
      End end = rollout(new SplittableRandom(2900 + i), 0.25, 1, true);
      if (end.action() == Action.ROLLBACK) {
        rolledBack++;
        assertEquals(List.of(Metric.UPSTREAM_ERROR_RATE), end.degraded());
      }
    }
    assertTrue(rolledBack >= 9, rolledBack + " of 10 candidates with +25 points of errors rolled back");
  }

  @Test
  void twiceTheTokensRollsBackOnTheCostGuardrail() {
    int rolledBack = 0;
    for (int i = 0; i < 10; i++) {
      End end = rollout(new SplittableRandom(3900 + i), 0, 2.0, true);
      if (end.action() == Action.ROLLBACK) {
        rolledBack++;
        assertEquals(List.of(Metric.TOKENS_PER_SESSION), end.degraded());
      }
    }
    assertTrue(rolledBack >= 9, rolledBack + " of 10 candidates spending 2× the tokens rolled back");
  }

  @Test
  void withoutGatewayFiguresTheGuardrailsHoldNothingBack() {
    End end = rollout(new SplittableRandom(4900), 0, 1, false);
    assertEquals(Action.PROMOTE, end.action());
  }

  @Test
  void aFailedShareWithNoErrorOnEitherSideIsNotCertain() {
    // One failing session against none: the pseudo-sessions keep the variance away from 0.
    OutcomeAggregates stable = OutcomeAggregates.EMPTY;
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY;
    for (int i = 0; i < 100; i++) {
      stable = stable.add(true, null, 0, 0, null, 2, 0, 100L);
      candidate = candidate.add(true, null, 0, 0, null, 2, i == 0 ? 2 : 0, 100L);
    }
    List<TestResult> r = SequentialTest.run(List.of(Metric.UPSTREAM_ERROR_RATE), 5, stable, candidate,
        DEFAULTS.tolerance(), 0.95, 4, 100, 200);
    assertTrue(!r.get(0).degraded(), r.get(0).summary());
    assertEquals(0.01, r.get(0).candidateValue(), 1e-12);
    assertEquals(0.0, r.get(0).stableValue(), 1e-12);
  }
}
