package io.otl.core.model;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one-sided mixture sequential probability ratio test (mSPRT) on an approximately normal
 * estimate, after Johari, Pekelis and Walsh, "Always valid inference" (2015/2022), in the
 * formulation Optimizely uses for differences of means and proportions. Pure functions.
 *
 * <p>Let {@code θ̂} be the observed shortfall of the candidate (stable − candidate for a
 * higher-is-better metric) with variance {@code V}, and {@code δ} the tolerance. The null
 * hypothesis is {@code θ ≤ δ} ("at most δ worse"). In information time {@code 1/V} the score
 * {@code (θ̂ − δ)/V} behaves like a Brownian motion with drift {@code θ − δ}, so for every
 * {@code θ' > δ} the likelihood ratio of θ' against δ is a non-negative martingale when θ = δ and
 * a supermartingale when θ < δ. Mixing it over a half-normal prior {@code θ' − δ ~ |N(0, τ²)|}
 * gives, with {@code x = θ̂ − δ} and {@code r = τ²/V}:
 *
 * <pre>
 *   Λ = 2 · sqrt(1/(1+r)) · exp(u²/2) · Φ(u),   u = (x/√V) · sqrt(r/(1+r))
 * </pre>
 *
 * still a supermartingale under the null. Ville's inequality then bounds the chance that Λ
 * <em>ever</em> reaches {@code 1/α} by α, however often it is looked at: {@code p = min(1, 1/Λ)}
 * (and its running minimum) is an always-valid p-value. The price of that guarantee is a higher
 * bar than a fixed-sample test: at α = 0.0056 the z statistic must pass about 3.5 instead of 2.5.
 *
 * <p>τ is chosen before any data, from the settings only (a data-driven τ would void the
 * guarantee): {@code τ² = r* · V_ref}, where {@code V_ref} is the variance of the estimate at
 * {@code min-samples-per-step} observations per arm under a reference per-observation variance,
 * and {@code r*} minimises the z a rejection needs at that information (see {@link
 * #optimalMixingRatio}). A wrong reference variance costs power, never validity.
 */
public final class Msprt {

  private static final Map<Double, Double> OPTIMAL_RATIO = new ConcurrentHashMap<>();

  private Msprt() {}

  /**
   * {@code log Λ} for an observed excess over the tolerance {@code x = θ̂ − δ}, the estimate's
   * variance V and the mixing variance τ² (both > 0).
   */
  public static double logLikelihoodRatio(double excess, double variance, double mixingVariance) {
    if (!(variance > 0) || !(mixingVariance > 0)) {
      throw new IllegalArgumentException(
          "variance and mixing variance must be > 0, were " + variance + ", " + mixingVariance);
    }
    double r = mixingVariance / variance;
    double u = excess / Math.sqrt(variance) * Math.sqrt(r / (1 + r));
    return -0.5 * Math.log1p(r) + Math.log(2) + halfSquarePlusLogPhi(u);
  }

  /** The always-valid p-value of one look, {@code min(1, 1/Λ)}, in [0, 1]. */
  public static double pValue(double excess, double variance, double mixingVariance) {
    double logLr = logLikelihoodRatio(excess, variance, mixingVariance);
    return logLr <= 0 ? 1.0 : Math.exp(-logLr);
  }

  /**
   * The z = x/√V at which Λ reaches 1/α for the ratio r = τ²/V: the critical value of this look,
   * for reports ("z = 2.1 ≤ 3.6"). Λ grows with z, so this is a plain bisection.
   */
  public static double boundaryZ(double ratio, double alpha) {
    double target = Math.log(1 / alpha) + 0.5 * Math.log1p(ratio) - Math.log(2);
    double scale = Math.sqrt(ratio / (1 + ratio));
    double lo = -10;
    double hi = 200;
    for (int i = 0; i < 100 && hi - lo > 1e-9; i++) {
      double mid = (lo + hi) / 2;
      if (halfSquarePlusLogPhi(mid * scale) < target) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return (lo + hi) / 2;
  }

  /**
   * The r = τ²/V that makes the rejection bar lowest at the reference information, for level α
   * (searched on a log grid from 0.1 to 10⁴; about 10–20 for the levels used here). Cached.
   */
  public static double optimalMixingRatio(double alpha) {
    if (!(alpha > 0 && alpha < 1)) {
      throw new IllegalArgumentException("alpha must be in (0, 1), was " + alpha);
    }
    return OPTIMAL_RATIO.computeIfAbsent(alpha, Msprt::searchOptimalMixingRatio);
  }

  /**
   * The uncached grid search of {@link #optimalMixingRatio}. Separate so that tests reach it: the
   * cache is static and outlives a test, so a test through the cache may see an earlier value.
   */
  static double searchOptimalMixingRatio(double alpha) {
    double best = 1;
    double bestZ = Double.MAX_VALUE;
    for (double e = -1; e <= 4; e += 0.01) {
      double r = Math.pow(10, e);
      double z = boundaryZ(r, alpha);
      if (z < bestZ) {
        bestZ = z;
        best = r;
      }
    }
    return best;
  }

  /** {@code u²/2 + log Φ(u)}, computed without underflow for very negative u. */
  static double halfSquarePlusLogPhi(double u) {
    if (u >= 0) {
      return u * u / 2 + Math.log1p(-0.5 * erfc(u / Math.sqrt(2)));
    }
    // Φ(u) = erfc(z)/2 with z = −u/√2 and erfc(z) = t·exp(−z² + P(t)): the exp(−z²) = exp(−u²/2)
    // cancels the u²/2 exactly, so nothing underflows.
    double z = -u / Math.sqrt(2);
    double t = 1 / (1 + 0.5 * z);
    return Math.log(0.5) + Math.log(t) + erfcPoly(t);
  }

  /** Complementary error function for z ≥ 0 (Numerical Recipes' erfcc, relative error < 1.2·10⁻⁷). */
  static double erfc(double z) {
    double t = 1 / (1 + 0.5 * z);
    return t * Math.exp(-z * z + erfcPoly(t));
  }

  private static double erfcPoly(double t) {
    return -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223
        + t * 0.17087277))))))));
  }

  /**
   * The running minimum of one metric's p-values over the looks of a step: the always-valid
   * p-value proper, non-increasing by construction. The entity stops at the first look whose
   * p-value is below its level, so its decision is the same as with this minimum; the harness
   * and the tests use this class to show the sequence.
   */
  public static final class RunningPValue {
    private double p = 1.0;

    /** Takes one look's p-value and returns the always-valid p-value so far. */
    public double update(double lookPValue) {
      if (lookPValue < p) {
        p = lookPValue;
      }
      return p;
    }

    public double value() {
      return p;
    }
  }
}
