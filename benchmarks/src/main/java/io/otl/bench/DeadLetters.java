package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Everything on the dead-letter topic at the end of a run, by event id, with the reason the node gave
 * ({@code otl-error-code}: {@code otl-error}). A record the node refused is on this topic, not in a
 * session: a run that compared only sessions with the producer's acknowledgements would count it as
 * lost (issue #22 diagnosis), so R4 reports it as its own figure.
 */
final class DeadLetters {
  /** eventId → "code: reason" (the last one when a record was dead-lettered twice). */
  final Map<String, String> byEventId = new HashMap<>();
  /** otl-error-code → count. */
  final Map<String, Long> byCode = new TreeMap<>();
  long records;

  private DeadLetters() {}

  static DeadLetters read(String bootstrap, String topic, Duration bound) {
    DeadLetters out = new DeadLetters();
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = new ArrayList<>();
      for (PartitionInfo pi : c.partitionsFor(topic, bound)) parts.add(new TopicPartition(topic, pi.partition()));
      c.assign(parts);
      c.seekToBeginning(parts);
      Map<TopicPartition, Long> ends = c.endOffsets(parts, bound);
      long deadline = System.nanoTime() + bound.toNanos();
      while (System.nanoTime() < deadline && parts.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))) {
        for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(500))) {
          out.records++;
          String code = header(r, "otl-error-code");
          out.byCode.merge(code, 1L, Long::sum);
          String eventId = "?";
          try {
            JsonNode v = EventGen.JSON.readTree(new String(r.value(), StandardCharsets.UTF_8));
            eventId = v.path("eventId").asText("?");
          } catch (Exception notJson) {
            // the eventId stays unknown; the code and reason still count
          }
          out.byEventId.put(eventId, code + ": " + header(r, "otl-error"));
        }
      }
    }
    return out;
  }

  private static String header(ConsumerRecord<String, byte[]> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? "?" : new String(h.value(), StandardCharsets.UTF_8);
  }
}
