package io.otl.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.TrainingNode;
import io.otl.persistence.kafka.KafkaIngest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * W3: the node's Kafka ingestion (KafkaIngest, started by the node with kafka.enabled) consumes S×E
 * records (one event each, key = sessionId, interleaved across sessions) from agent-events into the
 * journal. As W1 and W2 do, the node is warmed first: the warm-up's records ({@code
 * --warmup-sessions}, other ids) are produced, the node starts and stores them and commits their
 * offsets, and only then are the measured records produced (session 42; before, they were consumed in
 * the node's first seconds, so the figure was mostly its JIT and the placing of its shards). {@code
 * --cold} keeps the old method: every record produced before the node starts, as a restarted node
 * finds a backlog. Figure: events/s from the first measured journal row to the last, the time until
 * every offset is committed, and the JVM's CPU per 1,000 events over that span.
 */
final class W3Kafka {
  private W3Kafka() {}

  static Result run(Pg pg, Args args, Double baseline) throws Exception {
    int sessions = args.integer("sessions", 1000);
    int events = args.integer("events", 20);
    int partitions = args.integer("partitions", 4);
    // A fifth of the run by default, as W1 and W2; their ids do not match the measured rows' 'w3-%'.
    int warm = args.integer("warmup-sessions", sessions / 5);
    // --cold: every record produced before the node starts (sessions 35-41's method): a restarted node
    // with a backlog; by default the node is warm before the measured records are produced.
    boolean cold = args.flag("cold");
    // --sql-poll: follow the measured rows by counting them in the journal every 50 ms, as sessions
    // 35-42 did. That count cannot use an index (LIKE on a C.UTF-8 column) and scans the whole journal
    // back to back, ~0.4 s of PostgreSQL's CPU per second beside the node on two cores (session 43);
    // by default the node's own count of stored records is followed, and the journal counted at the end.
    boolean sqlPoll = cold || args.flag("sql-poll");
    Result r = new Result("W3", "ingest, Kafka agent-events → journal, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w3");
    String topic = "agent-events";
    try (KafkaBroker broker = KafkaBroker.start(partitions, topic, "agent-events.dlq", "trajectories",
        "model-updates")) {
      long produceStart = System.nanoTime();
      // Generated before the node starts, so that producing them later costs the window only the send.
      List<ProducerRecord<String, byte[]>> measured = records(topic, "w3-", sessions, events);
      try (KafkaProducer<String, byte[]> producer = broker.producer()) {
        send(producer, records(topic, "w3warm-", warm, events));
        if (cold) send(producer, measured);
      }
      double produceSecs = (System.nanoTime() - produceStart) / 1e9;
      long expectedRows = (long) sessions * events + 2L * sessions;
      long warmRows = (long) warm * events + 2L * warm;
      Map<String, Object> kafka = new HashMap<>();
      kafka.put("agentscope.training.kafka.enabled", true);
      kafka.put("agentscope.training.kafka.bootstrap-servers", broker.bootstrapServers());
      long nodeStart = System.nanoTime();
      try (TrainingNode node = Nodes.start(pg, schema, args, false, kafka)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(args.integer("timeout", 900));
        double warmSecs = -1;
        boolean warmComplete = true;
        CompletableFuture<Double> measuredSent = CompletableFuture.completedFuture(-1.0);
        if (!cold) {
          // Warm as W1 and W2 are: the warm-up's records are in the journal and their offsets committed
          // before the measured records exist, so the window holds neither the node's start (JIT, shard
          // placement) nor the warm-up's own records (session 42).
          String warmSql = "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w3warm-%'";
          long got = 0;
          if (!sqlPoll) {
            // The node's count first: the SQL count is a scan of the whole journal (session 43).
            while (System.nanoTime() < deadline && recorded(node) < (long) warm * events) Thread.sleep(20);
          }
          while (System.nanoTime() < deadline && (got = pg.count(schema, warmSql)) < warmRows) Thread.sleep(50);
          warmComplete = got == warmRows && waitCommitted(broker, topic, partitions, deadline) > 0;
          warmSecs = (System.nanoTime() - nodeStart) / 1e9;
          // Sent beside the count below, which must see the first measured row when it lands.
          measuredSent = CompletableFuture.supplyAsync(() -> {
            long sendStart = System.nanoTime();
            try (KafkaProducer<String, byte[]> producer = broker.producer()) {
              send(producer, measured);
            } catch (Exception e) {
              throw new IllegalStateException("producing the measured records", e);
            }
            return (System.nanoTime() - sendStart) / 1e9;
          });
        }
        long measureStart = System.nanoTime();
        String countSql = "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w3-%'";
        long first = -1;
        long last = -1;
        long rows = 0;
        // CPU of this JVM from the first measured row to the last: the node, and the broker and its
        // log in the same process (a few per cent of the samples, BENCHMARKS.md session 41); the
        // figure to compare builds by when the machine's load moves events/s.
        long self = ProcessHandle.current().pid();
        double cpuFirst = 0;
        double cpuLast = 0;
        Map<String, Double> jitFirst = Map.of();
        Map<String, Double> jitLast = Map.of();
        Map<String, Double> groupsFirst = Map.of();
        Map<String, Double> groupsLast = Map.of();
        // The journal's INSERTs running at each sample (the node's write transactions in flight at the
        // database: at most jdbc-journal.parallelism), to tell a latency chain from a busy CPU.
        long inFlightSamples = 0;
        long inFlightSum = 0;
        long inFlightMax = 0;
        // The ingestion's own counters (writes, the wait from a batch's arrival to its records' write
        // answers) at the first and last measured row, and its writes running and records held each sample.
        KafkaIngest.Stats ingestFirst = null;
        KafkaIngest.Stats ingestLast = null;
        long runningSum = 0;
        long busySum = 0;
        long heldSum = 0;
        List<String> series = new ArrayList<>();
        long nextSeriesAt = 0;
        long recordedBase = recorded(node);
        long inputsTotal = (long) sessions * events;
        long nextSampleAt = 0;
        double pgFirst = 0;
        double pgLast = 0;
        long polls = 0;
        while (System.nanoTime() < deadline) {
          if (sqlPoll) {
            rows = pg.count(schema, countSql);
          } else {
            // Stored records of the measured run, as rows: the two session rows (start, completion) each
            // are confirmed in the journal below.
            long stored = recorded(node) - recordedBase;
            rows = stored >= inputsTotal ? expectedRows : stored;
          }
          polls++;
          long now = System.nanoTime();
          if (rows > 0 && first < 0) {
            first = now;
            cpuFirst = Cpu.jvmSeconds();
            jitFirst = Cpu.jit(self);
            groupsFirst = ThreadGroupCpu.snapshot();
            ingestFirst = ingestStats(node);
            pgFirst = Cpu.postgresSeconds();
          }
          if (rows >= expectedRows) {
            last = now;
            cpuLast = Cpu.jvmSeconds();
            jitLast = Cpu.jit(self);
            groupsLast = ThreadGroupCpu.snapshot();
            ingestLast = ingestStats(node);
            pgLast = Cpu.postgresSeconds();
            break;
          }
          if (first > 0 && now >= nextSampleAt) {
            nextSampleAt = now + TimeUnit.MILLISECONDS.toNanos(500);
            long n = pg.count(schema, JOURNAL_INSERTS_RUNNING);
            inFlightSamples++;
            inFlightSum += n;
            inFlightMax = Math.max(inFlightMax, n);
            KafkaIngest.Stats st = ingestStats(node);
            if (st != null) {
              runningSum += st.writesRunning();
              busySum += st.sessionsBusy();
              heldSum += st.recordsHeld();
              if (now >= nextSeriesAt) {
                // each second: seconds since the first row, journal rows, writes running, sessions busy, records held, INSERTs running
                series.add(String.format("%.0fs %d rows %d/%d/%d db%d", (now - first) / 1e9, rows, st.writesRunning(),
                    st.sessionsBusy(), st.recordsHeld(), n));
                nextSeriesAt = now + TimeUnit.SECONDS.toNanos(1);
              }
            }
          }
          Thread.sleep(sqlPoll ? 50 : 10);
        }
        if (!sqlPoll && last > 0) {
          // The node counted every record stored: the journal must hold them and the sessions' own rows.
          // A row that lands after the node's count (a session's completion) moves the end to when it is seen.
          boolean seen = (rows = pg.count(schema, countSql)) >= expectedRows;
          while (!seen && System.nanoTime() < deadline) {
            Thread.sleep(50);
            seen = (rows = pg.count(schema, countSql)) >= expectedRows;
            if (seen) last = System.nanoTime();
          }
        }
        double measuredProduceSecs = measuredSent.get(120, TimeUnit.SECONDS);
        long committedAt = waitCommitted(broker, topic, partitions, deadline);
        double secs = last > 0 && first > 0 ? Math.max(1e-3, (last - first) / 1e9) : Double.NaN;
        long inputs = (long) sessions * events;
        double rate = inputs / secs;
        boolean complete = rows == expectedRows && committedAt > 0 && warmComplete;
        // Journal write transactions holding measured rows, by the rows' xmin (one per transaction).
        long transactions = pg.count(schema, "SELECT count(DISTINCT xmin::text) FROM event_journal"
            + " WHERE persistence_id LIKE 'AgentSession|w3-%'");
        // A session's atomic write is its rows of one transaction (its lane runs one write at a time).
        long sessionWrites = pg.count(schema, "SELECT count(*) FROM (SELECT DISTINCT persistence_id, xmin::text"
            + " FROM event_journal WHERE persistence_id LIKE 'AgentSession|w3-%') w");
        long medianTxRows = pg.count(schema, "SELECT coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY n), 0) FROM"
            + " (SELECT count(*) n FROM event_journal WHERE persistence_id LIKE 'AgentSession|w3-%' GROUP BY xmin::text) t");
        r.figure("method", cold ? "cold: all records produced before the node starts" : "warm: measured records"
                + " produced after the warm-up's are in the journal and committed")
            .figure("sessions", sessions).figure("warmupSessions", warm).figure("eventsPerSession", events)
            .figure("partitions", partitions)
            .figure("records", inputs).figure("produceSeconds", produceSecs)
            .figure("warmupSec", warmSecs).figure("warmupComplete", warmComplete)
            .figure("measuredProduceSeconds", measuredProduceSecs)
            .figure(cold ? "nodeStartToFirstRowSec" : "produceStartToFirstRowSec", (first - (cold ? nodeStart : measureStart)) / 1e9)
            .figure("firstToLastRowSec", secs).figure("eventsPerSec", rate)
            .figure("journalRows", rows).figure("journalRowsExpected", expectedRows)
            .figure("allOffsetsCommittedAfterFirstRowSec", committedAt > 0 ? (committedAt - first) / 1e9 : -1)
            .figure("jvmCpuSecPer1kEvents", last > 0 ? (cpuLast - cpuFirst) * 1000 / inputs : Double.NaN)
            .figure("jvmJitCpuSecPer1kEvents", last > 0 ? Cpu.grown(jitFirst, jitLast) * 1000 / inputs : Double.NaN)
            .figure("progressFollowedBy", sqlPoll ? "SQL count of the journal every 50 ms" : "the node's stored-records counter")
            .figure("progressPolls", polls)
            .figure("postgresCpuSecPer1kEvents", last > 0 ? (pgLast - pgFirst) * 1000 / inputs : Double.NaN)
            .figure("journalTransactions", transactions)
            .figure("rowsPerTransaction", transactions > 0 ? (double) rows / transactions : Double.NaN)
            .figure("rowsPerTransactionMedian", medianTxRows)
            .figure("sessionWrites", sessionWrites)
            .figure("rowsPerSessionWrite", sessionWrites > 0 ? (double) rows / sessionWrites : Double.NaN)
            .figure("journalInsertsRunningMean", inFlightSamples > 0 ? (double) inFlightSum / inFlightSamples : Double.NaN)
            .figure("journalInsertsRunningMax", inFlightMax)
            .figure("ingest", ingestFigures(ingestFirst, ingestLast, inFlightSamples, runningSum, busySum, heldSum))
            .figure("ingestSeries (t rows running/busy/held dbInserts)", series)
            .figure("cpuSecPer1kEventsByThreadGroup", last > 0 ? ThreadGroupCpu.per1k(groupsFirst, groupsLast, inputs)
                : Map.of())
            .figure("countsCorrect", complete);
        r.headline = String.format("%,.0f events/s (first→last row %.1f s; offsets all committed %.1f s after first row;"
                + " JVM %.2f CPU-s per 1,000 events, JIT %.2f)%s",
            rate, secs, committedAt > 0 ? (committedAt - first) / 1e9 : -1.0,
            last > 0 ? (cpuLast - cpuFirst) * 1000 / inputs : Double.NaN,
            last > 0 ? Cpu.grown(jitFirst, jitLast) * 1000 / inputs : Double.NaN, complete ? "" : " (INCOMPLETE)")
            + (cold ? " [cold node]" : "");
        if (baseline != null) {
          r.ratioToBaseline = rate / baseline;
          r.target = "≥ 0.2 × baseline";
          r.pass = complete && r.ratioToBaseline >= 0.2;
        }
      }
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  /**
   * Records the node's ingestion has in the journal since it started: stored, or answered as already
   * stored (a write that timed out under load and was sent again finds its events there).
   */
  private static long recorded(TrainingNode node) {
    return node.kafkaIngest().map(i -> i.recorded() + i.duplicates()).orElse(0L);
  }

  private static KafkaIngest.Stats ingestStats(TrainingNode node) {
    return node.kafkaIngest().map(KafkaIngest::stats).orElse(null);
  }

  /** The ingestion's counts over the measured window: writes, records per write, their waits, what runs at once. */
  private static Map<String, Object> ingestFigures(KafkaIngest.Stats a, KafkaIngest.Stats b, long samples, long running,
      long busy, long held) {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    if (a == null || b == null) return m;
    long writes = b.writes() - a.writes();
    long records = b.records() - a.records();
    m.put("batches", b.batches() - a.batches());
    m.put("timeoutRetriesSinceStart", b.timeoutRetries());
    m.put("sessionWrites", writes);
    m.put("recordsPerWrite", writes > 0 ? Result.round((double) records / writes) : 0);
    m.put("writeLatencyMsMean", writes > 0 ? Result.round((b.writeNanos() - a.writeNanos()) / 1e6 / writes) : 0);
    m.put("recordWaitMsMean", records > 0 ? Result.round((b.recordWaitNanos() - a.recordWaitNanos()) / 1e6 / records) : 0);
    m.put("recordInWriteMsMean",
        records > 0 ? Result.round((b.recordInWriteNanos() - a.recordInWriteNanos()) / 1e6 / records) : 0);
    m.put("writesRunningMean", samples > 0 ? Result.round((double) running / samples) : 0);
    m.put("sessionsBusyMean", samples > 0 ? Result.round((double) busy / samples) : 0);
    m.put("recordsHeldMean", samples > 0 ? Result.round((double) held / samples) : 0);
    return m;
  }

  /** The node's journal INSERTs running now in this database (idle-in-transaction ones between statements too). */
  private static final String JOURNAL_INSERTS_RUNNING = "SELECT count(*) FROM pg_stat_activity WHERE datname ="
      + " current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
      + " AND query ILIKE 'insert into%event_journal%'";

  /** Interleaves sessions the way live traffic arrives: event i of every session, then i+1. */
  private static List<ProducerRecord<String, byte[]>> records(String topic, String prefix, int sessions, int events) {
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>(sessions * events);
    for (int i = 0; i < events; i++) {
      for (int s = 0; s < sessions; s++) {
        String sid = prefix + s;
        ObjectNode e = EventGen.event(sid, i, events);
        e.put("sessionId", sid).put("agentId", "bench-agent");
        out.add(new ProducerRecord<>(topic, sid, e.toString().getBytes(StandardCharsets.UTF_8)));
      }
    }
    return out;
  }

  private static void send(KafkaProducer<String, byte[]> producer, List<ProducerRecord<String, byte[]>> records)
      throws Exception {
    List<Future<?>> acks = new ArrayList<>(records.size());
    for (ProducerRecord<String, byte[]> r : records) acks.add(producer.send(r));
    for (Future<?> a : acks) a.get(120, TimeUnit.SECONDS);
  }

  /** Waits until the ingest group's committed offsets reach the end of every partition; -1 on timeout. */
  private static long waitCommitted(KafkaBroker broker, String topic, int partitions, long deadline) throws Exception {
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < partitions; p++) latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      var ends = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS);
      while (System.nanoTime() < deadline) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("otl-ingest")
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        boolean all = true;
        for (var e : ends.entrySet()) {
          OffsetAndMetadata c = committed.get(e.getKey());
          // A partition nothing was produced to has no committed offset to wait for (a small warm-up).
          if (e.getValue().offset() > 0 && (c == null || c.offset() < e.getValue().offset())) all = false;
        }
        if (all) return System.nanoTime();
        Thread.sleep(100);
      }
      return -1;
    }
  }
}
