package io.otl.persistence.kafka;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;

/**
 * How many consumed records the ingestion holds at once, counted in records rather than in
 * batches: a batch is cut by the poll and by {@code ingest.batch-window} as much as by {@code
 * ingest.batch-size}, so a count of batches held a window that shrank with the batches (four of
 * ~1,300 records under a W3 backlog, ~5 events per journal write; BENCHMARKS.md, session 41).
 * The records a session gets while its write waits are written together ({@link SessionLanes}), so
 * the window sets how many events a write carries when many sessions interleave.
 *
 * <p>A batch enters once the records in the window and its own fit the capacity, or alone when
 * the window is empty (a batch larger than the capacity is never stuck); batches enter in the
 * order they asked, so records still reach the lanes in topic order.
 */
final class RecordWindow {
  private record Waiter(int records, CompletableFuture<Done> admitted) {}

  private final long capacity;
  private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  /** Records admitted and not yet released; guarded by {@code this}. */
  private long held;

  RecordWindow(long capacity) {
    if (capacity < 1) throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
    this.capacity = capacity;
  }

  /** Completes once {@code records} more may be held (at once when they fit). */
  CompletionStage<Done> acquire(int records) {
    synchronized (this) {
      if (waiting.isEmpty() && fits(records)) {
        held += records;
        return CompletableFuture.completedFuture(Done.getInstance());
      }
      Waiter w = new Waiter(records, new CompletableFuture<>());
      waiting.add(w);
      return w.admitted();
    }
  }

  /** Gives back {@code records} acquired before, admitting the waiting batches that now fit. */
  void release(int records) {
    List<Waiter> admitted = new ArrayList<>();
    synchronized (this) {
      held -= records;
      while (!waiting.isEmpty() && fits(waiting.peek().records())) {
        Waiter w = waiting.poll();
        held += w.records();
        admitted.add(w);
      }
    }
    for (Waiter w : admitted) w.admitted().complete(Done.getInstance());
  }

  private boolean fits(int records) {
    return held == 0 || held + records <= capacity;
  }

  /** Records held now. */
  synchronized long held() {
    return held;
  }
}
