package io.otl.bench;

import java.util.Arrays;

/** Latencies in nanoseconds, recorded from many threads; percentiles in milliseconds. */
final class Latencies {
  private long[] values;
  private int size;

  Latencies(int expected) {
    values = new long[Math.max(16, expected)];
  }

  synchronized void add(long nanos) {
    if (size == values.length) values = Arrays.copyOf(values, size * 2);
    values[size++] = nanos;
  }

  synchronized int count() {
    return size;
  }

  /** The p-th percentile (0-100) in ms, 2 decimals; NaN when empty. */
  synchronized double percentileMs(double p) {
    if (size == 0) return Double.NaN;
    long[] sorted = Arrays.copyOf(values, size);
    Arrays.sort(sorted);
    int idx = (int) Math.ceil(p / 100.0 * size) - 1;
    idx = Math.max(0, Math.min(size - 1, idx));
    return Math.round(sorted[idx] / 10_000.0) / 100.0;
  }

  synchronized double maxMs() {
    return percentileMs(100);
  }
}
