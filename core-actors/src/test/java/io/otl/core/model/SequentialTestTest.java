package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
