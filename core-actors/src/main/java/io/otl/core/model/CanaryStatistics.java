package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Locale;

/**
 * The fixed-level one-sided tests used before issue #19, kept callable for the comparison in
 * {@code Bench C1} and for events written by them; the entity now decides with {@link
 * SequentialTest}. Re-run after every outcome, these tests are not valid under repeated looks
 * (Bench C1 measures how often they roll back an equal candidate).
 *
 * <p>The one-sided tests that decide whether a candidate is worse than the stable version by more
 * than a tolerance. Pure functions; the entity stores their {@link TestResult}s in its events so
 * an audit can replay the decision.
 *
 * <p>Every test has the null hypothesis "the candidate is at most {@code tolerance} worse than
 * stable" and declares a degradation when the statistic exceeds the one-sided critical value
 * {@code z(confidence)} (1.645 for 0.95). Because the tolerance is part of the null hypothesis,
 * two equal versions sit at a distance from the rejection region that grows with the sample
 * size, which keeps false rollbacks rare although the entity re-tests after every outcome.
 *
 * <ul>
 *   <li><b>task-success-rate</b>: two-proportion z-test with unpooled variance (the hypothesised
 *       difference is not zero): {@code z = (p_s − p_c − δ) / sqrt(p̃_s(1−p̃_s)/n_s +
 *       p̃_c(1−p̃_c)/n_c)}, where the variance uses the Agresti–Caffo adjusted proportions {@code
 *       p̃ = (x+1)/(n+2)} so it never collapses to zero at 0 % or 100 %.
 *   <li><b>user-satisfaction</b>: Welch z-test on the mean per-session scores (scores are
 *       bounded in [0, 1], so the normal approximation holds at the sample sizes used): {@code z
 *       = (m_s − m_c − δ) / sqrt(v_s/n_s + v_c/n_c)}.
 *   <li><b>response-latency</b> (relative tolerance ρ): let {@code T = (1 + ρ) · p95_stable}. If
 *       the candidate's p95 is at most T, at most 5 % of its sessions are slower than T; if it is
 *       above T, more than 5 % are. So "candidate p95 worse than T" is tested as a one-sided
 *       binomial test of the share of candidate sessions slower than T against 0.05: {@code z =
 *       (k/n − 0.05) / sqrt(0.05 · 0.95 / n)}. No bootstrap is needed. The stable's p95 is taken
 *       as known; its own sampling error is absorbed by the tolerance (the stable's sample is at
 *       least as large as the candidate's in every step below 100 %).
 * </ul>
 */
public final class CanaryStatistics {

  /** Share of sessions above the p95 when two latency distributions are equal. */
  public static final double P95_TAIL = 0.05;

  private CanaryStatistics() {}

  /**
   * The outcome of one test, with every number needed to recompute it.
   *
   * @param stableValue the stable's metric value (p95 in ms for latency)
   * @param candidateValue the candidate's metric value
   * @param statistic the z statistic (positive = candidate worse)
   * @param criticalValue the one-sided critical value for {@code confidence}
   * @param tolerance the tolerance used (absolute or relative, see {@code relativeTolerance})
   * @param threshold the candidate value at the edge of the tolerance: {@code stable − δ} for
   *     rates and satisfaction, {@code (1 + ρ)·p95_stable} in ms for latency
   * @param observedTailShare latency only: share of candidate sessions at or above the threshold
   * @param degraded statistic > criticalValue
   * @param summary the same in one sentence for logs, views and audits
   * @param method how the test was run: {@code "msprt"} for the always-valid sequential test of
   *     {@link SequentialTest}; null in events written before it (the fixed-level z-test below)
   * @param estimate sequential only: the observed shortfall on the test's scale (stable −
   *     candidate for rates and satisfaction, log of the candidate/stable geometric-mean latency)
   * @param standardError sequential only: the estimate's standard error (statistic = (estimate −
   *     tolerance on that scale) / standardError)
   * @param mixingSd sequential only: τ, the spread of the mixture over the alternatives
   * @param pValue sequential only: the always-valid p-value of this look, {@code min(1, 1/Λ)}
   * @param alpha sequential only: the level this p-value was compared with (1 − confidence,
   *     split over the tested steps, then Holm's level for its rank among the metrics);
   *     criticalValue is the z at which pValue reaches it
   * @param looks sequential only: how many outcomes (looks) the step has had so far
   */
  public record TestResult(
      Metric metric,
      double stableValue,
      double candidateValue,
      long stableSamples,
      long candidateSamples,
      double statistic,
      double criticalValue,
      double confidence,
      double tolerance,
      boolean relativeTolerance,
      double threshold,
      Double observedTailShare,
      boolean degraded,
      String summary,
      // Added in 0.2.0 with the sequential test; left out when null, so 0.1.0 results rewrite byte for byte.
      @JsonInclude(JsonInclude.Include.NON_NULL) String method,
      @JsonInclude(JsonInclude.Include.NON_NULL) Double estimate,
      @JsonInclude(JsonInclude.Include.NON_NULL) Double standardError,
      @JsonInclude(JsonInclude.Include.NON_NULL) Double mixingSd,
      @JsonInclude(JsonInclude.Include.NON_NULL) Double pValue,
      @JsonInclude(JsonInclude.Include.NON_NULL) Double alpha,
      @JsonInclude(JsonInclude.Include.NON_NULL) Long looks) {

    // Events persist this record: fields are only ever added (boxed, so older events read them as
    // null), never renamed or removed. The canonical constructor is the JSON creator.
    @JsonCreator
    public TestResult {}

    /** A fixed-level test's result (the form written before the sequential test existed). */
    public TestResult(
        Metric metric,
        double stableValue,
        double candidateValue,
        long stableSamples,
        long candidateSamples,
        double statistic,
        double criticalValue,
        double confidence,
        double tolerance,
        boolean relativeTolerance,
        double threshold,
        Double observedTailShare,
        boolean degraded,
        String summary) {
      this(metric, stableValue, candidateValue, stableSamples, candidateSamples, statistic,
          criticalValue, confidence, tolerance, relativeTolerance, threshold, observedTailShare,
          degraded, summary, null, null, null, null, null, null, null);
    }
  }

  /** The one-sided critical value z with Φ(z) = confidence. */
  public static double criticalValue(double confidence) {
    if (!(confidence > 0 && confidence < 1)) {
      throw new IllegalArgumentException("confidence must be in (0, 1), was " + confidence);
    }
    double lo = -10;
    double hi = 10;
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
      double mid = (lo + hi) / 2;
      if (normalCdf(mid) < confidence) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return (lo + hi) / 2;
  }

  /** Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf, absolute error < 1.5·10⁻⁷). */
  public static double normalCdf(double z) {
    double x = Math.abs(z) / Math.sqrt(2);
    double t = 1 / (1 + 0.3275911 * x);
    double poly =
        t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    double erf = 1 - poly * Math.exp(-x * x);
    return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
  }

  /** Runs the test of one metric on two aggregates (both must have observations). */
  public static TestResult test(
      Metric metric,
      OutcomeAggregates stable,
      OutcomeAggregates candidate,
      double tolerance,
      double confidence) {
    return switch (metric) {
      case TASK_SUCCESS_RATE -> successRate(
          stable.successes(), stable.resultsKnown(),
          candidate.successes(), candidate.resultsKnown(),
          tolerance, confidence);
      case USER_SATISFACTION -> satisfaction(
          stable.value(metric), stable.satisfactionVariance(), stable.satisfactionCount(),
          candidate.value(metric), candidate.satisfactionVariance(), candidate.satisfactionCount(),
          tolerance, confidence);
      case RESPONSE_LATENCY -> latency(stable.latency(), candidate.latency(), tolerance, confidence);
      // The fixed-level rule predates the guardrails; only the sequential rule tests them.
      case UPSTREAM_ERROR_RATE, TOKENS_PER_SESSION -> throw new IllegalArgumentException(
          metric.key() + " is a guardrail, tested only by the sequential rule");
    };
  }

  /** One-sided two-proportion z-test: is the candidate's success rate below stable − δ? */
  public static TestResult successRate(
      long stableSuccesses,
      long stableN,
      long candidateSuccesses,
      long candidateN,
      double tolerance,
      double confidence) {
    requirePositive(stableN, candidateN);
    double ps = (double) stableSuccesses / stableN;
    double pc = (double) candidateSuccesses / candidateN;
    double as = (stableSuccesses + 1.0) / (stableN + 2.0);
    double ac = (candidateSuccesses + 1.0) / (candidateN + 2.0);
    double se = Math.sqrt(as * (1 - as) / stableN + ac * (1 - ac) / candidateN);
    double z = (ps - pc - tolerance) / se;
    double crit = criticalValue(confidence);
    boolean degraded = z > crit;
    String summary = String.format(Locale.ROOT,
        "task-success-rate %.4f (n=%d) vs stable %.4f (n=%d): z = %.3f %s %.3f "
            + "(one-sided two-proportion test at %.3f, tolerance %.4f absolute)%s",
        pc, candidateN, ps, stableN, z, degraded ? ">" : "<=", crit, confidence, tolerance,
        degraded ? ": worse beyond tolerance" : "");
    return new TestResult(Metric.TASK_SUCCESS_RATE, ps, pc, stableN, candidateN, z, crit,
        confidence, tolerance, false, ps - tolerance, null, degraded, summary);
  }

  /** One-sided Welch z-test: is the candidate's mean satisfaction below stable − δ? */
  public static TestResult satisfaction(
      double stableMean,
      double stableVariance,
      long stableN,
      double candidateMean,
      double candidateVariance,
      long candidateN,
      double tolerance,
      double confidence) {
    requirePositive(stableN, candidateN);
    // A floor on the standard error keeps z finite (and JSON-serialisable) when every score is
    // equal; it is far below any real sampling error of scores in [0, 1].
    double rawSe = Math.sqrt(stableVariance / stableN + candidateVariance / candidateN);
    double se = Math.max(rawSe, 1e-6);
    double z = (stableMean - candidateMean - tolerance) / se;
    double crit = criticalValue(confidence);
    boolean degraded = z > crit;
    // Every score equal within each version: z is the floor's artefact (−50000 for equal means), so
    // the summary says what decided instead of printing it.
    String statistic = rawSe < 1e-6
        ? String.format(Locale.ROOT, "no variance (every score equal within each version), so the difference %.4f %s "
            + "the tolerance", stableMean - candidateMean, degraded ? "exceeds" : "is within")
        : String.format(Locale.ROOT, "z = %.3f %s %.3f", z, degraded ? ">" : "<=", crit);
    String summary = String.format(Locale.ROOT,
        "user-satisfaction %.4f (n=%d) vs stable %.4f (n=%d): %s "
            + "(one-sided Welch test at %.3f, tolerance %.4f absolute)%s",
        candidateMean, candidateN, stableMean, stableN, statistic, confidence,
        tolerance, degraded ? ": worse beyond tolerance" : "");
    return new TestResult(Metric.USER_SATISFACTION, stableMean, candidateMean, stableN, candidateN,
        z, crit, confidence, tolerance, false, stableMean - tolerance, null, degraded, summary);
  }

  /**
   * One-sided test of the candidate's p95 against {@code (1 + ρ) · p95_stable}, through the share
   * of candidate sessions at or above that threshold (see the class comment).
   */
  public static TestResult latency(
      LatencyHistogram stable, LatencyHistogram candidate, double relativeTolerance, double confidence) {
    long ns = stable.total();
    long nc = candidate.total();
    requirePositive(ns, nc);
    double stableP95 = stable.quantile(0.95);
    double candidateP95 = candidate.quantile(0.95);
    double threshold = stableP95 * (1 + relativeTolerance);
    long above = candidate.countAtOrAbove(threshold);
    double share = (double) above / nc;
    double z = (share - P95_TAIL) / Math.sqrt(P95_TAIL * (1 - P95_TAIL) / nc);
    double crit = criticalValue(confidence);
    boolean degraded = z > crit;
    String summary = String.format(Locale.ROOT,
        "response-latency p95 %.1f ms (n=%d) vs stable %.1f ms (n=%d): %d of %d candidate sessions "
            + "(%.4f) at or above %.1f ms = stable p95 × %.2f; z = %.3f %s %.3f (one-sided test of "
            + "that share against 0.05 at %.3f, tolerance %.4f relative)%s",
        candidateP95, nc, stableP95, ns, above, nc, share, threshold, 1 + relativeTolerance, z,
        degraded ? ">" : "<=", crit, confidence, relativeTolerance,
        degraded ? ": worse beyond tolerance" : "");
    return new TestResult(Metric.RESPONSE_LATENCY, stableP95, candidateP95, ns, nc, z, crit,
        confidence, relativeTolerance, true, threshold, share, degraded, summary);
  }

  private static void requirePositive(long stableN, long candidateN) {
    if (stableN <= 0 || candidateN <= 0) {
      throw new IllegalArgumentException(
          "both versions need observations (stable n=" + stableN + ", candidate n=" + candidateN + ")");
    }
  }
}
