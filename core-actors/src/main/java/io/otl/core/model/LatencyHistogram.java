package io.otl.core.model;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Fixed-bucket, log-spaced histogram of latencies in milliseconds, so a version's latency state
 * stays small however many sessions it serves. Bucket 0 holds [0, 1) ms; bucket {@code i >= 1}
 * holds [{@code 1.02^(i-1)}, {@code 1.02^i}) ms, i.e. a 2 % resolution; the last bucket also holds
 * everything above about one hour. Only non-empty buckets are stored (bucket index → count).
 *
 * <p>Quantiles are reported as the upper bound of the bucket that contains them, so they are at
 * most 2 % high; counts above a threshold include only whole buckets at or above it, so they are
 * at most one bucket low. Both errors are in the direction of not declaring a candidate slower.
 */
public record LatencyHistogram(SortedMap<Integer, Long> counts) {

  /** Bucket growth factor (2 % per bucket). */
  public static final double GROWTH = 1.02;
  /** Index of the last bucket (≈ 1 h and above). */
  public static final int MAX_BUCKET = 1 + (int) Math.ceil(Math.log(3_600_000d) / Math.log(GROWTH));

  public static final LatencyHistogram EMPTY = new LatencyHistogram(new TreeMap<>());

  public LatencyHistogram {
    counts = Collections.unmodifiableSortedMap(new TreeMap<>(counts == null ? Map.of() : counts));
  }

  /** The bucket of a latency (negative and NaN values are not accepted upstream). */
  public static int bucketOf(double latencyMs) {
    if (!(latencyMs >= 1)) {
      return 0;
    }
    int i = 1 + (int) Math.floor(Math.log(latencyMs) / Math.log(GROWTH));
    return Math.min(Math.max(i, 1), MAX_BUCKET);
  }

  public static double lowerBound(int bucket) {
    return bucket == 0 ? 0 : Math.pow(GROWTH, bucket - 1);
  }

  public static double upperBound(int bucket) {
    return bucket >= MAX_BUCKET ? Double.MAX_VALUE : Math.pow(GROWTH, bucket);
  }

  public LatencyHistogram add(double latencyMs) {
    TreeMap<Integer, Long> copy = new TreeMap<>(counts);
    copy.merge(bucketOf(latencyMs), 1L, Long::sum);
    return new LatencyHistogram(copy);
  }

  /** Number of recorded latencies. */
  public long total() {
    long n = 0;
    for (long c : counts.values()) {
      n += c;
    }
    return n;
  }

  /**
   * The q-quantile (0 < q <= 1) as the upper bound of the bucket holding the ⌈q·n⌉-th smallest
   * value (the lower bound for the open-ended last bucket), or NaN when empty.
   */
  public double quantile(double q) {
    long n = total();
    if (n == 0) {
      return Double.NaN;
    }
    long rank = Math.max(1, (long) Math.ceil(q * n));
    long seen = 0;
    for (Map.Entry<Integer, Long> e : counts.entrySet()) {
      seen += e.getValue();
      if (seen >= rank) {
        int b = e.getKey();
        return b >= MAX_BUCKET ? lowerBound(b) : upperBound(b);
      }
    }
    return lowerBound(counts.lastKey());
  }

  /** Number of latencies certainly at or above the threshold (whole buckets only). */
  public long countAtOrAbove(double thresholdMs) {
    long n = 0;
    for (Map.Entry<Integer, Long> e : counts.entrySet()) {
      if (lowerBound(e.getKey()) >= thresholdMs) {
        n += e.getValue();
      }
    }
    return n;
  }
}
