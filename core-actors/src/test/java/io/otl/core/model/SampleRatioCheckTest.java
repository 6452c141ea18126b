package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

  @Test
  void logGammaMatchesFactorials() {
    assertEquals(Math.log(24), SampleRatioCheck.logGamma(5), 1e-12);
    assertEquals(0.5 * Math.log(Math.PI), SampleRatioCheck.logGamma(0.5), 1e-12);
  }
}
