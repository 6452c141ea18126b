package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class MsprtTest {

  @Test
  void pValueIsInTheUnitIntervalAndItsRunningMinimumNeverIncreases() {
    SplittableRandom rnd = new SplittableRandom(7);
    double tau2 = 0.01;
    for (int run = 0; run < 50; run++) {
      Msprt.RunningPValue running = new Msprt.RunningPValue();
      double previous = 1.0;
      double sum = 0;
      // A candidate 5 points worse than stable − tolerance half the time, better the other half.
      double drift = run % 2 == 0 ? 0.05 : -0.05;
      for (int n = 1; n <= 500; n++) {
        sum += drift + 0.5 * gaussian(rnd);
        double variance = 0.25 / n;
        double p = Msprt.pValue(sum / n, variance, tau2);
        assertTrue(p >= 0 && p <= 1, "p = " + p);
        double avp = running.update(p);
        assertTrue(avp <= previous, "always-valid p rose from " + previous + " to " + avp);
        assertTrue(avp <= p);
        previous = avp;
      }
    }
    // Extreme inputs stay in range and finite.
    assertEquals(1.0, Msprt.pValue(-1e6, 1e-9, 1));
    assertEquals(0.0, Msprt.pValue(1e6, 1e-9, 1), 1e-300);
    assertTrue(Msprt.pValue(0, 1, 1) == 1.0, "no evidence at zero excess");
  }

  @Test
  void theCriticalValueIsWhereThePValueMeetsTheLevel() {
    for (double alpha : new double[] {0.05, 0.0056, 1e-4}) {
      for (double r : new double[] {0.5, 5, 50, 500}) {
        double z = Msprt.boundaryZ(r, alpha);
        double variance = 0.001;
        double atBoundary = Msprt.pValue(z * Math.sqrt(variance), variance, r * variance);
        assertEquals(alpha, atBoundary, alpha * 1e-6, "alpha " + alpha + ", r " + r);
        // Always stricter than the fixed-sample one-sided critical value: the price of peeking.
        assertTrue(z > CanaryStatistics.criticalValue(1 - alpha), "z " + z);
      }
    }
  }

  @Test
  void theMixingRatioMinimisesTheBar() {
    double alpha = 0.05 / 9;
    double r = Msprt.optimalMixingRatio(alpha);
    double best = Msprt.boundaryZ(r, alpha);
    assertTrue(best <= Msprt.boundaryZ(r / 3, alpha) && best <= Msprt.boundaryZ(r * 3, alpha));
    assertEquals(3.54, best, 0.02, "the bar at alpha/9 = 0.0056");
  }

  @Test
  void aPerfectlyNullStreamRarelyCrossesAtAnyLook() {
    // Ville's inequality, checked: a null stream exactly at the boundary θ = δ, looked at after
    // every observation for 2,000 observations, crosses α = 0.05 in at most ~5 % of 400 runs.
    SplittableRandom rnd = new SplittableRandom(11);
    int crossed = 0;
    int runs = 400;
    for (int run = 0; run < runs; run++) {
      double sum = 0;
      for (int n = 1; n <= 2000; n++) {
        sum += gaussian(rnd);
        if (n >= 10 && Msprt.pValue(sum / n, 1.0 / n, 0.1) <= 0.05) {
          crossed++;
          break;
        }
      }
    }
    assertTrue(crossed <= 0.07 * runs, crossed + " of " + runs + " null streams crossed");
  }

  // Reference values below come from SciPy (norm.logcdf, special.erfc, brentq, minimize_scalar),
  // not from this code: Λ = 2·(1+r)^(−1/2)·exp(u²/2)·Φ(u), u = (x/√V)·√(r/(1+r)), r = τ²/V.

  @Test
  void theLikelihoodRatioMatchesItsClosedForm() {
    // z = x/√V = 2, r = 4: Λ = 4.267, p = 1/Λ.
    assertEquals(1.4509141535841024, Msprt.logLikelihoodRatio(0.1, 0.0025, 0.01), 1e-6);
    assertEquals(0.23435595280682442, Msprt.pValue(0.1, 0.0025, 0.01), 1e-6);
    // Below the tolerance (z = −1, −4) and a small r: Λ < 1, so no evidence (p = 1).
    assertEquals(-1.3960205343828023, Msprt.logLikelihoodRatio(-0.05, 0.0025, 0.01), 1e-6);
    assertEquals(-2.372002307140768, Msprt.logLikelihoodRatio(-0.2, 0.0025, 0.01), 1e-6);
    assertEquals(1.0, Msprt.pValue(-0.05, 0.0025, 0.01));
    assertEquals(-0.05889109335650067, Msprt.logLikelihoodRatio(0.03, 0.01, 0.005), 1e-6);
    assertEquals(1.0, Msprt.pValue(0.03, 0.01, 0.005));
    // No excess at all: Λ = 2·Φ(0)/√(1 + r) = 1/√2 at r = 1.
    assertEquals(-0.5 * Math.log(2), Msprt.logLikelihoodRatio(0, 1, 1), 1e-7);
  }

  @Test
  void aVarianceOrMixingVarianceOfZeroIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Msprt.logLikelihoodRatio(0.1, 0, 0.01));
    assertThrows(IllegalArgumentException.class, () -> Msprt.logLikelihoodRatio(0.1, 0.01, 0));
    assertThrows(IllegalArgumentException.class, () -> Msprt.pValue(0.1, 0, 0.01));
  }

  @Test
  void aLevelOutsideTheOpenUnitIntervalIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Msprt.optimalMixingRatio(0));
    assertThrows(IllegalArgumentException.class, () -> Msprt.optimalMixingRatio(1));
  }

  @Test
  void erfcMatchesTheTableWithinItsStatedError() {
    double[][] table = {{0, 1.0}, {0.1, 0.8875370839817152}, {0.5, 0.4795001221869535},
        {1, 0.15729920705028516}, {2, 0.004677734981047266}, {3, 2.2090496998585445e-05},
        {5, 1.5374597944280347e-12}};
    for (double[] row : table) {
      assertEquals(row[1], Msprt.erfc(row[0]), 1.2e-7 * row[1], "erfc(" + row[0] + ")");
    }
  }

  @Test
  void theMixingRatioSearchFindsTheLowestBar() {
    // Continuous minima of the bar over r (exact Φ): α = 0.05/9 → r* = 11.53, z* = 3.5395;
    // α = 0.05/15 → r* = 12.64, z* = 3.6925. The grid has 2.3 % steps.
    double r = Msprt.searchOptimalMixingRatio(0.05 / 9);
    assertEquals(11.53, r, 11.53 * 0.03);
    assertEquals(3.5395, Msprt.boundaryZ(r, 0.05 / 9), 1e-3);
    r = Msprt.searchOptimalMixingRatio(0.05 / 15);
    assertEquals(12.64, r, 12.64 * 0.03);
    assertEquals(3.6925, Msprt.boundaryZ(r, 0.05 / 15), 1e-3);
    // A looser level wants less mixing (α = 0.05/3: r* = 9.13).
    assertEquals(9.13, Msprt.searchOptimalMixingRatio(0.05 / 3), 9.13 * 0.03);
  }

  @Test
  void theRunningPValueIsTheSmallestLookSoFar() {
    Msprt.RunningPValue running = new Msprt.RunningPValue();
    assertEquals(1.0, running.value());
    assertEquals(0.3, running.update(0.3));
    assertEquals(0.3, running.update(0.5));
    assertEquals(0.1, running.update(0.1));
    assertEquals(0.1, running.value());
  }

  static double gaussian(SplittableRandom rnd) {
    double u1 = 1 - rnd.nextDouble();
    double u2 = rnd.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
