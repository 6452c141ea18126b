package io.otl.node.testing;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Polling for what a node does asynchronously (a job's state, a version's deployment, a stored turn). */
public final class Await {
  private static final Duration DEFAULT = Duration.ofSeconds(60);

  private Await() {}

  /** The first non-null value of {@code probe} that is {@code done}, polled for up to a minute. */
  public static <T> T until(String what, Supplier<T> probe, Predicate<T> done) throws InterruptedException {
    return until(what, DEFAULT, probe, done);
  }

  /** The first non-null value of {@code probe} that is {@code done}, polled every 100 ms for up to {@code timeout}. */
  public static <T> T until(String what, Duration timeout, Supplier<T> probe, Predicate<T> done)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      last = probe.get();
      if (last != null && done.test(last)) return last;
      Thread.sleep(100);
    }
    throw new AssertionError("timed out after " + timeout + " waiting for " + what + "; last: " + last);
  }
}
