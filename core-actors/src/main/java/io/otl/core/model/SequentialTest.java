package io.otl.core.model;

import io.otl.core.model.CanaryStatistics.TestResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The degradation tests of a rollout step: one always-valid {@link Msprt} per metric, with Holm's
 * correction across the configured metrics and the error budget split across the tested steps,
 * so that the chance of rolling back a candidate that is truly within tolerance on every metric
 * stays at most {@code 1 − confidence} for the whole rollout, however often the node looks.
 *
 * <p>Budget: {@code α = 1 − confidence}; every step below 100 % gets {@code α / steps} (the steps
 * see disjoint sessions; their errors add up at most to α); inside a step, Holm over the {@code m}
 * configured metrics compares the smallest p-value with {@code α_step / m}, the next with {@code
 * α_step / (m − 1)}, and so on, stopping at the first that is not below its level. A rollback
 * happens at the first rejection, so the false-rollback bound is that of Bonferroni; Holm only
 * lets more metrics be named at that look.
 *
 * <p>Scales (the estimate θ̂ is "how much worse the candidate is", the tolerance δ on the same
 * scale):
 *
 * <ul>
 *   <li><b>task-success-rate</b>: difference of proportions {@code p_s − p_c}, variance with the
 *       Agresti–Caffo adjusted proportions (never zero at 0 % or 100 %); δ = tolerance.
 *   <li><b>user-satisfaction</b>: difference of mean scores, Welch variance; δ = tolerance.
 *   <li><b>response-latency</b>: difference of the mean log per-session latency (the log of the
 *       ratio of geometric means), δ = {@code log(1 + ρ)}. Latencies are close to log-normal, so a
 *       candidate whose latencies are all ρ slower also has a p95 ρ slower; on the log scale the
 *       mean is well estimated, where a tail share against the stable's own noisy p95 is not.
 *       Means and variances come from the histogram's bucket centres (2 % buckets: ≤ 1 % error).
 * </ul>
 */
public final class SequentialTest {

  /** Method name stored in {@link TestResult#method()}. */
  public static final String METHOD = "msprt";

  /**
   * Per-observation variance assumed when choosing τ: the largest a 0–1 metric can have (0.25),
   * and for log latency that of a log-normal with σ = 0.5. It tunes power, not validity.
   */
  public static final double REFERENCE_VARIANCE = 0.25;

  private static final double VARIANCE_FLOOR = 1e-12;

  private SequentialTest() {}

  /** The level of one step: {@code (1 − confidence)} over the steps that are tested (below 100 %). */
  public static double stepAlpha(double confidence, int planSize) {
    return (1 - confidence) / Math.max(1, planSize - 1);
  }

  /** τ² for a metric, fixed by the settings alone (see {@link Msprt}). */
  public static double mixingVariance(double stepAlpha, int metrics, int minSamplesPerStep) {
    double referenceVariance = 2 * REFERENCE_VARIANCE / minSamplesPerStep;
    return Msprt.optimalMixingRatio(stepAlpha / metrics) * referenceVariance;
  }

  /**
   * Smallest {@code min-samples-per-step} at which a 0–1 metric with this tolerance can be found
   * degraded at all: with n observations per arm (reference variance) even the largest possible
   * shortfall, 1 (stable always succeeds, candidate never), must pass the first look's bar.
   * Below it the step advances on evidence that can never reach the configured confidence.
   */
  public static int minimumSamplesPerStep(double confidence, int planSize, int metrics, double tolerance) {
    double alpha = stepAlpha(confidence, planSize) / metrics;
    double z = Msprt.boundaryZ(Msprt.optimalMixingRatio(alpha), alpha);
    double range = 1 - tolerance;
    return (int) Math.ceil(2 * REFERENCE_VARIANCE * z * z / (range * range));
  }

  /** The estimate of one metric on its test scale. */
  record Estimate(
      Metric metric,
      double stableValue,
      double candidateValue,
      long stableN,
      long candidateN,
      double shortfall,
      double variance,
      double delta,
      double threshold,
      Double tailShare) {}

  /** Builds the estimate of one metric from two aggregates (both with observations). */
  static Estimate estimate(
      Metric metric, OutcomeAggregates stable, OutcomeAggregates candidate, double tolerance) {
    return estimate(metric, stable, candidate, tolerance, true);
  }

  /** As above; without {@code forReport} the latency p95s and tail share (not tested) are NaN. */
  static Estimate estimate(Metric metric, OutcomeAggregates stable, OutcomeAggregates candidate,
      double tolerance, boolean forReport) {
    long ns = stable.samples(metric);
    long nc = candidate.samples(metric);
    if (ns <= 0 || nc <= 0) {
      throw new IllegalArgumentException(
          "both versions need observations (stable n=" + ns + ", candidate n=" + nc + ")");
    }
    return switch (metric) {
      case TASK_SUCCESS_RATE -> {
        double ps = (double) stable.successes() / ns;
        double pc = (double) candidate.successes() / nc;
        double as = (stable.successes() + 1.0) / (ns + 2.0);
        double ac = (candidate.successes() + 1.0) / (nc + 2.0);
        double v = as * (1 - as) / ns + ac * (1 - ac) / nc;
        yield new Estimate(metric, ps, pc, ns, nc, ps - pc, v, tolerance, ps - tolerance, null);
      }
      case USER_SATISFACTION -> {
        double ms = stable.value(metric);
        double mc = candidate.value(metric);
        double v = stable.satisfactionVariance() / ns + candidate.satisfactionVariance() / nc;
        yield new Estimate(metric, ms, mc, ns, nc, ms - mc, Math.max(v, VARIANCE_FLOOR), tolerance,
            ms - tolerance, null);
      }
      case RESPONSE_LATENCY -> {
        double[] s = logMoments(stable.latency());
        double[] c = logMoments(candidate.latency());
        double v = s[1] / ns + c[1] / nc;
        if (!forReport) {
          yield new Estimate(metric, Double.NaN, Double.NaN, ns, nc, c[0] - s[0],
              Math.max(v, VARIANCE_FLOOR), Math.log1p(tolerance), Double.NaN, null);
        }
        double stableP95 = stable.latency().quantile(0.95);
        double threshold = stableP95 * (1 + tolerance);
        double share = (double) candidate.latency().countAtOrAbove(threshold) / nc;
        yield new Estimate(metric, stableP95, candidate.latency().quantile(0.95), ns, nc, c[0] - s[0],
            Math.max(v, VARIANCE_FLOOR), Math.log1p(tolerance), threshold, share);
      }
      case UPSTREAM_ERROR_RATE -> {
        double es = stable.value(metric);
        double ec = candidate.value(metric);
        double v = adjustedShareVariance(stable) / ns + adjustedShareVariance(candidate) / nc;
        yield new Estimate(metric, es, ec, ns, nc, ec - es, Math.max(v, VARIANCE_FLOOR), tolerance,
            es + tolerance, null);
      }
      case TOKENS_PER_SESSION -> {
        double v = stable.logTokenVariance() / ns + candidate.logTokenVariance() / nc;
        double ms = stable.value(metric);
        yield new Estimate(metric, ms, candidate.value(metric), ns, nc,
            candidate.logTokenMean() - stable.logTokenMean(), Math.max(v, VARIANCE_FLOOR),
            Math.log1p(tolerance), ms * (1 + tolerance), null);
      }
    };
  }

  /**
   * Variance of the per-session error shares with two pseudo-sessions added, one without and one
   * with every call failed (the Agresti–Caffo idea used for the success rate): a version with no
   * error yet still has an uncertain error rate, so one failing session cannot look like a
   * certain rise.
   */
  static double adjustedShareVariance(OutcomeAggregates a) {
    double n = a.callSessions() + 2.0;
    double mean = (a.errorShareSum() + 1) / n;
    return Math.max(0, (a.errorShareSumOfSquares() + 1 - n * mean * mean) / (n - 1));
  }

  /** Mean and unbiased variance of log latency over a histogram, from bucket centres. */
  static double[] logMoments(LatencyHistogram h) {
    double n = 0;
    double sum = 0;
    double sumSq = 0;
    for (Map.Entry<Integer, Long> e : h.counts().entrySet()) {
      int b = e.getKey();
      // Bucket 0 is [0, 1) ms, treated as 0.5 ms; the open last bucket as its lower bound.
      double centre = b == 0 ? Math.log(0.5)
          : b >= LatencyHistogram.MAX_BUCKET ? Math.log(LatencyHistogram.lowerBound(b))
          : Math.log(LatencyHistogram.lowerBound(b)) + Math.log(LatencyHistogram.GROWTH) / 2;
      double k = e.getValue();
      n += k;
      sum += k * centre;
      sumSq += k * centre * centre;
    }
    double mean = sum / n;
    double var = n < 2 ? 0 : Math.max(0, (sumSq - n * mean * mean) / (n - 1));
    return new double[] {mean, var};
  }

  /**
   * The decision of {@link #run} alone, without building the reports: whether Holm rejects any
   * metric at this look. The entity looks after every outcome and needs the reports only when
   * something happens.
   */
  public static boolean anyDegraded(
      List<Metric> metrics,
      int configuredMetrics,
      OutcomeAggregates stable,
      OutcomeAggregates candidate,
      Map<Metric, Double> tolerance,
      double confidence,
      int planSize,
      int minSamplesPerStep) {
    double stepAlpha = stepAlpha(confidence, planSize);
    int m = Math.max(configuredMetrics, metrics.size());
    double tau2 = mixingVariance(stepAlpha, m, minSamplesPerStep);
    List<Double> p = new ArrayList<>();
    for (Metric metric : metrics) {
      Estimate e = estimate(metric, stable, candidate, tolerance.get(metric), false);
      p.add(Msprt.pValue(e.shortfall() - e.delta(), e.variance(), tau2));
    }
    boolean[] rejected = new boolean[metrics.size()];
    holm(p, m, stepAlpha, rejected);
    for (boolean r : rejected) {
      if (r) {
        return true;
      }
    }
    return false;
  }

  /**
   * Tests the given metrics at one look and applies Holm over {@code configuredMetrics} (metrics
   * not yet tested count as not rejected). The results keep the order of {@code metrics}.
   *
   * @param looks outcomes seen in the step so far, for the report
   */
  public static List<TestResult> run(
      List<Metric> metrics,
      int configuredMetrics,
      OutcomeAggregates stable,
      OutcomeAggregates candidate,
      Map<Metric, Double> tolerance,
      double confidence,
      int planSize,
      int minSamplesPerStep,
      long looks) {
    double stepAlpha = stepAlpha(confidence, planSize);
    int m = Math.max(configuredMetrics, metrics.size());
    double tau2 = mixingVariance(stepAlpha, m, minSamplesPerStep);
    List<Estimate> estimates = new ArrayList<>();
    List<Double> p = new ArrayList<>();
    for (Metric metric : metrics) {
      Estimate e = estimate(metric, stable, candidate, tolerance.get(metric));
      estimates.add(e);
      p.add(Msprt.pValue(e.shortfall() - e.delta(), e.variance(), tau2));
    }
    boolean[] rejected = new boolean[metrics.size()];
    double[] level = holm(p, m, stepAlpha, rejected);
    List<TestResult> out = new ArrayList<>();
    for (int i = 0; i < estimates.size(); i++) {
      out.add(result(estimates.get(i), p.get(i), level[i], rejected[i], tau2, confidence, looks,
          tolerance.get(estimates.get(i).metric())));
    }
    return out;
  }

  /**
   * Holm's step-down procedure: sorts the p-values, compares the k-th smallest (k from 0) with
   * {@code alpha / (m − k)} and rejects until the first that is above its level (a p-value equal
   * to its level is rejected: Ville bounds the chance that Λ ever reaches 1/α). Fills
   * {@code rejected} and returns each p-value's level.
   */
  public static double[] holm(List<Double> pValues, int m, double alpha, boolean[] rejected) {
    Integer[] order = new Integer[pValues.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, Comparator.comparingDouble(pValues::get));
    double[] level = new double[order.length];
    boolean stillRejecting = true;
    for (int k = 0; k < order.length; k++) {
      int i = order[k];
      level[i] = alpha / (m - k);
      stillRejecting = stillRejecting && pValues.get(i) <= level[i];
      rejected[i] = stillRejecting;
    }
    return level;
  }

  private static TestResult result(Estimate e, double p, double level, boolean degraded,
      double tau2, double confidence, long looks, double tolerance) {
    double se = Math.sqrt(e.variance());
    double z = (e.shortfall() - e.delta()) / se;
    double crit = Msprt.boundaryZ(tau2 / e.variance(), level);
    String verdict = degraded ? ": worse beyond tolerance" : "";
    // Every session alike within each version (the same token count, say): z is the floor's artefact
    // (−182321 for equal arms), so the summary says what decided instead of printing it.
    String statistic = e.variance() <= VARIANCE_FLOOR
        ? "no variance (every session alike within each version), so the shortfall "
            + (degraded ? "exceeds" : "is within") + " the tolerance"
        : String.format(Locale.ROOT, "z = %.3f %s %.3f", z, degraded ? ">" : "<=", crit);
    String test = String.format(Locale.ROOT,
        "%s (always-valid mSPRT, p = %.4g %s Holm level %.4g, look %d; tolerance %.4f %s)",
        statistic, p, degraded ? "<=" : ">", level, looks, tolerance,
        e.metric().relativeTolerance() ? "relative" : "absolute");
    String summary = switch (e.metric()) {
      case TASK_SUCCESS_RATE, USER_SATISFACTION -> String.format(Locale.ROOT,
          "%s %.4f (n=%d) vs stable %.4f (n=%d), threshold %.4f (stable − tolerance): shortfall "
              + "%.4f, %s%s", e.metric().key(), e.candidateValue(), e.candidateN(), e.stableValue(),
          e.stableN(), e.threshold(), e.shortfall(), test, verdict);
      case RESPONSE_LATENCY -> String.format(Locale.ROOT,
          "response-latency p95 %.1f ms (n=%d) vs stable %.1f ms (n=%d): typical latency ×%.3f "
              + "(log ratio %.4f against log(1 + tolerance) %.4f), %s%s",
          e.candidateValue(), e.candidateN(), e.stableValue(), e.stableN(), Math.exp(e.shortfall()),
          e.shortfall(), e.delta(), test, verdict);
      case UPSTREAM_ERROR_RATE -> String.format(Locale.ROOT,
          "guardrail upstream-error-rate %.4f (n=%d sessions) vs stable %.4f (n=%d), threshold %.4f "
              + "(stable + tolerance): excess %.4f, %s%s", e.candidateValue(), e.candidateN(),
          e.stableValue(), e.stableN(), e.threshold(), e.shortfall(), test, verdict);
      case TOKENS_PER_SESSION -> String.format(Locale.ROOT,
          "guardrail tokens-per-session mean %.1f (n=%d) vs stable %.1f (n=%d): typical tokens ×%.3f "
              + "(log ratio %.4f against log(1 + tolerance) %.4f), %s%s", e.candidateValue(),
          e.candidateN(), e.stableValue(), e.stableN(), Math.exp(e.shortfall()), e.shortfall(),
          e.delta(), test, verdict);
    };
    return new TestResult(e.metric(), e.stableValue(), e.candidateValue(), e.stableN(),
        e.candidateN(), z, crit, confidence, tolerance, e.metric().relativeTolerance(),
        e.threshold(), e.tailShare(), degraded, summary, METHOD, e.shortfall(), se, Math.sqrt(tau2),
        p, level, looks);
  }
}
