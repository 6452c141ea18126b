package io.otl.persistence.kafka;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.pekko.Done;

/**
 * One lane of writes per session, at most {@code parallelism} writes running in all: a session's
 * write starts only when its previous one has succeeded, writes of other sessions run at the same
 * time. This lets the ingestion write several batches at once (a batch no longer waits for the
 * slowest session of the one before) and still store each session's records in topic order, as
 * long as writes are queued here in topic order (a batch queues all of its sessions before the
 * next batch queues any).
 *
 * <p>A failed write fails every later write of its session without running it: the stream then
 * restarts from the last committed offset and writes them again in order (the session drops what
 * it already holds), instead of storing a later record before an earlier one.
 */
final class SessionLanes {
  private final ConcurrentHashMap<String, CompletableFuture<Done>> tails = new ConcurrentHashMap<>();
  private final int parallelism;
  /** Writes whose turn in their lane has come, waiting for one of the {@code parallelism} slots. */
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int running;

  SessionLanes(int parallelism) {
    this.parallelism = parallelism;
  }

  /** Queues {@code write} behind the session's previous write; completes with it. */
  CompletionStage<Done> after(String sessionId, Supplier<CompletionStage<Done>> write) {
    CompletableFuture<Done> mine = new CompletableFuture<>();
    CompletableFuture<Done> previous = tails.put(sessionId, mine);
    CompletionStage<Done> turn = previous == null ? CompletableFuture.completedFuture(Done.getInstance()) : previous;
    turn.whenComplete((d, failed) -> {
      if (failed != null) {
        finish(sessionId, mine, null, failed);
      } else {
        // The slot is taken only once it is this write's turn, so no slot waits on a lane.
        slot(() -> run(write).whenComplete((r, e) -> {
          release();
          finish(sessionId, mine, r, e);
        }));
      }
    });
    return mine;
  }

  private static CompletionStage<Done> run(Supplier<CompletionStage<Done>> write) {
    try {
      return write.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void finish(String sessionId, CompletableFuture<Done> mine, Done result, Throwable failed) {
    // Only the lane's last write leaves the map, so an idle session costs nothing.
    tails.remove(sessionId, mine);
    if (failed == null) mine.complete(result);
    else mine.completeExceptionally(failed);
  }

  private void slot(Runnable start) {
    synchronized (this) {
      if (running >= parallelism) {
        waiting.add(start);
        return;
      }
      running++;
    }
    start.run();
  }

  private void release() {
    Runnable next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) running--;
    }
    if (next != null) next.run();
  }

  /** Sessions with a write queued or running. */
  int busy() {
    return tails.size();
  }

  /** Writes running now (at most {@code parallelism}). */
  synchronized int running() {
    return running;
  }
}
