package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

  static double gaussian(SplittableRandom rnd) {
    double u1 = 1 - rnd.nextDouble();
    double u2 = rnd.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
