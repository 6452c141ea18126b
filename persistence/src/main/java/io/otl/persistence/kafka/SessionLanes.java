package io.otl.persistence.kafka;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;

/**
 * One lane of writes per session, at most {@code parallelism} writes running in all: a session's
 * write starts only when its previous one has succeeded, writes of other sessions run at the same
 * time. This lets the ingestion write several batches at once (a batch no longer waits for the
 * slowest session of the one before) and still store each session's records in topic order, as
 * long as records are added here in topic order (a batch adds all of its sessions before the next
 * batch adds any).
 *
 * <p>Records a session gets while its lane waits (for its previous write or for a slot) are written
 * together, in the order they were added, as one write of up to {@code maxPerWrite} items: live
 * traffic interleaves many sessions, so one batch holds a record or two of each, and a write per
 * batch and session carried one or two events (BENCHMARKS.md, W3). A merged write's stage completes
 * each of the adds in it; nothing completes before its write does.
 *
 * <p>A failed write fails every later add of its session without writing it: the stream then
 * restarts from the last committed offset and writes them again in order (the session drops what
 * it already holds), instead of storing a later record before an earlier one.
 */
final class SessionLanes<T> {
  /** Writes one session's items, in order. */
  @FunctionalInterface
  interface Writer<T> {
    CompletionStage<Done> write(String sessionId, List<T> items);
  }

  private record Add<T>(List<T> items, CompletableFuture<Done> done) {}

  private static final class Lane<T> {
    final String sessionId;
    final ArrayDeque<Add<T>> queued = new ArrayDeque<>();
    boolean writing;
    boolean ready;

    Lane(String sessionId) {
      this.sessionId = sessionId;
    }
  }

  private final int parallelism;
  private final int maxPerWrite;
  private final Writer<T> writer;
  /** Sessions with an add queued or a write running; guarded by {@code this}. */
  private final Map<String, Lane<T>> lanes = new HashMap<>();
  /** Lanes whose turn has come, waiting for one of the {@code parallelism} slots, oldest first. */
  private final ArrayDeque<Lane<T>> ready = new ArrayDeque<>();
  private int running;

  SessionLanes(int parallelism, int maxPerWrite, Writer<T> writer) {
    this.parallelism = parallelism;
    this.maxPerWrite = maxPerWrite;
    this.writer = writer;
  }

  /** Queues {@code items} behind the session's earlier ones; completes once they are written. */
  CompletionStage<Done> add(String sessionId, List<T> items) {
    CompletableFuture<Done> done = new CompletableFuture<>();
    Lane<T> lane;
    List<Add<T>> taken;
    synchronized (this) {
      lane = lanes.computeIfAbsent(sessionId, Lane::new);
      lane.queued.add(new Add<>(items, done));
      if (lane.writing || lane.ready) return done;
      if (running >= parallelism) {
        // The slot is taken only once it is this lane's turn, so no slot waits on a lane.
        lane.ready = true;
        ready.add(lane);
        return done;
      }
      running++;
      taken = take(lane);
    }
    start(lane, taken);
    return done;
  }

  /** The lane's queued adds that go into its next write; caller holds the lock. */
  private List<Add<T>> take(Lane<T> lane) {
    List<Add<T>> taken = new ArrayList<>();
    int size = 0;
    while (!lane.queued.isEmpty()) {
      int next = lane.queued.peek().items().size();
      // An add is never split: a batch's records of a session are one write at least.
      if (size > 0 && size + next > maxPerWrite) break;
      taken.add(lane.queued.poll());
      size += next;
    }
    lane.writing = true;
    return taken;
  }

  private void start(Lane<T> lane, List<Add<T>> taken) {
    List<T> items;
    if (taken.size() == 1) {
      items = taken.get(0).items();
    } else {
      items = new ArrayList<>();
      for (Add<T> a : taken) items.addAll(a.items());
    }
    CompletionStage<Done> write;
    try {
      write = writer.write(lane.sessionId, items);
    } catch (RuntimeException e) {
      write = CompletableFuture.failedFuture(e);
    }
    write.whenComplete((d, e) -> finished(lane, taken, e));
  }

  private void finished(Lane<T> lane, List<Add<T>> taken, Throwable failed) {
    List<Add<T>> failedToo = List.of();
    Lane<T> nextLane;
    List<Add<T>> next = null;
    synchronized (this) {
      lane.writing = false;
      if (failed != null && !lane.queued.isEmpty()) {
        failedToo = new ArrayList<>(lane.queued);
        lane.queued.clear();
      }
      if (lane.queued.isEmpty()) {
        // Only an idle lane leaves the map, so an idle session costs nothing.
        lanes.remove(lane.sessionId, lane);
      } else {
        // Behind the lanes already waiting: a session with a long backlog takes no more than its share.
        lane.ready = true;
        ready.add(lane);
      }
      nextLane = ready.poll();
      if (nextLane == null) {
        running--;
      } else {
        nextLane.ready = false;
        next = take(nextLane);
      }
    }
    for (Add<T> a : taken) complete(a, failed);
    for (Add<T> a : failedToo) complete(a, failed);
    if (nextLane != null) start(nextLane, next);
  }

  private static void complete(Add<?> add, Throwable failed) {
    if (failed == null) add.done().complete(Done.getInstance());
    else add.done().completeExceptionally(failed);
  }

  /** Sessions with a write queued or running. */
  synchronized int busy() {
    return lanes.size();
  }

  /** Writes running now (at most {@code parallelism}). */
  synchronized int running() {
    return running;
  }
}
