package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.otl.core.api.DataCollector;
import io.otl.core.api.KeyLikeIds;
import io.otl.persistence.JournalDirectory;
import io.otl.persistence.JournalSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial t167, the Kafka door of "a new session or agent id holding a provider's API key is refused
 * without repeating it": with the node's check wired as TrainingNode wires it, records keyed by such an
 * id, naming such an agent, or keyed by one beside another {@code sessionId} are dead-lettered, the good
 * record beside them is stored, and neither the journal, the {@code otl-error} headers nor the ingest's
 * log lines hold the key. Keys are assembled at run time: no key-shaped literal in the source.
 */
class KafkaKeyLikeIdsTest {
  private static final String IN = "ae-keys";
  private static final String DLQ = "dlq-keys";
  private static final String KEY = "sk-" + "proj-" + "AbCdEf1234567890GhIjKlMnOpQrStUv" + "WxYz0987";
  private static final String KEY_BODY = KEY.substring(8);
  private static KafkaTestBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaTestBroker.start(1, IN, DLQ);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) broker.close();
  }

  private static String event(String sessionField, String agentId, String content) {
    return "{\"type\":\"message\",\"role\":\"user\",\"eventId\":\"e1\",\"agentId\":\"" + agentId + "\"" + sessionField
        + ",\"content\":\"" + content + "\"}";
  }

  @Test
  void recordsNamingANewIdHoldingAKeyAreDeadLetteredWithoutIt(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir));
        LoggedLines logged = new LoggedLines(KafkaIngest.class)) {
      var directory = new JournalDirectory(node.journal, Executors.newSingleThreadExecutor());
      DataCollector collector = new DataCollector(node.sharding, Duration.ofSeconds(10), new KeyLikeIds(directory::exists));
      KafkaIngest ingest = KafkaIngest.start(node.system, collector, node.kafka(broker, Map.of(
          "group-id", "group-keys", "topics.agent-events", IN, "topics.dead-letter", DLQ)));
      broker.produce(List.of(
          KafkaTestBroker.record(IN, KEY, event("", "agent-k", "keyed")),
          KafkaTestBroker.record(IN, "hk-1", event(",\"sessionId\":\"hk-1\"", KEY, "agent key")),
          KafkaTestBroker.record(IN, KEY, event(",\"sessionId\":\"hk-2\"", "agent-k", "mismatch")),
          KafkaTestBroker.record(IN, "hk-3", event(",\"sessionId\":\"hk-3\"", "agent-k", "good"))));

      List<ConsumerRecord<String, String>> dead = broker.readAll(DLQ, 3, Duration.ofSeconds(60), Duration.ofSeconds(2));
      assertEquals(3, dead.size(), "each refused record dead-lettered once");
      Map<String, String> codes = new HashMap<>();
      for (ConsumerRecord<String, String> letter : dead) {
        String reason = KafkaTestBroker.header(letter, KafkaIngest.ERROR_HEADER);
        assertNotNull(reason, "otl-error");
        assertFalse(reason.contains(KEY_BODY), "otl-error repeats the key: " + reason);
        String which = letter.value().contains("mismatch") ? "mismatch" : letter.value().contains("agent key") ? "agent" : "session";
        codes.put(which, KafkaTestBroker.header(letter, KafkaIngest.ERROR_CODE_HEADER));
      }
      assertEquals(Map.of("session", "invalid", "agent", "invalid", "mismatch", "session_mismatch"), codes);

      KafkaIngestTest.await("the good record stored", () -> ingest.recorded() >= 1);
      assertEquals(List.of("good"), collector.trajectory("hk-3").toCompletableFuture().get(10, TimeUnit.SECONDS)
          .orElseThrow().messages().stream().map(m -> m.content()).toList());
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
      for (String line : logged.lines()) assertFalse(line.contains(KEY_BODY), "logged: " + line);
      try (Connection c = JournalSchema.connect(node.journal);
          PreparedStatement rows = c.prepareStatement("SELECT \"persistence_id\", \"event_payload\" FROM \"event_journal\"");
          ResultSet rs = rows.executeQuery()) {
        while (rs.next()) {
          assertFalse(rs.getString(1).contains(KEY_BODY), "journaled under " + rs.getString(1));
          assertFalse(new String(rs.getBytes(2), StandardCharsets.UTF_8).contains(KEY_BODY), "journaled in " + rs.getString(1));
        }
      }
    }
  }
}
