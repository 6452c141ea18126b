package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.CanaryStatistics.TestResult;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SequentialTestTest {

  private static final Map<Metric, Double> TOLERANCE = Map.of(
      Metric.TASK_SUCCESS_RATE, 0.02, Metric.USER_SATISFACTION, 0.05, Metric.RESPONSE_LATENCY, 0.10);
  private static final List<Metric> ALL =
      List.of(Metric.TASK_SUCCESS_RATE, Metric.USER_SATISFACTION, Metric.RESPONSE_LATENCY);

  /** Aggregates of n sessions: success rate, mean rating, latency median, seeded. */
  static OutcomeAggregates sessions(SplittableRandom rnd, int n, double success, double latencyFactor) {
    OutcomeAggregates a = OutcomeAggregates.EMPTY;
    for (int i = 0; i < n; i++) {
      double rating = 1 + Math.min(4, Math.floor(rnd.nextDouble() * 5));
      double latency = latencyFactor * 1200 * Math.exp(0.5 * MsprtTest.gaussian(rnd));
      a = a.add(rnd.nextDouble() < success, rating, 0, 0, latency);
    }
    return a;
  }

  private static List<TestResult> run(OutcomeAggregates stable, OutcomeAggregates candidate) {
    return SequentialTest.run(ALL, 3, stable, candidate, TOLERANCE, 0.95, 4, 100, 0);
  }

  @Test
  void aClearlyWorseCandidateIsDetectedOnTheRightMetric() {
    SplittableRandom rnd = new SplittableRandom(1);
    List<TestResult> tests = run(sessions(rnd, 2000, 0.8, 1), sessions(rnd, 300, 0.55, 1));
    TestResult success = tests.get(0);
    assertTrue(success.degraded(), success.summary());
    assertEquals(SequentialTest.METHOD, success.method());
    assertTrue(success.pValue() <= success.alpha());
    assertTrue(success.statistic() > success.criticalValue());
    assertEquals(0.25, success.estimate(), 0.06);
    assertFalse(tests.get(2).degraded(), tests.get(2).summary());

    tests = run(sessions(rnd, 2000, 0.8, 1), sessions(rnd, 300, 0.8, 1.6));
    assertTrue(tests.get(2).degraded(), tests.get(2).summary());
    assertTrue(tests.get(2).summary().startsWith("response-latency p95"), tests.get(2).summary());
    assertEquals(Math.log(1.6), tests.get(2).estimate(), 0.08);
    assertFalse(tests.get(0).degraded(), tests.get(0).summary());
  }

  @Test
  void anEqualCandidateIsNotDetectedAtAFixedSeed() {
    SplittableRandom rnd = new SplittableRandom(2);
    for (TestResult t : run(sessions(rnd, 2000, 0.8, 1), sessions(rnd, 300, 0.8, 1))) {
      assertFalse(t.degraded(), t.summary());
      assertTrue(t.pValue() > 0.1, t.summary());
      assertTrue(t.pValue() >= 0 && t.pValue() <= 1);
    }
  }

  @Test
  void holmRejectsStepDownAndStopsAtTheFirstFailure() {
    boolean[] rejected = new boolean[3];
    double[] level = SequentialTest.holm(List.of(0.02, 0.001, 0.03), 3, 0.05, rejected);
    // Sorted: 0.001 ≤ 0.05/3, 0.02 ≤ 0.05/2, 0.03 ≤ 0.05/1: all rejected.
    assertArrayEquals(new boolean[] {true, true, true}, rejected);
    assertArrayEquals(new double[] {0.025, 0.05 / 3, 0.05}, level, 1e-15);

    level = SequentialTest.holm(List.of(0.02, 0.06, 0.001), 3, 0.05, rejected);
    assertArrayEquals(new boolean[] {true, false, true}, rejected);

    // 0.02 > 0.05/3: nothing is rejected, although 0.03 < 0.05 on its own.
    SequentialTest.holm(List.of(0.02, 0.03, 0.04), 3, 0.05, rejected);
    assertArrayEquals(new boolean[] {false, false, false}, rejected);

    // Metrics not tested yet count in m: with one of three tested, its level is alpha / 3.
    boolean[] one = new boolean[1];
    assertEquals(0.05 / 3, SequentialTest.holm(List.of(0.9), 3, 0.05, one)[0], 1e-15);
  }

  /** Successes out of n sessions with a known result, nothing else. */
  private static OutcomeAggregates successes(long s, long n) {
    return new OutcomeAggregates(n, n, s, 0, 0, 0, LatencyHistogram.EMPTY);
  }

  private static OutcomeAggregates latencies(double... ms) {
    OutcomeAggregates a = OutcomeAggregates.EMPTY;
    for (double x : ms) {
      a = a.add(null, null, 0, 0, x);
    }
    return a;
  }

  /** The bucket's centre on the log scale: the geometric mean of its bounds. */
  private static double centre(double ms) {
    int b = LatencyHistogram.bucketOf(ms);
    return Math.log(Math.sqrt(LatencyHistogram.lowerBound(b) * LatencyHistogram.upperBound(b)));
  }

  private static boolean anyDegraded(List<Metric> metrics, OutcomeAggregates s, OutcomeAggregates c) {
    return SequentialTest.anyDegraded(metrics, 1, s, c, TOLERANCE, 0.95, 4, 100);
  }

  private static TestResult runOne(Metric metric, OutcomeAggregates s, OutcomeAggregates c) {
    return SequentialTest.run(List.of(metric), 1, s, c, TOLERANCE, 0.95, 4, 100, 7).get(0);
  }

  @Test
  void theSuccessRateEstimateUsesAgrestiCaffoVariances() {
    // 8/10 against 2/10: adjusted 9/12 and 3/12, V = 0.75·0.25/10 · 2 = 0.0375.
    SequentialTest.Estimate e = SequentialTest.estimate(
        Metric.TASK_SUCCESS_RATE, successes(8, 10), successes(2, 10), 0.02);
    assertEquals(0.8, e.stableValue(), 1e-15);
    assertEquals(0.2, e.candidateValue(), 1e-15);
    assertEquals(0.6, e.shortfall(), 1e-15);
    assertEquals(0.0375, e.variance(), 1e-15);
    assertEquals(0.02, e.delta());
    assertEquals(0.78, e.threshold(), 1e-15);
    // 100 % against 0 %: raw variances would be 0; adjusted (11/12)(1/12)/10 per arm.
    e = SequentialTest.estimate(Metric.TASK_SUCCESS_RATE, successes(10, 10), successes(0, 10), 0.02);
    assertEquals(2 * (11.0 / 12) * (1.0 / 12) / 10, e.variance(), 1e-15);
  }

  @Test
  void theSatisfactionEstimateUsesWelchVariances() {
    OutcomeAggregates stable =
        OutcomeAggregates.EMPTY.add(null, 1.0, 0, 0, null).add(null, 5.0, 0, 0, null);
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY
        .add(null, 1.0, 0, 0, null).add(null, 3.0, 0, 0, null).add(null, 3.0, 0, 0, null);
    SequentialTest.Estimate e =
        SequentialTest.estimate(Metric.USER_SATISFACTION, stable, candidate, 0.05);
    // Scores {0, 1} (variance 1/2) against {0, ½, ½} (variance 1/12): V = (1/2)/2 + (1/12)/3.
    assertEquals(0.5 - 1.0 / 3, e.shortfall(), 1e-15);
    assertEquals(0.25 + 1.0 / 36, e.variance(), 1e-15);
    assertEquals(0.45, e.threshold(), 1e-15);
  }

  @Test
  void latencyIsComparedOnTheLogScaleAtBucketCentres() {
    double[] m = SequentialTest.logMoments(latencies(1000).latency());
    assertEquals(centre(1000), m[0], 1e-12);
    assertEquals(0, m[1]);
    assertEquals(Math.log(1000), m[0], Math.log(LatencyHistogram.GROWTH) / 2);
    // Two values: mean of the centres, unbiased variance (c1 − c2)² / 2.
    m = SequentialTest.logMoments(latencies(1000, 4000).latency());
    assertEquals((centre(1000) + centre(4000)) / 2, m[0], 1e-12);
    assertEquals(Math.pow(centre(4000) - centre(1000), 2) / 2, m[1], 1e-12);
    // Bucket 0 ([0, 1) ms) stands for 0.5 ms; the open last bucket for its lower bound.
    assertEquals(Math.log(0.5), SequentialTest.logMoments(latencies(0.3).latency())[0], 1e-12);
    double last = LatencyHistogram.lowerBound(LatencyHistogram.MAX_BUCKET);
    assertEquals(Math.log(last), SequentialTest.logMoments(latencies(1e9).latency())[0], 1e-12);
  }

  @Test
  void theLatencyEstimateIsTheLogRatioOfTypicalLatencies() {
    OutcomeAggregates stable = latencies(1000, 1000, 4000, 4000);
    OutcomeAggregates candidate = latencies(5000, 5000, 1000);
    SequentialTest.Estimate e =
        SequentialTest.estimate(Metric.RESPONSE_LATENCY, stable, candidate, 0.10);
    double ms = (centre(1000) + centre(4000)) / 2;
    double vs = 4 * Math.pow((centre(4000) - centre(1000)) / 2, 2) / 3;
    double mc = (2 * centre(5000) + centre(1000)) / 3;
    double vc = (2 * Math.pow(centre(5000) - mc, 2) + Math.pow(centre(1000) - mc, 2)) / 2;
    assertEquals(mc - ms, e.shortfall(), 1e-12);
    assertEquals(vs / 4 + vc / 3, e.variance(), 1e-12);
    assertEquals(Math.log(1.1), e.delta(), 1e-15);
    // For the report: the p95s, stable p95 × 1.1 and the candidate's share at or above it.
    double stableP95 = LatencyHistogram.upperBound(LatencyHistogram.bucketOf(4000));
    assertEquals(stableP95, e.stableValue(), 1e-9);
    assertEquals(stableP95 * 1.1, e.threshold(), 1e-9);
    assertEquals(2.0 / 3, e.tailShare(), 1e-15);
    SequentialTest.Estimate quiet =
        SequentialTest.estimate(Metric.RESPONSE_LATENCY, stable, candidate, 0.10, false);
    assertEquals(e.shortfall(), quiet.shortfall());
    assertEquals(e.variance(), quiet.variance());
    assertTrue(Double.isNaN(quiet.threshold()));
  }

  @Test
  void theErrorRateGuardrailAddsTwoPseudoSessions() {
    // k sessions without errors: shares 0…0 plus 0 and 1: mean 1/(k+2), variance exactly 1/(k+2).
    OutcomeAggregates clean = OutcomeAggregates.EMPTY;
    OutcomeAggregates broken = OutcomeAggregates.EMPTY;
    for (int i = 0; i < 8; i++) {
      clean = clean.add(null, null, 0, 0, null, 10, 0, null);
      broken = broken.add(null, null, 0, 0, null, 10, 10, null);
    }
    assertEquals(0.1, SequentialTest.adjustedShareVariance(clean), 1e-15);
    // Symmetric: every call failing is as certain as none failing.
    assertEquals(0.1, SequentialTest.adjustedShareVariance(broken), 1e-15);
    assertEquals(0.5, SequentialTest.adjustedShareVariance(OutcomeAggregates.EMPTY), 1e-15);
    // k sessions at share ½: variance (½)/(k+1).
    OutcomeAggregates half = OutcomeAggregates.EMPTY;
    for (int i = 0; i < 4; i++) {
      half = half.add(null, null, 0, 0, null, 2, 1, null);
    }
    assertEquals(0.1, SequentialTest.adjustedShareVariance(half), 1e-15);
    SequentialTest.Estimate e = SequentialTest.estimate(Metric.UPSTREAM_ERROR_RATE, clean, half, 0.02);
    assertEquals(0.5, e.shortfall(), 1e-15);
    assertEquals(0.1 / 8 + 0.1 / 4, e.variance(), 1e-15);
    assertEquals(0.02, e.threshold(), 1e-15);
    assertEquals(0.0, e.stableValue(), 1e-15);
    assertEquals(0.5, e.candidateValue(), 1e-15);
    // The excess is candidate − stable also when the stable has errors of its own.
    e = SequentialTest.estimate(Metric.UPSTREAM_ERROR_RATE, half, broken, 0.02);
    assertEquals(0.5, e.shortfall(), 1e-15);
    assertEquals(0.52, e.threshold(), 1e-15);
    assertEquals(0.1 / 4 + 0.1 / 8, e.variance(), 1e-15);
  }

  @Test
  void theTokenGuardrailComparesMeanLogTokens() {
    OutcomeAggregates stable = OutcomeAggregates.EMPTY
        .add(null, null, 0, 0, null, null, null, 99L).add(null, null, 0, 0, null, null, null, 999L);
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY
        .add(null, null, 0, 0, null, null, null, 999L).add(null, null, 0, 0, null, null, null, 9999L);
    SequentialTest.Estimate e =
        SequentialTest.estimate(Metric.TOKENS_PER_SESSION, stable, candidate, 0.2);
    // Ten times the tokens in every session: log ratio log 10; each arm's variance (log 10)²/2.
    assertEquals(Math.log(10), e.shortfall(), 1e-12);
    assertEquals(Math.pow(Math.log(10), 2) / 2 / 2 * 2, e.variance(), 1e-12);
    assertEquals(Math.log(1.2), e.delta(), 1e-15);
    assertEquals(549 * 1.2, e.threshold(), 1e-9);
    assertEquals(5499, e.candidateValue(), 1e-12);
  }

  @Test
  void bothVersionsNeedObservations() {
    assertThrows(IllegalArgumentException.class, () -> SequentialTest.estimate(
        Metric.TASK_SUCCESS_RATE, OutcomeAggregates.EMPTY, successes(1, 2), 0.02));
    assertThrows(IllegalArgumentException.class, () -> SequentialTest.estimate(
        Metric.TASK_SUCCESS_RATE, successes(1, 2), OutcomeAggregates.EMPTY, 0.02));
  }

  @Test
  void tauIsChosenSoThatTheBarIsLowestAtMinSamplesPerStep() {
    // Defaults: 3 tested steps (α_step = 0.05/3), 5 tests, 100 sessions per arm. The reference
    // variance of a 50/50 difference at 100 per arm is 2·0.25/100; at that information the bar
    // must be the lowest one (SciPy: r* = 12.64, z* = 3.6925; docs: "about z > 3.69").
    double tau2 = SequentialTest.mixingVariance(0.05 / 3, 5, 100);
    double reference = 2 * 0.25 / 100;
    assertEquals(12.64 * reference, tau2, 12.64 * reference * 0.03);
    assertEquals(3.6925, Msprt.boundaryZ(tau2 / reference, 0.05 / 15), 1e-3);
    // Twice the sessions per step, half the variance of the estimate there: τ² halves.
    assertEquals(tau2 / 2, SequentialTest.mixingVariance(0.05 / 3, 5, 200), 1e-15);
  }

  @Test
  void aTwentyPointDropIsFoundAtOneHundredSessionsPerArmNotAtNinety() {
    // One metric, α_step = 0.05/3. Computed with SciPy from the closed form: 81 of 90 against
    // 63 of 90 gives p = 0.0234; 90 of 100 against 70 of 100 gives p = 0.0144.
    List<Metric> one = List.of(Metric.TASK_SUCCESS_RATE);
    TestResult at90 = runOne(Metric.TASK_SUCCESS_RATE, successes(81, 90), successes(63, 90));
    assertFalse(at90.degraded(), at90.summary());
    assertEquals(0.0234, at90.pValue(), 1e-3);
    assertFalse(anyDegraded(one, successes(81, 90), successes(63, 90)));
    TestResult at100 = runOne(Metric.TASK_SUCCESS_RATE, successes(90, 100), successes(70, 100));
    assertTrue(at100.degraded(), at100.summary());
    assertEquals(0.0144, at100.pValue(), 1e-3);
    assertEquals(0.05 / 3, at100.alpha(), 1e-15);
    assertTrue(anyDegraded(one, successes(90, 100), successes(70, 100)));
  }

  @Test
  void anEqualCandidateIsNeverDegradedHoweverManySessions() {
    // Shortfall 0 against a tolerance of 0.02 with 20,000 sessions per arm: z = −5.
    OutcomeAggregates same = successes(16_000, 20_000);
    List<Metric> one = List.of(Metric.TASK_SUCCESS_RATE);
    assertFalse(anyDegraded(one, same, same));
    TestResult t = runOne(Metric.TASK_SUCCESS_RATE, same, same);
    assertFalse(t.degraded());
    assertEquals(1.0, t.pValue());
  }

  @Test
  void theReportCarriesTheStatisticAndSaysWhichSideOfTheBarItIs() {
    TestResult t = runOne(Metric.TASK_SUCCESS_RATE, successes(8, 10), successes(2, 10));
    // z = (0.6 − 0.02) / √0.0375; p = 0.0643 (SciPy) is above 0.05/3 at 10 sessions per arm.
    assertEquals(2.995107121067069, t.statistic(), 1e-9);
    assertEquals(Math.sqrt(0.0375), t.standardError(), 1e-15);
    assertEquals(0.6, t.estimate(), 1e-15);
    assertEquals(0.0643, t.pValue(), 1e-3);
    assertEquals(7L, t.looks());
    assertFalse(t.degraded());
    assertTrue(t.summary().contains("z = 2.995 <= "), t.summary());
    assertTrue(t.summary().contains(" > Holm level"), t.summary());
    assertFalse(t.summary().contains("worse beyond tolerance"), t.summary());
    assertTrue(t.summary().contains("tolerance 0.0200 absolute)"), t.summary());
    assertTrue(t.statistic() < t.criticalValue());
    String latency =
        runOne(Metric.RESPONSE_LATENCY, latencies(1000, 2000), latencies(1000, 2000)).summary();
    assertTrue(latency.contains("tolerance 0.1000 relative)"), latency);

    TestResult d = runOne(Metric.TASK_SUCCESS_RATE, successes(90, 100), successes(70, 100));
    assertTrue(d.summary().contains(String.format(java.util.Locale.ROOT, "z = %.3f > ", d.statistic())),
        d.summary());
    assertTrue(d.summary().contains(" <= Holm level"), d.summary());
    assertTrue(d.summary().endsWith(": worse beyond tolerance"), d.summary());
    assertTrue(d.statistic() > d.criticalValue());
  }

  @Test
  void everySessionAlikeSaysSoInsteadOfTheFloorsZ() {
    OutcomeAggregates same = OutcomeAggregates.EMPTY;
    for (int i = 0; i < 50; i++) {
      same = same.add(null, null, 0, 0, null, null, null, 120L);
    }
    TestResult t = SequentialTest.run(List.of(Metric.TOKENS_PER_SESSION), 1, same, same,
        Map.of(Metric.TOKENS_PER_SESSION, 0.2), 0.95, 4, 100, 3).get(0);
    assertFalse(t.degraded());
    assertTrue(t.summary().contains("no variance (every session alike within each version), so the shortfall "
        + "is within the tolerance"), t.summary());
    assertFalse(t.summary().contains("z ="), t.summary());
    assertTrue(t.standardError() <= 1e-6, "the console reads the floor from the standard error");
  }

  @Test
  void aPValueExactlyAtItsHolmLevelIsRejected() {
    boolean[] rejected = new boolean[1];
    SequentialTest.holm(List.of(0.01), 1, 0.01, rejected);
    assertTrue(rejected[0]);
  }

  @Test
  void theErrorBudgetIsSplitOverTheTestedSteps() {
    assertEquals(0.05 / 3, SequentialTest.stepAlpha(0.95, 4), 1e-15);
    assertEquals(0.05, SequentialTest.stepAlpha(0.95, 2), 1e-15);
  }

  @Test
  void oldFixedLevelResultsKeepTheirShape() {
    TestResult t = CanaryStatistics.successRate(82, 100, 62, 100, 0.02, 0.95);
    assertEquals(null, t.method());
    assertEquals(null, t.pValue());
    assertEquals(null, t.looks());
  }
}
