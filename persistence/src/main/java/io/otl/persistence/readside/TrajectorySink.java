package io.otl.persistence.readside;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The consumer of the trajectory feed (the training coordinator, the Kafka publisher...). Called
 * at least once per notice, possibly concurrently (up to {@code read-side.parallelism}, plus the
 * reconciliation), so it must be idempotent on {@code (sessionId, eventId)}. The returned stage
 * completes once the notice is durably handled; a failed stage makes the feed retry with back-off.
 */
@FunctionalInterface
public interface TrajectorySink {
  CompletionStage<Void> deliver(TrajectoryNotice notice);

  /**
   * Several notices in journal order, handed over together while the sink is busy (the feed batches
   * under backpressure); completes once all are durably handled. A sink that can write them in one
   * go (the coordinator forwarder: one command and one journal write per agent) overrides this.
   */
  default CompletionStage<Void> deliverAll(List<TrajectoryNotice> notices) {
    if (notices.size() == 1) return deliver(notices.get(0));
    return CompletableFuture.allOf(notices.stream().map(n -> deliver(n).toCompletableFuture())
        .toArray(CompletableFuture[]::new));
  }
}
