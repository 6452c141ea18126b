package io.otl.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.TrainingNode;
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
        while (System.nanoTime() < deadline) {
          rows = pg.count(schema, countSql);
          long now = System.nanoTime();
          if (rows > 0 && first < 0) {
            first = now;
            cpuFirst = Cpu.jvmSeconds();
            jitFirst = Cpu.jit(self);
          }
          if (rows >= expectedRows) {
            last = now;
            cpuLast = Cpu.jvmSeconds();
            jitLast = Cpu.jit(self);
            break;
          }
          Thread.sleep(50);
        }
        double measuredProduceSecs = measuredSent.get(120, TimeUnit.SECONDS);
        long committedAt = waitCommitted(broker, topic, partitions, deadline);
        double secs = last > 0 && first > 0 ? Math.max(1e-3, (last - first) / 1e9) : Double.NaN;
        long inputs = (long) sessions * events;
        double rate = inputs / secs;
        boolean complete = rows == expectedRows && committedAt > 0 && warmComplete;
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
