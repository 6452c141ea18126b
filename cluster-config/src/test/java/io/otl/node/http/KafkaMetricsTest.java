package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.kafka.KafkaTestBroker;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The ingestion's write figures (batches, session writes and their time, records waiting, timed-out writes sent
 * again) were kept by KafkaIngest for the benchmarks only: a node whose ingestion lagged showed an operator
 * records stored, never how its writes went. They are on /metrics now; here they move under a real broker.
 */
class KafkaMetricsTest {
  private static final List<String> COUNTERS = List.of("otl_kafka_batches_total", "otl_kafka_writes_total",
      "otl_kafka_write_records_total", "otl_kafka_write_seconds_total", "otl_kafka_record_wait_seconds_total",
      "otl_kafka_record_in_write_seconds_total", "otl_kafka_records_recorded_total");
  private static final List<String> GAUGES = List.of("otl_kafka_writes_running", "otl_kafka_sessions_busy",
      "otl_kafka_records_held");

  @Test
  void theIngestionsWriteFiguresAreOnMetricsAndMove() throws Exception {
    try (KafkaTestBroker broker = KafkaTestBroker.start(1, "km-events", "km-dlq", "km-trajectories", "km-updates");
        TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
                "agentscope.training.kafka.enabled", true,
                "agentscope.training.kafka.bootstrap-servers", broker.bootstrapServers(),
                "agentscope.training.kafka.group-id", "km-group",
                "agentscope.training.kafka.topics.agent-events", "km-events",
                "agentscope.training.kafka.topics.dead-letter", "km-dlq",
                "agentscope.training.kafka.topics.trajectories", "km-trajectories",
                "agentscope.training.kafka.topics.model-updates", "km-updates"))
            .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-kafka-metrics-")), true)))) {
      Http http = new Http(node.httpPort());
      String before = http.get("/metrics").body();
      for (String name : COUNTERS) {
        assertTrue(before.contains("# TYPE " + name + " counter\n"), name + " is a counter:\n" + before);
        assertEquals(Optional.of(0.0), value(before, name), name + " starts at 0");
      }
      for (String name : GAUGES) {
        assertTrue(before.contains("# TYPE " + name + " gauge\n"), name + " is a gauge:\n" + before);
        assertEquals(Optional.of(0.0), value(before, name), name + " starts at 0");
      }
      assertTrue(before.contains("# TYPE otl_kafka_write_timeout_retries_total counter\n"), before);
      String common = "\"sessionId\":\"km-1\",\"agentId\":\"km-agent\"";
      List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
      records.add(KafkaTestBroker.record("km-events", "km-1",
          "{\"type\":\"start\",\"eventId\":\"e0\",\"agentVersion\":\"1.0\"," + common + "}"));
      for (int e = 1; e <= 4; e++) {
        records.add(KafkaTestBroker.record("km-events", "km-1", "{\"type\":\"message\",\"eventId\":\"e" + e
            + "\",\"role\":\"user\",\"content\":\"question " + e + "\"," + common + "}"));
      }
      broker.produce(records);
      // Bounded: the records are stored once the consumer joined its group and the session wrote them.
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(90);
      String after = http.get("/metrics").body();
      while (value(after, "otl_kafka_records_recorded_total").orElse(0.0) < 5 && System.nanoTime() < deadline) {
        Thread.sleep(200);
        after = http.get("/metrics").body();
      }
      assertEquals(Optional.of(5.0), value(after, "otl_kafka_records_recorded_total"), after);
      assertTrue(value(after, "otl_kafka_batches_total").orElseThrow() >= 1, after);
      assertTrue(value(after, "otl_kafka_writes_total").orElseThrow() >= 1, after);
      assertEquals(Optional.of(5.0), value(after, "otl_kafka_write_records_total"), after);
      assertTrue(value(after, "otl_kafka_write_seconds_total").orElseThrow() > 0, after);
      assertTrue(value(after, "otl_kafka_record_wait_seconds_total").orElseThrow()
          >= value(after, "otl_kafka_record_in_write_seconds_total").orElseThrow(), after);
      assertTrue(value(after, "otl_kafka_record_in_write_seconds_total").orElseThrow() > 0, after);
      // Once stored and committed nothing is held, written or busy any more.
      while (GAUGES.stream().anyMatch(g -> value(http.get("/metrics").body(), g).orElse(-1.0) != 0.0)
          && System.nanoTime() < deadline) {
        Thread.sleep(200);
      }
      String settled = http.get("/metrics").body();
      for (String name : GAUGES) assertEquals(Optional.of(0.0), value(settled, name), name + ":\n" + settled);
    }
  }

  /** The value of an unlabelled series in the exposition. */
  private static Optional<Double> value(String exposition, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\S+)$").matcher(exposition);
    return m.find() ? Optional.of(Double.parseDouble(m.group(1))) : Optional.empty();
  }
}
