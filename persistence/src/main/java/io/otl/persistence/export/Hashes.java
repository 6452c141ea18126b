package io.otl.persistence.export;

import io.otl.core.Sha256;

/** The uniform draw shared by the continual-training rules (held-out split, replay). */
final class Hashes {
  private Hashes() {}

  /** A number uniform in (0, 1) derived from {@code s}: the first 53 bits of its SHA-256. */
  static double unit(String s) {
    long top = Sha256.first64(s) >>> 11; // 53 bits
    return (top + 0.5) / (double) (1L << 53); // never exactly 0 or 1
  }
}
