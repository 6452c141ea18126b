package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The per-version figures the canary tests read, on small hand-computed sets of sessions. */
class OutcomeAggregatesTest {

  /** One session with only gateway figures. */
  private static OutcomeAggregates gateway(
      OutcomeAggregates a, Integer calls, Integer errors, Long tokens) {
    return a.add(null, null, 0, 0, null, calls, errors, tokens);
  }

  @Test
  void thumbsCountWhenThereIsAtLeastOne() {
    assertEquals(0.5, OutcomeAggregates.satisfactionScore(null, 1, 1), 1e-15);
    assertEquals(0.0, OutcomeAggregates.satisfactionScore(null, 0, 2), 1e-15);
    assertEquals(1.0, OutcomeAggregates.satisfactionScore(null, 2, 0), 1e-15);
  }

  @Test
  void eachMetricCountsOnlyTheSessionsThatHaveIt() {
    OutcomeAggregates a = OutcomeAggregates.EMPTY
        .add(true, 5.0, 0, 0, 100.0)
        .add(false, null, 0, 0, null)
        .add(null, 1.0, 0, 0, 200.0);
    assertEquals(3, a.sessions());
    assertEquals(2, a.samples(Metric.TASK_SUCCESS_RATE));
    assertEquals(1, a.successes());
    assertEquals(0.5, a.value(Metric.TASK_SUCCESS_RATE), 1e-15);
    assertEquals(2, a.samples(Metric.USER_SATISFACTION));
    // Scores 1 and 0: mean 0.5, unbiased variance ((0.5)² + (0.5)²) / 1 = 0.5.
    assertEquals(0.5, a.value(Metric.USER_SATISFACTION), 1e-15);
    assertEquals(1.0, a.satisfactionSumOfSquares(), 1e-15);
    assertEquals(0.5, a.satisfactionVariance(), 1e-15);
    assertEquals(2, a.samples(Metric.RESPONSE_LATENCY));
    assertEquals(0, a.samples(Metric.UPSTREAM_ERROR_RATE));
    assertEquals(0, a.samples(Metric.TOKENS_PER_SESSION));
    assertNull(a.value(Metric.UPSTREAM_ERROR_RATE));
    assertNull(a.value(Metric.TOKENS_PER_SESSION));
    assertNull(OutcomeAggregates.EMPTY.value(Metric.TASK_SUCCESS_RATE));
  }

  @Test
  void theSatisfactionVarianceNeedsTwoScoresAndIsUnbiased() {
    OutcomeAggregates one = OutcomeAggregates.EMPTY.add(null, 5.0, 0, 0, null);
    assertEquals(0, one.satisfactionVariance());
    // Scores 0, 0.5, 0.5: mean 1/3, variance (1/9 + 1/36 + 1/36) / 2 = 1/12.
    OutcomeAggregates three = OutcomeAggregates.EMPTY
        .add(null, 1.0, 0, 0, null).add(null, 3.0, 0, 0, null).add(null, 3.0, 0, 0, null);
    assertEquals(1.0 / 3, three.value(Metric.USER_SATISFACTION), 1e-15);
    assertEquals(1.0 / 12, three.satisfactionVariance(), 1e-15);
  }

  @Test
  void theErrorRateIsTheMeanPerSessionShareOfFailedCalls() {
    OutcomeAggregates a = gateway(OutcomeAggregates.EMPTY, 4, 0, null);
    a = gateway(gateway(a, 4, 2, null), 2, 2, null);
    // Shares 0, 0.5, 1 (not 4 of 10 calls): mean 0.5, variance (0.25 + 0 + 0.25) / 2 = 0.25.
    assertEquals(3, a.samples(Metric.UPSTREAM_ERROR_RATE));
    assertEquals(0.5, a.value(Metric.UPSTREAM_ERROR_RATE), 1e-15);
    assertEquals(1.25, a.errorShareSumOfSquares(), 1e-15);
    assertEquals(0.25, a.errorShareVariance(), 1e-15);
    assertEquals(0, a.samples(Metric.TOKENS_PER_SESSION));
  }

  @Test
  void aSessionWithoutCallsHasNoErrorShareAndImpossibleCountsAreClamped() {
    OutcomeAggregates a = gateway(OutcomeAggregates.EMPTY, 0, null, null);
    a = gateway(a, null, 3, null);
    assertEquals(0, a.callSessions());
    assertEquals(0, a.errorShareSum());
    // Errors without a count are none; more errors than calls count as all calls failed; a
    // negative count as none. (GuardrailInput refuses such outcomes before they get here.)
    a = gateway(a, 5, null, null);
    a = gateway(a, 2, 5, null);
    a = gateway(a, 2, -1, null);
    assertEquals(3, a.callSessions());
    assertEquals(1.0, a.errorShareSum(), 1e-15);
    assertEquals(1.0, a.errorShareSumOfSquares(), 1e-15);
  }

  @Test
  void tokensAreShownAsAMeanAndTestedOnTheLogScale() {
    OutcomeAggregates a = gateway(gateway(OutcomeAggregates.EMPTY, null, null, 99L), null, null, 999L);
    a = gateway(a, null, null, -1L); // unknown: not counted
    a = gateway(a, null, null, null);
    assertEquals(2, a.samples(Metric.TOKENS_PER_SESSION));
    assertEquals(549, a.value(Metric.TOKENS_PER_SESSION), 1e-12);
    // log(1 + tokens) = log 100 and log 1000: mean log(√10⁵), variance (log 10)² / 2.
    assertEquals(Math.log(Math.sqrt(1e5)), a.logTokenMean(), 1e-12);
    assertEquals(Math.pow(Math.log(10), 2) / 2, a.logTokenVariance(), 1e-12);
    // A session that used no tokens is an observation (log 1 = 0), not a missing one.
    OutcomeAggregates zero = gateway(a, null, null, 0L);
    assertEquals(3, zero.samples(Metric.TOKENS_PER_SESSION));
    assertEquals(Math.log(1e5) / 3, zero.logTokenMean(), 1e-12);
    assertEquals(0, OutcomeAggregates.EMPTY.logTokenVariance());
  }
}
