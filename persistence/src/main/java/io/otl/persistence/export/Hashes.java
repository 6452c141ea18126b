package io.otl.persistence.export;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 helpers shared by the continual-training rules (held-out split, replay, dedup). */
final class Hashes {
  private Hashes() {}

  static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hex(String s) {
    return HexFormat.of().formatHex(sha256(s));
  }

  /** A number uniform in (0, 1) derived from {@code s}: the first 53 bits of its SHA-256. */
  static double unit(String s) {
    byte[] d = sha256(s);
    long bits = 0;
    for (int i = 0; i < 8; i++) bits = (bits << 8) | (d[i] & 0xff);
    long top = bits >>> 11; // 53 bits
    return (top + 0.5) / (double) (1L << 53); // never exactly 0 or 1
  }
}
