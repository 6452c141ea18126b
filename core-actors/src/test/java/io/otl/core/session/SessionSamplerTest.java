package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SessionSamplerTest {

  @ParameterizedTest
  @ValueSource(doubles = {0.01, 0.1, 0.25, 0.5, 0.9})
  void keptFractionOfTenThousandSessionsIsWithinTwoPointsOfTheRate(double rate) {
    SessionSampler sampler = new SessionSampler("sampled", rate);
    int kept = 0;
    for (int i = 0; i < 10_000; i++) if (sampler.keep("sess-" + i + "-" + (i * 7919))) kept++;
    double fraction = kept / 10_000.0;
    assertTrue(Math.abs(fraction - rate) <= 0.02, "kept " + fraction + " for rate " + rate);
  }

  @ParameterizedTest
  @ValueSource(strings = {"a", "session-42", "x:y.z-1"})
  void decisionIsStableForASession(String id) {
    SessionSampler sampler = new SessionSampler("sampled", 0.5);
    boolean first = sampler.keep(id);
    for (int i = 0; i < 100; i++) assertEquals(first, new SessionSampler("sampled", 0.5).keep(id));
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0, 0.3})
  void fullModeKeepsEverything(double rate) {
    SessionSampler sampler = new SessionSampler("full", rate);
    for (int i = 0; i < 1000; i++) assertTrue(sampler.keep("s" + i));
  }

  /** Values from Python's hashlib: the first 7 bytes of SHA-256(salt, 0x00, id) over 2^56. */
  @Test
  void theBucketIsPinnedAndASessionAtItsBucketIsDropped() {
    assertEquals(0.8212636438010201, SessionSampler.bucket("session-42", "sample"));
    assertEquals(0.7039738437022985, SessionSampler.bucket("a", "sample"));
    assertEquals(0.840126657505258, SessionSampler.bucket("session-42", "route"));
    // kept when its bucket is below the rate, so a rate equal to the bucket drops it
    assertFalse(new SessionSampler("sampled", 0.8212636438010201).keep("session-42"));
    assertTrue(new SessionSampler("sampled", Math.nextUp(0.8212636438010201)).keep("session-42"));
  }
}
