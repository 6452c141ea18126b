package io.otl.http;

import io.otl.core.LogThrottle;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client errors as rate-limited summary lines: at most one line per kind per interval, with the
 * count since the last line. A client sending megabytes of bad requests must not be able to fill
 * the disk with log. Kinds are bounded labels (status and route template), never request content.
 */
public final class ClientErrorLog {
  private static final Logger log = LoggerFactory.getLogger(ClientErrorLog.class);
  /** Above this many kinds, new ones share one line: kinds come from bounded labels anyway. */
  private static final int MAX_KINDS = 256;

  private final Duration interval;
  private final LongSupplier clock;
  private final Map<String, LogThrottle> kinds = new ConcurrentHashMap<>();

  public ClientErrorLog(Duration interval) {
    this(interval, System::nanoTime);
  }

  ClientErrorLog(Duration interval, LongSupplier clock) {
    this.interval = interval;
    this.clock = clock;
  }

  /** Counts one client error; writes a summary line when the kind's interval has passed. */
  public void record(String kind) {
    String k = kinds.size() >= MAX_KINDS && !kinds.containsKey(kind) ? "other" : kind;
    LogThrottle throttle = kinds.computeIfAbsent(k, x -> new LogThrottle(interval, clock));
    long n = throttle.occurred();
    if (n > 0) {
      log.info("client errors: {} x {} since the last such line (one a {} s at most)", k, n,
          throttle.intervalSeconds());
    }
  }
}
