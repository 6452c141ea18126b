package io.otl.node;

import java.util.concurrent.ForkJoinPool;
import org.slf4j.Logger;

/**
 * The JDK's common fork-join pool must have at least two threads in a node's JVM.
 *
 * <p>Every {@code CompletionStage} Pekko hands out (an ask, an HTTP response, an entity read) runs
 * its callbacks asynchronously on {@code CompletableFuture}'s default executor, and that executor is
 * the common pool only when the pool's parallelism is above one. The JVM sizes it to cores − 1, so
 * on a two-core machine it is one, and the JDK then starts <em>a new thread for every callback</em>:
 * W8 counted ~6 threads created and destroyed per gateway call, 350 a second at 100 calls/s.
 */
public final class CommonPool {
  static final String PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";
  /** Parallelism given when none is configured: enough for callbacks, few enough not to crowd the node. */
  static final int MINIMUM = 2;

  private CommonPool() {}

  /**
   * Raises the common pool's parallelism to {@link #MINIMUM} unless it is configured. Takes effect
   * only before anything in the JVM has used the pool, so it is the first thing a main method does.
   */
  public static void sizeBeforeFirstUse() {
    if (System.getProperty(PARALLELISM) != null) return;
    int cores = Runtime.getRuntime().availableProcessors();
    if (cores - 1 < MINIMUM) System.setProperty(PARALLELISM, Integer.toString(MINIMUM));
  }

  /** Says so once, at start-up, when a host JVM (the embedded API) left the pool too small. */
  static void warnIfTooSmall(Logger log) {
    int parallelism = ForkJoinPool.getCommonPoolParallelism();
    if (parallelism < MINIMUM) {
      log.warn("the JVM's common fork-join pool has parallelism {}: every Pekko callback then starts a thread of"
          + " its own, which costs much of the node's CPU; start the JVM with -D{}={}", parallelism, PARALLELISM,
          MINIMUM);
    }
  }
}
