package io.otl.node;

import io.otl.http.ApiMetrics;
import io.otl.http.MetricsRegistry;
import io.otl.persistence.kafka.KafkaIngest;
import java.util.HashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The agent-events ingestion on {@code /metrics} (docs/api.md): what was stored, refused and restarted,
 * and how the writes go (batches, session writes and their time, the records waiting, timed-out writes sent
 * again). The write figures were read only by the benchmarks, through {@link KafkaIngest#stats()}; an operator
 * whose ingestion lags now sees whether the journal's writes are slow or the node takes few batches.
 */
final class KafkaIngestMetrics {
  private KafkaIngestMetrics() {}

  private static final double NANOS = 1e9;

  static void register(ApiMetrics metrics, KafkaIngest ingest) {
    metrics.counter("otl_kafka_records_recorded_total", "agent-events records stored in the journal",
        () -> one(ingest.recorded()));
    metrics.counter("otl_kafka_records_duplicate_total",
        "agent-events records acknowledged as duplicates of stored events (same eventId), not stored again",
        () -> one(ingest.duplicates()));
    metrics.counter("otl_kafka_dead_lettered_total", "agent-events records sent to the dead-letter topic", () -> {
      Map<String, Double> byCode = new HashMap<>();
      ingest.deadLetteredByCode().forEach((code, n) -> byCode.put(MetricsRegistry.labels("code", code), n.doubleValue()));
      return byCode;
    });
    metrics.counter("otl_kafka_ingest_restarts_total", "restarts of the agent-events stream",
        () -> one(ingest.restarts()));
    counter(metrics, ingest, "otl_kafka_batches_total", "batches of agent-events records taken from Kafka",
        s -> s.batches());
    counter(metrics, ingest, "otl_kafka_writes_total",
        "session writes of agent-events records answered by the journal (a batch's records go in one write per session)",
        s -> s.writes());
    counter(metrics, ingest, "otl_kafka_write_records_total", "agent-events records in the answered session writes",
        s -> s.records());
    counter(metrics, ingest, "otl_kafka_write_seconds_total", "time of the answered session writes, summed",
        s -> s.writeNanos() / NANOS);
    counter(metrics, ingest, "otl_kafka_record_wait_seconds_total",
        "each written record's wait from its batch's arrival to its write's answer, summed",
        s -> s.recordWaitNanos() / NANOS);
    counter(metrics, ingest, "otl_kafka_record_in_write_seconds_total",
        "the part of otl_kafka_record_wait_seconds_total spent in the record's write", s -> s.recordInWriteNanos() / NANOS);
    counter(metrics, ingest, "otl_kafka_write_timeout_retries_total",
        "session writes that timed out and were sent again in place", s -> s.timeoutRetries());
    gauge(metrics, ingest, "otl_kafka_writes_running", "session writes of agent-events records running now",
        s -> s.writesRunning());
    gauge(metrics, ingest, "otl_kafka_sessions_busy", "sessions with agent-events records queued or being written",
        s -> s.sessionsBusy());
    gauge(metrics, ingest, "otl_kafka_records_held",
        "agent-events records taken from Kafka and not yet in the journal or the dead-letter topic (offsets not"
            + " committed)", s -> s.recordsHeld());
  }

  private static void counter(ApiMetrics metrics, KafkaIngest ingest, String name, String help,
      ToDoubleFunction<KafkaIngest.Stats> value) {
    metrics.counter(name, help, () -> Map.of("", value.applyAsDouble(ingest.stats())));
  }

  private static void gauge(ApiMetrics metrics, KafkaIngest ingest, String name, String help,
      ToDoubleFunction<KafkaIngest.Stats> value) {
    metrics.gauge(name, help, () -> Map.of("", value.applyAsDouble(ingest.stats())));
  }

  private static Map<String, Double> one(long value) {
    return Map.of("", (double) value);
  }
}
