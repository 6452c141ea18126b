package io.otl.core.model;

import java.util.Locale;

/**
 * Sample-ratio-mismatch guardrail: is the observed split of a step's sessions between candidate
 * and stable compatible with the ratio the router was told to use? A mismatch means routing or
 * recording is broken (sessions lost, double-counted, or sent to the wrong version), and then no
 * comparison of the two versions can be trusted: the rollout pauses instead of stepping up or
 * rolling back on the figures.
 *
 * <p>Two statistics must agree before a mismatch is declared:
 *
 * <ul>
 *   <li>Pearson's chi-square of the 2×1 table (one degree of freedom), {@code p < alpha}: the
 *       figure people know;
 *   <li>a sequential Beta-binomial mixture test of the same question (Beta prior centred on the
 *       intended ratio, {@link #PRIOR_STRENGTH} pseudo-sessions): its Bayes factor is a
 *       martingale when the split is right, so by Ville's inequality it wrongly reaches {@code
 *       1/alpha} with probability at most alpha however often the node looks. The chi-square alone
 *       would not survive looks after every outcome.
 * </ul>
 */
public final class SampleRatioCheck {

  /** Strict by design: a false pause needs an operator. */
  public static final double ALPHA = 0.001;

  /** Weight of the prior in sessions: sensitive to gross mismatches within a few hundred sessions. */
  public static final double PRIOR_STRENGTH = 100;

  private SampleRatioCheck() {}

  /**
   * @param chiSquare Pearson's statistic; chiSquareP its p-value (1 degree of freedom)
   * @param sequentialP the always-valid p-value of this look, {@code min(1, 1/BF)}
   * @param mismatch both p-values below {@link #ALPHA}
   */
  public record Result(
      long candidateSessions,
      long stableSessions,
      double intendedRatio,
      double chiSquare,
      double chiSquareP,
      double sequentialP,
      boolean mismatch) {

    /** The figures in one sentence (built on demand: the node checks after every outcome). */
    public String summary() {
      long n = candidateSessions + stableSessions;
      return String.format(Locale.ROOT,
          "sample ratio: %d candidate and %d stable sessions in this step, %.4f of them on the "
              + "candidate against an intended %.4f; chi-square %.2f (p = %.3g), sequential p = "
              + "%.3g; %s",
          candidateSessions, stableSessions, n == 0 ? 0.0 : (double) candidateSessions / n,
          intendedRatio, chiSquare, chiSquareP, sequentialP, mismatch
              ? "mismatch (both p < " + ALPHA + "): routing or recording is broken, the figures "
                  + "of this step cannot be trusted"
              : "consistent");
    }
  }

  public static Result check(long candidateSessions, long stableSessions, double intendedRatio) {
    if (!(intendedRatio > 0 && intendedRatio < 1)) {
      throw new IllegalArgumentException("intended ratio must be in (0, 1), was " + intendedRatio);
    }
    long n = candidateSessions + stableSessions;
    if (n == 0) {
      return new Result(0, 0, intendedRatio, 0, 1, 1, false);
    }
    double expectedC = n * intendedRatio;
    double expectedS = n * (1 - intendedRatio);
    double chi2 = sq(candidateSessions - expectedC) / expectedC + sq(stableSessions - expectedS) / expectedS;
    double chiP = Math.min(1, 2 * CanaryStatistics.normalCdf(-Math.sqrt(chi2)));
    double a = PRIOR_STRENGTH * intendedRatio;
    double b = PRIOR_STRENGTH * (1 - intendedRatio);
    double logBf = logBeta(a + candidateSessions, b + stableSessions) - logBeta(a, b)
        - candidateSessions * Math.log(intendedRatio) - stableSessions * Math.log(1 - intendedRatio);
    double seqP = logBf <= 0 ? 1 : Math.exp(-logBf);
    boolean mismatch = chiP < ALPHA && seqP < ALPHA;
    return new Result(candidateSessions, stableSessions, intendedRatio, chi2, chiP, seqP, mismatch);
  }

  private static double sq(double x) {
    return x * x;
  }

  static double logBeta(double a, double b) {
    return logGamma(a) + logGamma(b) - logGamma(a + b);
  }

  /** Lanczos approximation (g = 7, 9 terms), relative error about 10⁻¹⁵ for x > 0. */
  static double logGamma(double x) {
    if (x < 0.5) {
      return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
    }
    double[] c = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
        -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
        1.5056327351493116e-7};
    double xm = x - 1;
    double sum = c[0];
    for (int i = 1; i < 9; i++) {
      sum += c[i] / (xm + i);
    }
    double t = xm + 7.5;
    return 0.5 * Math.log(2 * Math.PI) + (xm + 0.5) * Math.log(t) - t + Math.log(sum);
  }
}
