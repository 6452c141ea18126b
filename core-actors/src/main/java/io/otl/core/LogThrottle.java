package io.otl.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one log line per interval for something that can happen on every request (a client's bad
 * input, a database outage, a pattern that overflows): a line each would let one client fill the disk,
 * and none would hide a misconfiguration from the operator. The caller writes the line; this decides
 * when and says how many occurrences it stands for.
 */
public final class LogThrottle {
  private final long intervalNanos;
  private final LongSupplier clock;
  private final AtomicLong sinceLastLine = new AtomicLong();
  private final AtomicLong lastLine;

  public LogThrottle(Duration interval) {
    this(interval, System::nanoTime);
  }

  /** With the clock given (tests). The first occurrence is always due. */
  public LogThrottle(Duration interval, LongSupplier clock) {
    this.intervalNanos = interval.toNanos();
    this.clock = clock;
    this.lastLine = new AtomicLong(clock.getAsLong() - intervalNanos);
  }

  /**
   * Counts one occurrence. Returns 0 when no line is due; else the occurrences the line stands for
   * (this one and those since the previous line), and the count starts again.
   */
  public long occurred() {
    sinceLastLine.incrementAndGet();
    long now = clock.getAsLong();
    long last = lastLine.get();
    if (now - last >= intervalNanos && lastLine.compareAndSet(last, now)) {
      return Math.max(1, sinceLastLine.getAndSet(0));
    }
    return 0;
  }

  /** The interval in whole seconds (at least 1), for the line's wording. */
  public long intervalSeconds() {
    return Math.max(1, intervalNanos / 1_000_000_000L);
  }
}
