package io.otl.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 of a text's UTF-8 bytes, for the ids, buckets and keys derived from client data. One
 * place, so every derived value hashes the same bytes: what these produce is stored (event ids,
 * task keys) or decides routing, and must not change between builds.
 */
public final class Sha256 {
  private Sha256() {}

  public static byte[] of(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** The whole digest in lower-case hex (64 characters). */
  public static String hex(String text) {
    return HexFormat.of().formatHex(of(text));
  }

  /** The first {@code bytes} bytes of the digest in lower-case hex. */
  public static String hex(String text, int bytes) {
    return HexFormat.of().formatHex(of(text), 0, bytes);
  }

  /** The first eight bytes of the digest, big-endian, as a signed long. */
  public static long first64(String text) {
    byte[] d = of(text);
    long v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | (d[i] & 0xff);
    return v;
  }
}
