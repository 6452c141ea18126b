package io.otl.persistence.readside;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;

/**
 * How a read-side feed delivers and stores its offset ({@code agentscope.training.read-side},
 * defaults in {@code read-side.conf}).
 *
 * @param batchOffsetsEvery store the offset after this many acknowledged deliveries
 * @param offsetInterval ... or after this long, whichever comes first
 * @param rescanWindow how far back (in time) the reconciliation re-reads the tag
 * @param rescanInterval how often the reconciliation runs
 * @param parallelism deliveries in flight at once (acknowledged in order)
 * @param deliveryTimeout a delivery slower than this fails the stream, which restarts
 * @param minBackoff first back-off of a restarted stream
 * @param maxBackoff longest back-off of a restarted stream
 * @param resolveMsgIds the trajectory feed looks up the msgIds of the session's assistant messages
 */
public record FeedSettings(
    int batchOffsetsEvery,
    Duration offsetInterval,
    Duration rescanWindow,
    Duration rescanInterval,
    int parallelism,
    Duration deliveryTimeout,
    Duration minBackoff,
    Duration maxBackoff,
    boolean resolveMsgIds) {

  public static final String PATH = "read-side";

  public FeedSettings {
    if (batchOffsetsEvery < 1) throw new IllegalArgumentException("read-side.batch-offsets-every must be >= 1");
    if (parallelism < 1) throw new IllegalArgumentException("read-side.parallelism must be >= 1");
    positive("offset-interval", offsetInterval);
    positive("rescan-window", rescanWindow);
    positive("rescan-interval", rescanInterval);
    positive("delivery-timeout", deliveryTimeout);
    positive("min-backoff", minBackoff);
    if (maxBackoff.compareTo(minBackoff) < 0) {
      throw new IllegalArgumentException("read-side.max-backoff must be >= read-side.min-backoff");
    }
  }

  /** Reads {@code read-side} under {@code training} (the {@code agentscope.training} section). */
  public static FeedSettings fromConfig(Config training) {
    Config c = training.withFallback(defaultsSection()).getConfig(PATH);
    return new FeedSettings(c.getInt("batch-offsets-every"), c.getDuration("offset-interval"),
        c.getDuration("rescan-window"), c.getDuration("rescan-interval"), c.getInt("parallelism"),
        c.getDuration("delivery-timeout"), c.getDuration("min-backoff"), c.getDuration("max-backoff"),
        c.getBoolean("resolve-msg-ids"));
  }

  /** The defaults of read-side.conf. */
  public static FeedSettings defaults() {
    return fromConfig(ConfigFactory.empty());
  }

  public FeedSettings withBatching(int every, Duration interval) {
    return new FeedSettings(every, interval, rescanWindow, rescanInterval, parallelism, deliveryTimeout, minBackoff,
        maxBackoff, resolveMsgIds);
  }

  public FeedSettings withRescan(Duration window, Duration interval) {
    return new FeedSettings(batchOffsetsEvery, offsetInterval, window, interval, parallelism, deliveryTimeout,
        minBackoff, maxBackoff, resolveMsgIds);
  }

  public FeedSettings withBackoff(Duration min, Duration max) {
    return new FeedSettings(batchOffsetsEvery, offsetInterval, rescanWindow, rescanInterval, parallelism,
        deliveryTimeout, min, max, resolveMsgIds);
  }

  private static Config defaultsSection() {
    return ConfigFactory.parseResources(FeedSettings.class.getClassLoader(), "read-side.conf")
        .getConfig("agentscope.training");
  }

  private static void positive(String key, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException("read-side." + key + " must be a duration > 0");
    }
  }
}
