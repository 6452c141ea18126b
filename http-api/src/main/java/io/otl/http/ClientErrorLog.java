package io.otl.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
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

  private final long intervalNanos;
  private final LongSupplier clock;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    final AtomicLong count = new AtomicLong();
    final AtomicLong lastLine;

    Window(long lastLine) {
      this.lastLine = new AtomicLong(lastLine);
    }
  }

  public ClientErrorLog(Duration interval) {
    this(interval, System::nanoTime);
  }

  ClientErrorLog(Duration interval, LongSupplier clock) {
    this.intervalNanos = interval.toNanos();
    this.clock = clock;
  }

  /** Counts one client error; writes a summary line when the kind's interval has passed. */
  public void record(String kind) {
    String k = windows.size() >= MAX_KINDS && !windows.containsKey(kind) ? "other" : kind;
    long now = clock.getAsLong();
    Window w = windows.computeIfAbsent(k, x -> new Window(now - intervalNanos));
    w.count.incrementAndGet();
    long last = w.lastLine.get();
    if (now - last >= intervalNanos && w.lastLine.compareAndSet(last, now)) {
      long n = w.count.getAndSet(0);
      log.info("client errors: {} x {} in the last {} s", k, n, Math.max(1, intervalNanos / 1_000_000_000L));
    }
  }
}
