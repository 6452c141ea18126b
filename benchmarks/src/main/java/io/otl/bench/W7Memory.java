package io.otl.bench;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * W7: heap. Touch N sessions (a user message and a task result each, so each completes), let them
 * passivate ({@code session.passivate-after} set low), and measure the heap after GC; then touch A
 * sessions that stay active and divide the heap growth by A.
 */
final class W7Memory {
  private W7Memory() {}

  static Result run(Pg pg, Args args) throws Exception {
    int sessions = args.integer("sessions", 100_000);
    int active = args.integer("active", 10_000);
    String passivate = args.string("passivate-after", "2s");
    Result r = new Result("W7", "heap after touching sessions (passivation after " + passivate + "), PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w7");
    try (TrainingNode node = Nodes.start(pg, schema, args, false,
        Map.of("agentscope.training.data-collector.session.passivate-after", passivate))) {
      long h0 = Machine.usedHeapAfterGcMb();
      long t = System.nanoTime();
      Ingest.Stats touched = touch(node, "w7-", sessions, true);
      double touchSecs = (System.nanoTime() - t) / 1e9;
      long peakTouched = Runtime.getRuntime().totalMemory() / (1024 * 1024);
      int left = waitPassivated(node, Duration.ofSeconds(args.integer("passivation-wait", 180)));
      long h1 = Machine.usedHeapAfterGcMb();
      Ingest.Stats act = touch(node, "w7a-", active, false);
      long h2 = Machine.usedHeapAfterGcMb();
      int live = entities(node);
      double perActiveKb = (h2 - h1) * 1024.0 / Math.max(1, active);
      boolean correct = touched.accepted() == 2L * sessions && act.accepted() == 2L * active;
      r.figure("sessionsTouched", sessions).figure("touchSeconds", touchSecs)
          .figure("sessionsPerSec", sessions / touchSecs).figure("heapBeforeMb", h0)
          .figure("heapAfterTouchAndPassivationMb", h1).figure("entitiesLeftAfterPassivation", left)
          .figure("committedHeapAfterTouchMb", peakTouched).figure("activeSessions", active)
          .figure("liveEntitiesWithActive", live).figure("heapWithActiveMb", h2)
          .figure("heapPerActiveSessionKb", perActiveKb).figure("countsCorrect", correct);
      r.headline = String.format("%,d MB heap after %,d sessions (passivated; %,d MB before); %.1f KB per active session",
          h1, sessions, h0, perActiveKb);
      r.target = "< 512 MB for 100,000";
      r.pass = correct && h1 < 512;
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  private static Ingest.Stats touch(TrainingNode node, String prefix, int n, boolean complete) throws Exception {
    List<List<List<SessionInput>>> payloads = new ArrayList<>(n);
    for (int s = 0; s < n; s++) {
      List<SessionInput> in = List.of(
          new SessionInput.Message("u", null, "user", "where is my parcel, order " + prefix + "x" + s, null, null),
          complete ? new SessionInput.Result("r", null, "SUCCESS", "answered")
              : new SessionInput.Message("a", null, "assistant", "on its way", "m", 300L));
      payloads.add(List.of(in));
    }
    return Ingest.drive(prefix, payloads, 200, (sid, in) -> node.dataCollector().record(sid, "bench-agent", in)
        .thenApply(x -> x.accepted()), 1800);
  }

  static int entities(TrainingNode node) {
    try {
      ShardRegion.CurrentShardRegionState st = AskPattern.<org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery,
              ShardRegion.CurrentShardRegionState>ask(ClusterSharding.get(node.system()).shardState(),
              reply -> new GetShardRegionState(AgentSession.ENTITY_TYPE_KEY, reply), Duration.ofSeconds(30),
              node.system().scheduler())
          .toCompletableFuture().get(40, TimeUnit.SECONDS);
      int n = 0;
      for (ShardRegion.ShardState s : st.getShards()) n += s.getEntityIds().size();
      return n;
    } catch (Exception e) {
      throw new IllegalStateException("shard region state: " + e, e);
    }
  }

  private static int waitPassivated(TrainingNode node, Duration max) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    int n = entities(node);
    while (n > 0 && System.nanoTime() < deadline) {
      Thread.sleep(1000);
      n = entities(node);
    }
    return n;
  }
}
