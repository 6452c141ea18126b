package io.otl.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The ceiling the ingest workloads are measured against: raw JDBC batched inserts (PreparedStatement
 * batches, reWriteBatchedInserts, one transaction per batch) of rows of the same size as W1's events
 * into {@code bench_journal}, created {@code LIKE event_journal INCLUDING ALL} (same columns, keys and
 * indexes) in a fresh schema of the same database. Run with 1 and with N writer threads; the better
 * one is the baseline. One transaction per row is measured too, for scale.
 */
final class Baseline {
  private Baseline() {}

  static Result run(Pg pg, Args args) throws Exception {
    int sessions = args.integer("sessions", 1000);
    int events = args.integer("events", 20);
    int batch = args.integer("batch-rows", 500);
    int threads = args.integer("threads", 4);
    Result r = new Result("baseline", "raw JDBC batched INSERT, journal-shaped rows");
    Pg.Schema schema = pg.freshSchema("bench_base");
    try {
      pg.journal(schema, 4);
      try (Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
          Statement st = c.createStatement()) {
        st.execute("CREATE TABLE bench_journal (LIKE event_journal INCLUDING ALL)");
      }
      List<List<byte[]>> payloads = new ArrayList<>(sessions);
      long bytes = 0;
      for (int s = 0; s < sessions; s++) {
        List<byte[]> rows = new ArrayList<>(events);
        String sid = "base-" + s;
        for (ObjectNode e : EventGen.events(sid, 0, events, events)) {
          e.put("at", Instant.now().toString()).put("recordedAt", Instant.now().toString());
          byte[] b = e.toString().getBytes(StandardCharsets.UTF_8);
          bytes += b.length;
          rows.add(b);
        }
        payloads.add(rows);
      }
      long rowsTotal = (long) sessions * events;
      double one = insert(pg, schema, payloads, batch, 1, "t1");
      double many = insert(pg, schema, payloads, batch, threads, "tn");
      double perRow = singleRowCommits(pg, schema, payloads, Math.min(2000, (int) rowsTotal));
      double best = Math.max(one, many);
      r.figure("rows", rowsTotal).figure("avgPayloadBytes", (double) bytes / rowsTotal).figure("batchRows", batch)
          .figure("rowsPerSec1Thread", one).figure("rowsPerSec" + threads + "Threads", many)
          .figure("rowsPerSecOneTxPerRow", perRow).figure("baselineRowsPerSec", best);
      r.headline = String.format("%,.0f rows/s (1 thread %,.0f; %d threads %,.0f; 1 tx/row %,.0f)", best, one,
          threads, many, perRow);
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  static double baselineOf(Result r) {
    return ((Number) r.figures.get("baselineRowsPerSec")).doubleValue();
  }

  private static final String INSERT = "INSERT INTO bench_journal (persistence_id, sequence_number, deleted, writer,"
      + " write_timestamp, adapter_manifest, event_ser_id, event_ser_manifest, event_payload)"
      + " VALUES (?, ?, false, ?, ?, '', 33, 'io.otl.core.session.AgentSession$MessageRecorded', ?)";

  private static double insert(Pg pg, Pg.Schema schema, List<List<byte[]>> payloads, int batch, int threads,
      String run) throws Exception {
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long t0 = System.nanoTime();
    List<Future<Long>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      done.add(pool.submit(() -> {
        long n = 0;
        try (Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
            PreparedStatement ps = c.prepareStatement(INSERT)) {
          c.setAutoCommit(false);
          int inBatch = 0;
          for (int s = next.getAndIncrement(); s < payloads.size(); s = next.getAndIncrement()) {
            List<byte[]> rows = payloads.get(s);
            for (int i = 0; i < rows.size(); i++) {
              ps.setString(1, "AgentSession|" + run + "-" + s);
              ps.setLong(2, i + 1);
              ps.setString(3, "bench-writer");
              ps.setLong(4, System.currentTimeMillis());
              ps.setBytes(5, rows.get(i));
              ps.addBatch();
              n++;
              if (++inBatch == batch) {
                ps.executeBatch();
                c.commit();
                inBatch = 0;
              }
            }
          }
          if (inBatch > 0) {
            ps.executeBatch();
            c.commit();
          }
        }
        return n;
      }));
    }
    long rows = 0;
    for (Future<Long> f : done) rows += f.get();
    double secs = (System.nanoTime() - t0) / 1e9;
    pool.shutdown();
    return rows / secs;
  }

  private static double singleRowCommits(Pg pg, Pg.Schema schema, List<List<byte[]>> payloads, int rows)
      throws Exception {
    try (Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
        PreparedStatement ps = c.prepareStatement(INSERT)) {
      c.setAutoCommit(true);
      long t0 = System.nanoTime();
      int n = 0;
      outer:
      for (int s = 0; s < payloads.size(); s++) {
        for (int i = 0; i < payloads.get(s).size(); i++) {
          ps.setString(1, "AgentSession|single-" + s);
          ps.setLong(2, i + 1);
          ps.setString(3, "bench-writer");
          ps.setLong(4, System.currentTimeMillis());
          ps.setBytes(5, payloads.get(s).get(i));
          ps.executeUpdate();
          if (++n == rows) break outer;
        }
      }
      return n / ((System.nanoTime() - t0) / 1e9);
    }
  }
}
