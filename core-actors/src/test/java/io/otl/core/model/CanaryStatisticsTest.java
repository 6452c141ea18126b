package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.CanaryStatistics.TestResult;
import org.junit.jupiter.api.Test;

class CanaryStatisticsTest {

  @Test
  void criticalValuesMatchTheNormalTable() {
    assertEquals(1.6449, CanaryStatistics.criticalValue(0.95), 1e-3);
    assertEquals(1.9600, CanaryStatistics.criticalValue(0.975), 1e-3);
    assertEquals(2.3263, CanaryStatistics.criticalValue(0.99), 1e-3);
    assertEquals(0.5, CanaryStatistics.normalCdf(0), 1e-7);
  }

  @Test
  void successRateTenPointsWorseIsDegradedWithAFewHundredSessions() {
    TestResult t = CanaryStatistics.successRate(246, 300, 216, 300, 0.02, 0.95); // .82 vs .72
    assertTrue(t.degraded(), t.summary());
    assertEquals(0.82, t.stableValue(), 1e-9);
    assertEquals(0.72, t.candidateValue(), 1e-9);
    assertTrue(t.statistic() > t.criticalValue());
    assertEquals(0.80, t.threshold(), 1e-9);
  }

  @Test
  void successRateWithinToleranceIsNotDegraded() {
    assertFalse(CanaryStatistics.successRate(8100, 10000, 8000, 10000, 0.02, 0.95).degraded());
    // Worse than stable, but not significantly beyond the 2-point tolerance at n=100.
    assertFalse(CanaryStatistics.successRate(82, 100, 78, 100, 0.02, 0.95).degraded());
  }

  @Test
  void successRateTestStaysFiniteAtZeroAndHundredPercent() {
    TestResult t = CanaryStatistics.successRate(100, 100, 0, 100, 0.02, 0.95);
    assertTrue(t.degraded());
    assertTrue(Double.isFinite(t.statistic()));
    assertFalse(CanaryStatistics.successRate(100, 100, 100, 100, 0.02, 0.95).degraded());
  }

  @Test
  void satisfactionMeanLowerBeyondToleranceIsDegraded() {
    assertTrue(CanaryStatistics.satisfaction(0.75, 0.04, 400, 0.60, 0.04, 400, 0.05, 0.95).degraded());
    assertFalse(CanaryStatistics.satisfaction(0.75, 0.04, 400, 0.73, 0.04, 400, 0.05, 0.95).degraded());
    assertFalse(CanaryStatistics.satisfaction(0.5, 0, 200, 0.5, 0, 200, 0.05, 0.95).degraded());
    // every score equal on each side: the summary names the difference, not a z of -50000
    String equal = CanaryStatistics.satisfaction(0.5, 0, 200, 0.5, 0, 200, 0.05, 0.95).summary();
    assertTrue(equal.contains("no variance") && equal.contains("is within the tolerance") && !equal.contains("z ="), equal);
    String worse = CanaryStatistics.satisfaction(1.0, 0, 200, 0.5, 0, 200, 0.05, 0.95).summary();
    assertTrue(worse.contains("difference 0.5000 exceeds the tolerance"), worse);
  }

  @Test
  void satisfactionScoreCombinesNormalisedRatingAndThumbsShare() {
    assertEquals(1.0, OutcomeAggregates.satisfactionScore(5.0, 0, 0), 1e-9);
    assertEquals(0.0, OutcomeAggregates.satisfactionScore(1.0, 0, 0), 1e-9);
    assertEquals(0.75, OutcomeAggregates.satisfactionScore(null, 3, 1), 1e-9);
    assertEquals((0.5 + 1.0) / 2, OutcomeAggregates.satisfactionScore(3.0, 2, 0), 1e-9);
    assertEquals(null, OutcomeAggregates.satisfactionScore(null, 0, 0));
  }

  @Test
  void latencyFiftyPercentWorseIsDegraded() {
    LatencyHistogram stable = histogram(400, 1.0);
    LatencyHistogram candidate = histogram(200, 1.5);
    TestResult t = CanaryStatistics.latency(stable, candidate, 0.10, 0.95);
    assertTrue(t.degraded(), t.summary());
    assertTrue(t.candidateValue() > 1.4 * t.stableValue());
    assertTrue(t.observedTailShare() > 0.5);
  }

  @Test
  void latencyFromTheSameDistributionIsNotDegraded() {
    TestResult t = CanaryStatistics.latency(histogram(400, 1.0), histogram(200, 1.0), 0.10, 0.95);
    assertFalse(t.degraded(), t.summary());
    assertTrue(t.statistic() < 0);
  }

  @Test
  void histogramQuantileIsWithinTwoPercentAboveTheExactValue() {
    LatencyHistogram h = LatencyHistogram.EMPTY;
    for (int i = 1; i <= 1000; i++) {
      h = h.add(i);
    }
    double p95 = h.quantile(0.95);
    assertTrue(p95 >= 950 && p95 <= 950 * 1.02 + 1e-9, "p95 = " + p95);
    assertEquals(1000, h.total());
    assertEquals(0, LatencyHistogram.bucketOf(0.5));
    // Whole buckets only: at most one 2 % bucket (about 18 values at 900 ms) is left out.
    long above = h.countAtOrAbove(900);
    assertTrue(above <= 101 && above >= 101 - 19, "above = " + above);
  }

  @Test
  void aConfidenceOutsideTheOpenUnitIntervalIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> CanaryStatistics.criticalValue(0));
    assertThrows(IllegalArgumentException.class, () -> CanaryStatistics.criticalValue(1));
    assertEquals(3.0902, CanaryStatistics.criticalValue(0.999), 1e-3);
  }

  @Test
  void everyTestNeedsObservationsOnBothSides() {
    assertThrows(IllegalArgumentException.class,
        () -> CanaryStatistics.successRate(0, 0, 5, 10, 0.02, 0.95));
    assertThrows(IllegalArgumentException.class,
        () -> CanaryStatistics.successRate(5, 10, 0, 0, 0.02, 0.95));
    assertThrows(IllegalArgumentException.class,
        () -> CanaryStatistics.satisfaction(0.5, 0.1, 0, 0.5, 0.1, 10, 0.05, 0.95));
    assertThrows(IllegalArgumentException.class,
        () -> CanaryStatistics.latency(LatencyHistogram.EMPTY, histogram(10, 1), 0.1, 0.95));
  }

  @Test
  void theSuccessRateStatisticMatchesItsClosedForm() {
    // 8/10 against 2/10: adjusted 9/12 and 3/12, se = √(2 · 0.75 · 0.25 / 10) = √0.0375.
    TestResult t = CanaryStatistics.successRate(8, 10, 2, 10, 0.02, 0.95);
    assertEquals((0.6 - 0.02) / Math.sqrt(0.0375), t.statistic(), 1e-12);
    assertTrue(t.degraded());
    assertTrue(t.summary().contains("z = 2.995 > 1.645"), t.summary());
    assertTrue(t.summary().endsWith(": worse beyond tolerance"), t.summary());
    TestResult ok = CanaryStatistics.successRate(8, 10, 7, 10, 0.02, 0.95);
    assertFalse(ok.degraded());
    assertTrue(ok.summary().contains(" <= 1.645"), ok.summary());
    assertFalse(ok.summary().contains("worse beyond tolerance"), ok.summary());
  }

  @Test
  void theSatisfactionStatisticMatchesItsClosedForm() {
    // se = √(0.04/400 + 0.04/400) = √0.0002; z = (0.15 − 0.05) / se = 7.071.
    TestResult t = CanaryStatistics.satisfaction(0.75, 0.04, 400, 0.60, 0.04, 400, 0.05, 0.95);
    assertEquals(0.1 / Math.sqrt(0.0002), t.statistic(), 1e-9);
    assertEquals(0.70, t.threshold(), 1e-15);
    assertTrue(t.summary().contains("z = 7.071 > 1.645"), t.summary());
    assertTrue(t.summary().endsWith(": worse beyond tolerance"), t.summary());
    TestResult ok = CanaryStatistics.satisfaction(0.75, 0.04, 400, 0.73, 0.04, 400, 0.05, 0.95);
    assertTrue(ok.summary().contains(" <= 1.645"), ok.summary());
    assertFalse(ok.summary().contains("worse beyond tolerance"), ok.summary());
  }

  @Test
  void aStatisticExactlyAtTheCriticalValueIsNotDegraded() {
    // Degraded means statistic > critical value. Standard error 1 and a shortfall of exactly the
    // critical value put z on the boundary.
    double crit = CanaryStatistics.criticalValue(0.95);
    TestResult t = CanaryStatistics.satisfaction(crit, 0.5, 1, 0, 0.5, 1, 0, 0.95);
    assertEquals(t.criticalValue(), t.statistic());
    assertFalse(t.degraded(), t.summary());
    assertTrue(CanaryStatistics.satisfaction(crit + 1e-9, 0.5, 1, 0, 0.5, 1, 0, 0.95).degraded());
  }

  @Test
  void theLatencyStatisticIsABinomialTestOfTheTailShare() {
    // Every candidate session 50 % slower: its whole sample is above stable p95 × 1.1.
    TestResult t = CanaryStatistics.latency(histogram(400, 1.0), histogram(200, 1.5), 0.10, 0.95);
    double share = t.observedTailShare();
    assertEquals((share - 0.05) / Math.sqrt(0.05 * 0.95 / 200), t.statistic(), 1e-12);
    assertTrue(t.summary().contains("= stable p95 × 1.10;"), t.summary());
    assertTrue(t.summary().contains(" > 1.645"), t.summary());
    assertTrue(t.summary().endsWith(": worse beyond tolerance"), t.summary());
    TestResult ok = CanaryStatistics.latency(histogram(400, 1.0), histogram(200, 1.0), 0.10, 0.95);
    assertTrue(ok.summary().contains(" <= 1.645"), ok.summary());
    assertFalse(ok.summary().contains("worse beyond tolerance"), ok.summary());
  }

  /** n latencies spread over 800–1199 ms, times a factor. */
  static LatencyHistogram histogram(int n, double factor) {
    LatencyHistogram h = LatencyHistogram.EMPTY;
    for (int i = 0; i < n; i++) {
      h = h.add((800 + (i * 37) % 400) * factor);
    }
    return h;
  }
}
