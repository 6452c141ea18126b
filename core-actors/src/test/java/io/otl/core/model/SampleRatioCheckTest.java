package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SampleRatioCheckTest {

  @Test
  void theIntendedSplitPassesAndABrokenOneIsCaught() {
    assertFalse(SampleRatioCheck.check(100, 1900, 0.05).mismatch());
    assertFalse(SampleRatioCheck.check(0, 0, 0.05).mismatch());
    SampleRatioCheck.Result broken = SampleRatioCheck.check(200, 1800, 0.05);
    assertTrue(broken.mismatch(), broken.summary());
    assertTrue(broken.chiSquareP() < SampleRatioCheck.ALPHA && broken.sequentialP() < SampleRatioCheck.ALPHA);
    // Pearson: (200 − 100)²/100 + (1800 − 1900)²/1900
    assertEquals(100 + 10000 / 1900.0, broken.chiSquare(), 1e-9);
    // A candidate starved of traffic is a mismatch too.
    assertTrue(SampleRatioCheck.check(10, 1990, 0.05).mismatch());
  }

  @Test
  void aCorrectRouterLookedAtAfterEverySessionRarelyRaisesIt() {
    // 300 steps of 2,000 sessions each at 5 %, checked after every session: the sequential part
    // keeps false alarms at most 0.001 per step in theory; allow a loose 1 % here.
    SplittableRandom rnd = new SplittableRandom(3);
    int alarms = 0;
    for (int run = 0; run < 300; run++) {
      long c = 0;
      long s = 0;
      for (int i = 0; i < 2000; i++) {
        if (rnd.nextDouble() < 0.05) {
          c++;
        } else {
          s++;
        }
        if (SampleRatioCheck.check(c, s, 0.05).mismatch()) {
          alarms++;
          break;
        }
      }
    }
    assertTrue(alarms <= 3, alarms + " false alarms in 300 steps");
  }

  // Reference values from SciPy: chi2.sf, and the Bayes factor
  // B(a + c, b + s) / B(a, b) / (ratio^c · (1 − ratio)^s) with a = 100·ratio, b = 100·(1 − ratio).

  @Test
  void bothPValuesMatchTheirClosedForms() {
    SampleRatioCheck.Result r = SampleRatioCheck.check(30, 70, 0.2);
    assertEquals(6.25, r.chiSquare(), 1e-12);
    assertEquals(0.01241933065155227, r.chiSquareP(), 1e-6);
    assertEquals(0.3506543943069067, r.sequentialP(), 1e-9);
    assertFalse(r.mismatch());
  }

  @Test
  void aChiSquareAloneIsNotAMismatch() {
    // 20 of 100 at an intended 10 %: chi-square p = 0.00086 < 0.001, but the sequential test,
    // which survives looking after every session, has p = 0.1465.
    SampleRatioCheck.Result r = SampleRatioCheck.check(20, 80, 0.1);
    assertTrue(r.chiSquareP() < SampleRatioCheck.ALPHA, r.summary());
    assertEquals(0.14650085678657743, r.sequentialP(), 1e-9);
    assertFalse(r.mismatch(), r.summary());
    // A tiny intended ratio (prior weight 0.3 < ½ session): chi-square p = 8·10⁻⁷, sequential 0.214.
    SampleRatioCheck.Result tiny = SampleRatioCheck.check(3, 97, 0.003);
    assertEquals(0.21416313129453646, tiny.sequentialP(), 1e-9);
    assertFalse(tiny.mismatch(), tiny.summary());
  }

  @Test
  void anIntendedRatioOutsideTheOpenUnitIntervalIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> SampleRatioCheck.check(1, 1, 0));
    assertThrows(IllegalArgumentException.class, () -> SampleRatioCheck.check(1, 1, 1));
  }

  @Test
  void theSummaryStatesTheSplitAndTheVerdict() {
    String broken = SampleRatioCheck.check(200, 1800, 0.05).summary();
    assertTrue(broken.startsWith("sample ratio: 200 candidate and 1800 stable sessions in this step, "
        + "0.1000 of them on the candidate against an intended 0.0500"), broken);
    assertTrue(broken.contains("mismatch (both p < 0.001)"), broken);
    String fine = SampleRatioCheck.check(100, 1900, 0.05).summary();
    assertTrue(fine.contains("0.0500 of them on the candidate"), fine);
    assertTrue(fine.endsWith("; consistent"), fine);
    assertTrue(SampleRatioCheck.check(0, 0, 0.05).summary().contains(" 0.0000 of them"));
  }

  @Test
  void logGammaMatchesFactorials() {
    assertEquals(Math.log(24), SampleRatioCheck.logGamma(5), 1e-12);
    assertEquals(0.5 * Math.log(Math.PI), SampleRatioCheck.logGamma(0.5), 1e-12);
    // Below ½ by reflection (SciPy gammaln).
    assertEquals(1.2880225246980774, SampleRatioCheck.logGamma(0.25), 1e-12);
    assertEquals(2.252712651734206, SampleRatioCheck.logGamma(0.1), 1e-12);
  }
}
