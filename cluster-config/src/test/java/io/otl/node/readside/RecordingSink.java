package io.otl.node.readside;

import io.otl.persistence.readside.TrajectoryNotice;
import io.otl.persistence.readside.TrajectorySink;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/** An idempotent consumer: keeps the first notice per (sessionId, eventId), counts every call. */
class RecordingSink implements TrajectorySink {
  final Map<String, TrajectoryNotice> notices = new ConcurrentHashMap<>();
  final AtomicInteger deliveries = new AtomicInteger();

  @Override
  public CompletionStage<Void> deliver(TrajectoryNotice n) {
    deliveries.incrementAndGet();
    notices.putIfAbsent(n.sessionId() + "/" + n.eventId(), n);
    return CompletableFuture.completedFuture(null);
  }

  Set<String> completedSessions() {
    return notices.values().stream().filter(n -> !n.revision()).map(TrajectoryNotice::sessionId)
        .collect(Collectors.toSet());
  }

  long revisions() {
    return notices.values().stream().filter(TrajectoryNotice::revision).count();
  }
}
