package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;

/**
 * Keeps pekko-http's {@code max-chunk-size} (1 MiB by default) at least as large as the largest body a
 * route takes: the gateway's {@code gateway.max-body-bytes} (4 MiB), OTLP's {@code otlp.max-decoded-bytes}
 * (8 MiB) and the server's {@code max-content-length}. pekko-http refuses any chunk above it before a
 * route sees the body, so a 2 MiB trace batch or chat call sent as one chunk (a streaming client that
 * writes its body in one piece) was refused though the route's limit allowed it (trial t156). The
 * routes' own limits still bound every body, chunked or not.
 */
public final class ChunkSizeLimit {
  static final String MAX_CHUNK = "pekko.http.server.parsing.max-chunk-size";
  static final String MAX_CONTENT = "pekko.http.server.parsing.max-content-length";

  private static final long PEKKO_DEFAULT = 1024 * 1024;

  private ChunkSizeLimit() {}

  /** {@code config} with the chunk limit raised to the largest of {@code routeLimits} and max-content-length. */
  public static Config aboveBodyLimits(Config config, long... routeLimits) {
    long needed = 0;
    for (long limit : routeLimits) needed = Math.max(needed, limit);
    if (config.hasPath(MAX_CONTENT) && !config.getString(MAX_CONTENT).equals("infinite")) {
      needed = Math.max(needed, config.getBytes(MAX_CONTENT));
    }
    // pekko-http reads the setting as an int; its reference.conf (1m) is not merged in yet here.
    needed = Math.min(needed, Integer.MAX_VALUE);
    long now = config.hasPath(MAX_CHUNK) ? config.getBytes(MAX_CHUNK) : PEKKO_DEFAULT;
    if (now >= needed) return config;
    return ConfigFactory.parseMap(Map.of(MAX_CHUNK, String.valueOf(needed))).withFallback(config);
  }
}
