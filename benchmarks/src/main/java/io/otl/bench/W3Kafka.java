package io.otl.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.TrainingNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * W3: S×E records (one event each, key = sessionId) are produced to agent-events before the node
 * starts; the node's Kafka ingestion (KafkaIngest, started by the node with kafka.enabled) then
 * consumes them into the journal. Figure: events/s from the first journal row to the last, and the
 * time until every offset is committed. The measured records follow a warm-up's in every partition
 * ({@code --warmup-sessions}, other ids), as W1 and W2 warm their node: without it the figure was
 * mostly the fresh node's JIT and its first entity starts.
 */
final class W3Kafka {
  private W3Kafka() {}

  static Result run(Pg pg, Args args, Double baseline) throws Exception {
    int sessions = args.integer("sessions", 1000);
    int events = args.integer("events", 20);
    int partitions = args.integer("partitions", 4);
    // A fifth of the run by default, as W1 and W2; their ids do not match the measured rows' 'w3-%'.
    int warm = args.integer("warmup-sessions", sessions / 5);
    Result r = new Result("W3", "ingest, Kafka agent-events → journal, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w3");
    String topic = "agent-events";
    try (KafkaBroker broker = KafkaBroker.start(partitions, topic, "agent-events.dlq", "trajectories",
        "model-updates")) {
      long produceStart = System.nanoTime();
      try (KafkaProducer<String, byte[]> producer = broker.producer()) {
        List<Future<?>> acks = new ArrayList<>();
        produce(producer, topic, "w3warm-", warm, events, acks);
        produce(producer, topic, "w3-", sessions, events, acks);
        for (Future<?> a : acks) a.get(120, TimeUnit.SECONDS);
      }
      double produceSecs = (System.nanoTime() - produceStart) / 1e9;
      long expectedRows = (long) sessions * events + 2L * sessions;
      Map<String, Object> kafka = new HashMap<>();
      kafka.put("agentscope.training.kafka.enabled", true);
      kafka.put("agentscope.training.kafka.bootstrap-servers", broker.bootstrapServers());
      long nodeStart = System.nanoTime();
      try (TrainingNode node = Nodes.start(pg, schema, args, false, kafka)) {
        String countSql = "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w3-%'";
        long first = -1;
        long last = -1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(args.integer("timeout", 900));
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
        long committedAt = waitCommitted(broker, topic, partitions, deadline);
        double secs = last > 0 && first > 0 ? Math.max(1e-3, (last - first) / 1e9) : Double.NaN;
        long inputs = (long) sessions * events;
        double rate = inputs / secs;
        boolean complete = rows == expectedRows && committedAt > 0;
        r.figure("sessions", sessions).figure("warmupSessions", warm).figure("eventsPerSession", events)
            .figure("partitions", partitions)
            .figure("records", inputs).figure("produceSeconds", produceSecs)
            .figure("nodeStartToFirstRowSec", (first - nodeStart) / 1e9)
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
            last > 0 ? Cpu.grown(jitFirst, jitLast) * 1000 / inputs : Double.NaN, complete ? "" : " (INCOMPLETE)");
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
  private static void produce(KafkaProducer<String, byte[]> producer, String topic, String prefix, int sessions,
      int events, List<Future<?>> acks) {
    for (int i = 0; i < events; i++) {
      for (int s = 0; s < sessions; s++) {
        String sid = prefix + s;
        ObjectNode e = EventGen.event(sid, i, events);
        e.put("sessionId", sid).put("agentId", "bench-agent");
        acks.add(producer.send(new ProducerRecord<>(topic, sid, e.toString().getBytes(StandardCharsets.UTF_8))));
      }
    }
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
          if (c == null || c.offset() < e.getValue().offset()) all = false;
        }
        if (all) return System.nanoTime();
        Thread.sleep(100);
      }
      return -1;
    }
  }
}
