package io.otl.bench;

import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
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
 * W6: audit replay — every session's events read back, in order, through the JDBC read journal's
 * {@code currentEventsByPersistenceId} (what audit and export read), against a raw {@code SELECT} of
 * the same rows per session with the same parallelism. The raw figure with deserialization is given
 * too, to show where the time goes.
 */
final class W6Audit {
  private W6Audit() {}

  static Result run(Pg pg, Args args) throws Exception {
    int sessions = args.integer("sessions", 500);
    int events = args.integer("events", 40);
    int parallelism = args.integer("parallelism", 4);
    int rounds = args.integer("rounds", 2);
    Result r = new Result("W6", "audit replay, currentEventsByPersistenceId vs raw SELECT, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w6");
    try (TrainingNode node = Nodes.start(pg, schema, args, false, Map.of())) {
      var payloads = Ingest.prepare("w6-", sessions, events, 20, EventGen::inputs);
      Ingest.Sender<List<SessionInput>> sender = (sid, in) ->
          node.dataCollector().record(sid, "bench-agent", in).thenApply(x -> x.accepted());
      Ingest.Stats st = Ingest.drive("w6-", payloads, 100, sender, 1800);
      if (st.accepted() != (long) sessions * events) throw new IllegalStateException("W6 load: " + st.accepted());
      List<String> pids = new ArrayList<>();
      for (int s = 0; s < sessions; s++) pids.add("AgentSession|w6-" + s);
      JdbcReadJournal journal = PersistenceQuery.get(node.system().classicSystem())
          .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
      Serialization ser = SerializationExtension.get(node.system().classicSystem());
      double rj = 0, raw = 0, rawDeser = 0;
      long rjCount = 0, rawCount = 0;
      for (int round = 0; round < rounds; round++) { // round 0 warms the JIT and the caches
        AtomicLong n1 = new AtomicLong();
        long t = System.nanoTime();
        parallel(pids, parallelism, pid -> n1.addAndGet(journal.currentEventsByPersistenceId(pid, 0, Long.MAX_VALUE)
            .runWith(Sink.fold(0L, (a, e) -> a + 1), node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS)));
        rj = n1.get() / ((System.nanoTime() - t) / 1e9);
        rjCount = n1.get();
        AtomicLong n2 = new AtomicLong();
        t = System.nanoTime();
        try (Pool pool = new Pool(pg, schema, parallelism)) {
          parallel(pids, parallelism, pid -> n2.addAndGet(select(pool, pid, null)));
          raw = n2.get() / ((System.nanoTime() - t) / 1e9);
          rawCount = n2.get();
          AtomicLong n3 = new AtomicLong();
          t = System.nanoTime();
          parallel(pids, parallelism, pid -> n3.addAndGet(select(pool, pid, ser)));
          rawDeser = n3.get() / ((System.nanoTime() - t) / 1e9);
        }
      }
      long expected = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w6-%'");
      boolean correct = rjCount == expected && rawCount == expected;
      r.figure("sessions", sessions).figure("eventsPerSession", events).figure("rows", expected)
          .figure("parallelism", parallelism).figure("readJournalEventsPerSec", rj).figure("rawSelectRowsPerSec", raw)
          .figure("rawSelectPlusDeserializeRowsPerSec", rawDeser).figure("countsCorrect", correct);
      r.ratioToBaseline = rj / raw;
      r.headline = String.format("%,.0f events/s via read journal vs %,.0f rows/s raw SELECT (%,.0f with deserialization)",
          rj, raw, rawDeser);
      r.target = "≥ 0.5 × raw SELECT";
      r.pass = correct && r.ratioToBaseline >= 0.5;
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  interface Task {
    void run(String pid) throws Exception;
  }

  private static void parallel(List<String> pids, int parallelism, Task task) throws Exception {
    ExecutorService exec = Executors.newFixedThreadPool(parallelism);
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> fs = new ArrayList<>();
    for (int i = 0; i < parallelism; i++) {
      fs.add(exec.submit(() -> {
        for (int k = next.getAndIncrement(); k < pids.size(); k = next.getAndIncrement()) task.run(pids.get(k));
        return null;
      }));
    }
    for (Future<?> f : fs) f.get(600, TimeUnit.SECONDS);
    exec.shutdown();
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
