package io.otl.bench;

import java.time.Duration;

/**
 * How far the agent's TrainingCoordinator trails the sessions it is fed (issue #18: "coordinator lag
 * < 2 s" under W1 with one agent). Every completed trajectory becomes one coordinator event
 * (pooled, or filtered below min-quality) whose JSON holds the session's {@code completedAt} and
 * its own {@code at}; the lag of a trajectory is the difference. Read from the journal after the
 * ingest, so it costs the node nothing while it is measured.
 */
final class CoordinatorLag {
  private CoordinatorLag() {}

  private static final String ROWS = "FROM (SELECT convert_from(event_payload, 'UTF8')::jsonb AS p FROM event_journal"
      + " WHERE persistence_id = 'TrainingCoordinator|bench-agent'"
      + " AND event_ser_manifest LIKE 'coordinator.trajectory-%') x WHERE p->>'sessionId' LIKE '<prefix>%'";
  private static final String LAG_MS = "extract(epoch FROM ((p->>'at')::timestamptz - (p->>'completedAt')::timestamptz))"
      + " * 1000";

  /** Waits until the coordinator holds every trajectory of {@code prefix} (at most {@code wait}), then reports. */
  static void fill(Result r, Pg pg, Pg.Schema schema, String prefix, int sessions, Duration wait)
      throws InterruptedException {
    String rows = ROWS.replace("<prefix>", prefix);
    long deadline = System.nanoTime() + wait.toNanos();
    long seen = 0;
    while (System.nanoTime() < deadline) {
      seen = pg.count(schema, "SELECT count(*) " + rows);
      if (seen >= sessions) break;
      Thread.sleep(200);
    }
    r.figure("coordinatorTrajectories", seen);
    if (seen == 0) return;
    r.figure("coordinatorLagP50Ms", pg.count(schema, "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY "
        + LAG_MS + ")::bigint " + rows));
    r.figure("coordinatorLagP99Ms", pg.count(schema, "SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY "
        + LAG_MS + ")::bigint " + rows));
    r.figure("coordinatorLagMaxMs", pg.count(schema, "SELECT max(" + LAG_MS + ")::bigint " + rows));
  }
}
