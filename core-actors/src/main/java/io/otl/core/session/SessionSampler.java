package io.otl.core.session;

import io.otl.core.Sha256;

/**
 * Keeps or drops a whole session, decided from a hash of its id alone (design §3.1): every node and
 * every retry reach the same decision without coordination.
 */
public final class SessionSampler {
  private final boolean sampled;
  private final double sampleRate;

  public SessionSampler(String collectMode, double sampleRate) {
    this.sampled = "sampled".equals(collectMode);
    this.sampleRate = sampleRate;
  }

  public boolean keep(String sessionId) {
    return !sampled || bucket(sessionId, "sample") < sampleRate;
  }

  /** A uniform number in [0, 1) for {@code id}; the salt keeps sampling and routing independent. */
  public static double bucket(String id, String salt) {
    // The salt, a 0 byte, then the id: the bytes hashed since sampling began, so buckets never move.
    long v = Sha256.first64(salt + '\0' + id) >>> 8;
    return (double) v / (double) (1L << 56);
  }
}
