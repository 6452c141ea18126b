package io.otl.bench;

import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;

/**
 * W5: recovery time. One node writes a session of 1,000 and one of 10,000 events (through the
 * entity, so snapshots are taken as in production), a coordinator whose pool holds N trajectories,
 * and a model version with T transitions; it stops. Then for each entity a fresh node (a new
 * ActorSystem on the same database) starts, and once it answers for an unrelated entity (cluster up,
 * shard regions ready), the time from the first command to the entity to its first reply is measured.
 *
 * <p>The coordinator's pool is bulk-loaded: its TrajectoryPooled events are serialized by the node's
 * own serializer and inserted with batched JDBC (100,000 single-event writes of one actor would take
 * minutes here), then {@link TrainingCoordinator#SNAPSHOT_EVERY} real TrajectoryAvailable commands go through
 * the entity, which takes its regular snapshot among them. A replay of the bulk events without a snapshot is measured on the way.
 */
final class W5Recovery {
  private W5Recovery() {}

  static Result run(Pg pg, Args args) throws Exception {
    int small = args.integer("small-session", 1000);
    int large = args.integer("large-session", 10000);
    int pool = args.integer("pool-size", 100000);
    int transitions = args.integer("transitions", 1000);
    Result r = new Result("W5", "recovery in a fresh ActorSystem, PostgreSQL (snapshots every 100 events, the coordinator's every "
        + TrainingCoordinator.SNAPSHOT_EVERY + ")");
    Pg.Schema schema = pg.freshSchema("bench_w5");
    Map<String, Object> quiet = Map.of("agentscope.training.http.ask-timeout", "60s");
    try {
      long buildStart = System.nanoTime();
      double noSnapshotReplayMs;
      try (TrainingNode node = Nodes.start(pg, schema, args, false, quiet)) {
        writeSession(node, "w5-s" + small, small);
        writeSession(node, "w5-s" + large, large);
        bulkPool(node, pg, schema, "w5-agent", pool);
        long t = System.nanoTime();
        TrainingCoordinator.CoordinatorView v = ask(node, TrainingCoordinator.ENTITY_TYPE_KEY, "w5-agent",
            TrainingCoordinator.GetStatus::new);
        noSnapshotReplayMs = (System.nanoTime() - t) / 1e6;
        if (v.poolSize() != pool) throw new IllegalStateException("pool after bulk load: " + v.poolSize());
        for (int i = 0; i < TrainingCoordinator.SNAPSHOT_EVERY; i++) {
          String sid = "w5-live-" + i;
          ask(node, TrainingCoordinator.ENTITY_TYPE_KEY, "w5-agent",
              (ActorRef<TrainingCoordinator.TrajectoryAck> reply) -> new TrainingCoordinator.TrajectoryAvailable(sid,
                  "v1", 0.5, 0.9, Instant.now(), false, List.of(), reply));
        }
        writeModel(node, "w5-agent", transitions);
      }
      r.figure("buildSeconds", (System.nanoTime() - buildStart) / 1e9);
      r.figure("coordinatorReplayWithoutSnapshotMs", noSnapshotReplayMs);

      double worst = 0;
      StringBuilder head = new StringBuilder();
      for (int size : new int[] {small, large}) {
        String sid = "w5-s" + size;
        Timed<AgentSession.State> t = fresh(pg, schema, args, quiet, n -> ask(n, AgentSession.ENTITY_TYPE_KEY, sid,
            AgentSession.Get::new));
        int events = t.value.messages().size() + t.value.toolCalls().size() + t.value.steps().size();
        r.figure("session" + size + ".recoveryMs", t.ms).figure("session" + size + ".coldFirstReplyMs", t.coldMs).figure("session" + size + ".eventsSeen", events);
        if (events != size) throw new IllegalStateException(sid + " recovered " + events + " of " + size + " events");
        worst = Math.max(worst, t.ms);
        head.append(String.format("session %,d ev: %.0f ms (cold %.0f); ", size, t.ms, t.coldMs));
      }
      Timed<TrainingCoordinator.CoordinatorView> c = fresh(pg, schema, args, quiet,
          n -> ask(n, TrainingCoordinator.ENTITY_TYPE_KEY, "w5-agent", TrainingCoordinator.GetStatus::new));
      r.figure("coordinator.poolSize", c.value.poolSize()).figure("coordinator.recoveryMs", c.ms)
          .figure("coordinator.coldFirstReplyMs", c.coldMs);
      if (c.value.poolSize() != pool + TrainingCoordinator.SNAPSHOT_EVERY) throw new IllegalStateException("pool after recovery: " + c.value.poolSize());
      worst = Math.max(worst, c.ms);
      head.append(String.format("coordinator pool %,d: %.0f ms (cold %.0f); ", c.value.poolSize(), c.ms, c.coldMs));
      Timed<ModelVersion.ModelsView> m = fresh(pg, schema, args, quiet,
          n -> ask(n, ModelVersion.ENTITY_TYPE_KEY, "w5-agent", ModelVersion.Get::new));
      int history = m.value.versions().stream().mapToInt(v -> v.history().size()).sum();
      r.figure("model.historyEntries", history).figure("model.recoveryMs", m.ms).figure("model.coldFirstReplyMs", m.coldMs);
      worst = Math.max(worst, m.ms);
      head.append(String.format("model %,d transitions: %.0f ms (cold %.0f)", history, m.ms, m.coldMs));
      r.figure("snapshotBytesLargestSession", pg.count(schema,
          "SELECT coalesce(max(octet_length(snapshot_payload)),0) FROM snapshot WHERE persistence_id = 'AgentSession|w5-s"
              + large + "'"));
      r.figure("snapshotBytesCoordinator", pg.count(schema,
          "SELECT coalesce(max(octet_length(snapshot_payload)),0) FROM snapshot WHERE persistence_id = 'TrainingCoordinator|w5-agent'"));
      r.figure("worstMs", worst);
      r.headline = head.toString();
      r.target = "each < 1,000 ms";
      r.pass = worst < 1000;
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  record Timed<T>(T value, double ms, double coldMs) {}

  /**
   * Two fresh nodes per entity. {@code ms}: remember-entities off (so nothing recovers the entity
   * before it is addressed) and, once the node answers for an unrelated session (cluster up, shard
   * regions ready), the time from the first command to the entity to its reply — the recovery itself.
   * {@code coldMs}: the node as configured (remember-entities on), first command sent as soon as
   * start() returns, so it includes cluster formation, shard allocation and remembered-entity restarts.
   */
  private static <T> Timed<T> fresh(Pg pg, Pg.Schema schema, Args args, Map<String, Object> extra,
      Function<TrainingNode, T> first) throws Exception {
    Map<String, Object> lazy = new java.util.HashMap<>(extra);
    lazy.put("pekko.cluster.sharding.remember-entities", "off");
    T value;
    double ms;
    try (TrainingNode node = Nodes.start(pg, schema, args, false, lazy)) {
      ask(node, AgentSession.ENTITY_TYPE_KEY, "w5-unrelated-" + UUID.randomUUID(), AgentSession.Get::new);
      long t = System.nanoTime();
      value = first.apply(node);
      ms = (System.nanoTime() - t) / 1e6;
    }
    double coldMs;
    try (TrainingNode node = Nodes.start(pg, schema, args, false, extra)) {
      long t = System.nanoTime();
      first.apply(node);
      coldMs = (System.nanoTime() - t) / 1e6;
    }
    return new Timed<>(value, ms, coldMs);
  }

  static <M, R> R ask(TrainingNode node, EntityTypeKey<M> key, String id, Function<ActorRef<R>, M> message) {
    try {
      return ClusterSharding.get(node.system()).entityRefFor(key, id)
          .<R>ask(message::apply, Duration.ofSeconds(60)).toCompletableFuture().get(90, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("ask " + key.name() + "|" + id + " failed: " + e, e);
    }
  }

  private static void writeSession(TrainingNode node, String sid, int events) throws Exception {
    int batch = 50;
    for (int from = 0; from < events; from += batch) {
      List<SessionInput> inputs = EventGen.inputs(EventGen.events(sid, from, Math.min(events, from + batch),
          Integer.MAX_VALUE));
      node.dataCollector().record(sid, "w5-agent", inputs).toCompletableFuture().get(120, TimeUnit.SECONDS);
    }
  }

  /** Inserts {@code pool} TrajectoryPooled events of the coordinator, serialized as the journal would. */
  private static void bulkPool(TrainingNode node, Pg pg, Pg.Schema schema, String agentId, int pool)
      throws Exception {
    Serialization ser = SerializationExtension.get(node.system().classicSystem());
    String pid = TrainingCoordinator.persistenceId(agentId).id();
    String writer = UUID.randomUUID().toString();
    Instant base = Instant.parse("2026-01-01T00:00:00Z");
    try (Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
        PreparedStatement ps = c.prepareStatement("INSERT INTO event_journal (persistence_id, sequence_number,"
            + " deleted, writer, write_timestamp, adapter_manifest, event_ser_id, event_ser_manifest, event_payload)"
            + " VALUES (?, ?, false, ?, ?, '', ?, ?, ?)")) {
      c.setAutoCommit(false);
      for (int i = 1; i <= pool; i++) {
        Instant at = base.plusMillis(i);
        var e = new TrainingCoordinator.TrajectoryPooled("w5-pooled-" + i, "v1", 0.5, 0.8, at, List.of(), at);
        Serializer s = ser.findSerializerFor(e);
        ps.setString(1, pid);
        ps.setLong(2, i);
        ps.setString(3, writer);
        ps.setLong(4, at.toEpochMilli());
        ps.setInt(5, s.identifier());
        ps.setString(6, Serializers.manifestFor(s, e));
        ps.setBytes(7, s.toBinary(e));
        ps.addBatch();
        if (i % 1000 == 0) ps.executeBatch();
      }
      ps.executeBatch();
      // One commit: the node started the coordinator while its pool was being committed in parts, and it recovered
      // a part (51,000 or 80,000 of 100,000, at a batch boundary), so the run stopped at "pool after bulk load".
      c.commit();
    }
  }

  private static void writeModel(TrainingNode node, String agentId, int transitions) {
    Function<Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command>, ModelVersion.TransitionReply> call =
        m -> ask(node, ModelVersion.ENTITY_TYPE_KEY, agentId, m);
    check(call.apply(reply -> new ModelVersion.RegisterManual("v1", "s3://m/v1", "http://m/v1", reply)));
    check(call.apply(reply -> new ModelVersion.RegisterManual("v2", "s3://m/v2", "http://m/v2", reply)));
    for (int i = 0; i < transitions / 2; i++) {
      check(call.apply(reply -> new ModelVersion.Pause("v2", reply)));
      check(call.apply(reply -> new ModelVersion.Resume("v2", reply)));
    }
  }

  private static void check(ModelVersion.TransitionReply reply) {
    if (reply instanceof ModelVersion.Failure f) throw new IllegalStateException("model transition refused: " + f);
  }
}
