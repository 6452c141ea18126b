package io.otl.core.session;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

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
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(salt.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      byte[] h = sha.digest(id.getBytes(StandardCharsets.UTF_8));
      long v = 0;
      for (int i = 0; i < 7; i++) v = (v << 8) | (h[i] & 0xff);
      return (double) v / (double) (1L << 56);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
