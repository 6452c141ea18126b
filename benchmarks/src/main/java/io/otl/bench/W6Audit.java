package io.otl.bench;

import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.persistence.JournalRows;
import io.otl.persistence.audit.AuditReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * W6: audit replay — every session's events read back, in order, through the product's audit read
 * ({@link AuditReader#events}: the journal table read directly by {@code JournalRows}, what audit
 * pages, state-as-of and the export's replays use), against a raw {@code SELECT} of the same rows
 * per session with the same parallelism, with and without deserialization by the node's serializer.
 * The JDBC read journal's {@code currentEventsByPersistenceId} (what audit and export read before)
 * is measured in the same run for comparison.
 */
final class W6Audit {
  private W6Audit() {}

  static Result run(Pg pg, Args args) throws Exception {
    int sessions = args.integer("sessions", 500);
    int events = args.integer("events", 40);
    int parallelism = args.integer("parallelism", 4);
    int rounds = args.integer("rounds", 4);
    Result r = new Result("W6", "audit replay, the audit read path vs raw SELECT + deserialize, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w6");
    try (TrainingNode node = Nodes.start(pg, schema, args, false, Map.of())) {
      var payloads = Ingest.prepare("w6-", sessions, events, 20, EventGen::inputs);
      Ingest.Sender<List<SessionInput>> sender = (sid, in) ->
          node.dataCollector().record(sid, "bench-agent", in).thenApply(x -> x.accepted());
      // --ingest-concurrency: on a loaded machine 100 lanes time out the first asks (5 s) of a cold node.
      Ingest.Stats st = Ingest.drive("w6-", payloads, args.integer("ingest-concurrency", 100), sender, 1800);
      // A timed-out ask is no lost event (sharding keeps each session's batches in order): on a loaded
      // machine wait until the journal holds every session's events (+ SessionStarted, TrajectoryCompleted).
      String rowsSql = "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w6-%'";
      long want = (long) sessions * (events + (EventGen.complete ? 2 : 1));
      for (int i = 0; i < 240 && st.accepted() != (long) sessions * events && pg.count(schema, rowsSql) < want; i++) {
        Thread.sleep(500);
      }
      if (st.accepted() != (long) sessions * events && pg.count(schema, rowsSql) != want) {
        throw new IllegalStateException("W6 load: " + st.accepted() + " acknowledged, " + pg.count(schema, rowsSql)
            + " rows of " + want);
      }
      List<String> pids = new ArrayList<>();
      for (int s = 0; s < sessions; s++) pids.add("AgentSession|w6-" + s);
      JdbcReadJournal journal = PersistenceQuery.get(node.system().classicSystem())
          .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
      Serialization ser = SerializationExtension.get(node.system().classicSystem());
      AuditReader audit = AuditReader.fromConfig(node.system(),
          node.system().settings().config().getConfig("agentscope.training"));
      JournalRows rows = JournalRows.get(node.system());
      Pool pool = new Pool(pg, schema, parallelism);
      // The same worker threads for every path, so the raw paths' connections (one per thread) are reused.
      ExecutorService workers = Executors.newFixedThreadPool(parallelism);
      // The read paths, each counting the rows it read of every session. The reader's window without
      // the stream around it shows what the stream costs.
      Map<String, Task> paths = new LinkedHashMap<>();
      paths.put("auditPath", pid -> audit.events(pid, 1)
          .runWith(Sink.fold(0L, (a, e) -> a + 1), node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS));
      paths.put("rawSelectPlusDeserialize", pid -> select(pool, pid, ser));
      paths.put("rawSelect", pid -> select(pool, pid, null));
      paths.put("readJournal", pid -> journal.currentEventsByPersistenceId(pid, 0, Long.MAX_VALUE)
          .runWith(Sink.fold(0L, (a, e) -> a + 1), node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS));
      paths.put("readerWindowWithoutStream", pid -> (long) rows.window(pid, 1, Long.MAX_VALUE).toCompletableFuture()
          .get(60, TimeUnit.SECONDS).size());
      long expected = pg.count(schema, rowsSql);
      // The machine is shared: the paths take turns within each round (order rotated), round 0 warms the
      // JIT and caches, and each path's best round counts (the least disturbed); every round is kept.
      Map<String, List<Double>> rates = new LinkedHashMap<>();
      boolean correct = true;
      List<String> names = new ArrayList<>(paths.keySet());
      try {
        for (int round = 0; round < Math.max(2, rounds); round++) {
          for (int k = 0; k < names.size(); k++) {
            String name = names.get((k + round) % names.size());
            AtomicLong n = new AtomicLong();
            long t = System.nanoTime();
            parallel(workers, pids, parallelism, pid -> n.addAndGet(paths.get(name).read(pid)));
            double rate = n.get() / ((System.nanoTime() - t) / 1e9);
            correct &= n.get() == expected;
            if (round > 0) rates.computeIfAbsent(name, x -> new ArrayList<>()).add(Result.round(rate));
          }
        }
      } finally {
        workers.shutdown();
        pool.close();
      }
      Map<String, Double> best = new LinkedHashMap<>();
      rates.forEach((name, list) -> best.put(name, list.stream().mapToDouble(d -> d).max().orElse(0)));
      double auditRate = best.get("auditPath");
      double rawDeser = best.get("rawSelectPlusDeserialize");
      double raw = best.get("rawSelect");
      double rj = best.get("readJournal");
      r.figure("sessions", sessions).figure("eventsPerSession", events).figure("rows", expected)
          .figure("parallelism", parallelism).figure("measuredRounds", Math.max(2, rounds) - 1)
          .figure("ingestFailedAsks", st.failed());
      best.forEach((name, rate) -> r.figure(name + "EventsPerSec", rate));
      r.figure("auditPathVsRawSelectPlusDeserialize", auditRate / rawDeser)
          .figure("readJournalVsRawSelectPlusDeserialize", rj / rawDeser)
          .figure("auditPathVsRawSelect", auditRate / raw).figure("countsCorrect", correct)
          .figure("ratesPerRound", rates);
      r.ratioToBaseline = auditRate / rawDeser;
      r.headline = String.format("%,.0f events/s via the audit path vs %,.0f rows/s raw SELECT + deserialize"
          + " (raw SELECT %,.0f; read journal %,.0f = %.2f×)", auditRate, rawDeser, raw, rj, rj / rawDeser);
      r.target = "≥ 0.8 × raw SELECT + deserialize";
      r.pass = correct && r.ratioToBaseline >= 0.8;
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  interface Task {
    long read(String pid) throws Exception;
  }

  private static void parallel(ExecutorService exec, List<String> pids, int parallelism, Task task) throws Exception {
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> fs = new ArrayList<>();
    for (int i = 0; i < parallelism; i++) {
      fs.add(exec.submit(() -> {
        for (int k = next.getAndIncrement(); k < pids.size(); k = next.getAndIncrement()) task.read(pids.get(k));
        return null;
      }));
    }
    for (Future<?> f : fs) f.get(600, TimeUnit.SECONDS);
  }

  /** One connection per worker thread, as the journal's own pool would give. */
  static final class Pool implements AutoCloseable {
    private final List<Connection> all = new ArrayList<>();
    private final ThreadLocal<Connection> mine;

    Pool(Pg pg, Pg.Schema schema, int size) {
      mine = ThreadLocal.withInitial(() -> {
        try {
          Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
          synchronized (all) {
            all.add(c);
          }
          return c;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
    }

    Connection get() {
      return mine.get();
    }

    @Override
    public void close() throws Exception {
      for (Connection c : all) c.close();
    }
  }

  private static long select(Pool pool, String pid, Serialization ser) throws Exception {
    try (PreparedStatement ps = pool.get().prepareStatement("SELECT ordering, persistence_id, sequence_number,"
        + " writer, write_timestamp, event_ser_id, event_ser_manifest, event_payload FROM event_journal"
        + " WHERE persistence_id = ? AND deleted = false ORDER BY sequence_number")) {
      ps.setString(1, pid);
      long n = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          byte[] payload = rs.getBytes(8);
          if (ser != null) ser.deserialize(payload, rs.getInt(6), rs.getString(7)).get();
          n++;
        }
      }
      return n;
    }
  }
}
