package io.otl.persistence.readside;

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
}
