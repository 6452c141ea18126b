package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;

/**
 * Raises pekko-http's {@code max-chunk-size} (1 MiB by default) to the body limits of the two routes that
 * take large bodies: the gateway's {@code gateway.max-body-bytes} (4 MiB) and OTLP's
 * {@code otlp.max-decoded-bytes} (8 MiB). pekko-http refuses any chunk above it before a route sees the
 * body, so a 2 MiB trace batch or chat call sent as one chunk (a streaming client that writes its body in
 * one piece) was refused though the route's limit allowed it (trial t156).
 *
 * <p>No higher, and not up to {@code max-content-length}: pekko-http's parser holds a chunk whole in memory
 * (and copies it once) before the route gets any of it, whichever route reads it, so each body being read
 * may cost twice this; an operator's larger {@code max-content-length} (up to {@code infinite}) raised it
 * with it (review t164). Larger bodies go in several chunks or with a Content-Length, which is read as it
 * arrives. The routes' own limits still bound every body, chunked or not.
 */
public final class ChunkSizeLimit {
  static final String MAX_CHUNK = "pekko.http.server.parsing.max-chunk-size";

  private static final long PEKKO_DEFAULT = 1024 * 1024;

  private ChunkSizeLimit() {}

  /** {@code config} with the chunk limit raised to the largest of {@code routeLimits} (never lowered). */
  public static Config aboveBodyLimits(Config config, long... routeLimits) {
    long needed = 0;
    for (long limit : routeLimits) needed = Math.max(needed, limit);
    // pekko-http reads the setting as an int; its reference.conf (1m) is not merged in yet here.
    needed = Math.min(needed, Integer.MAX_VALUE);
    long now = config.hasPath(MAX_CHUNK) ? config.getBytes(MAX_CHUNK) : PEKKO_DEFAULT;
    if (now >= needed) return config;
    return ConfigFactory.parseMap(Map.of(MAX_CHUNK, String.valueOf(needed))).withFallback(config);
  }
}
