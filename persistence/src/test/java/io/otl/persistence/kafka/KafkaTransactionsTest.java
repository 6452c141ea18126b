package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer writing {@code agent-events} in Kafka transactions (Kafka Streams or Flink with
 * exactly-once, a transactional outbox): what it aborted was never sent, so no session may store
 * it. Before trial t72 the ingest consumer read with Kafka's default {@code read_uncommitted}, and
 * an aborted record became a session event (training data) like a committed one.
 */
class KafkaTransactionsTest {
  private static final String IN = "ae-tx";
  private static final String DLQ = "dlq-tx";
  private static KafkaTestBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    // One partition: once the record sent after both transactions is stored, both were read past.
    broker = KafkaTestBroker.start(1, IN, DLQ);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) broker.close();
  }

  @Test
  void anAbortedTransactionsRecordsAreNotStoredAndACommittedOnesAre(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-tx", "topics.agent-events", IN, "topics.dead-letter", DLQ)));
      try (KafkaProducer<String, String> tx = transactional()) {
        tx.initTransactions();
        tx.beginTransaction();
        tx.send(new ProducerRecord<>(IN, "tx-aborted-1", message("tx-aborted-1", "m1"))).get(30, TimeUnit.SECONDS);
        tx.send(new ProducerRecord<>(IN, "tx-aborted-1", message("tx-aborted-1", "m2"))).get(30, TimeUnit.SECONDS);
        tx.abortTransaction();
        tx.beginTransaction();
        tx.send(new ProducerRecord<>(IN, "tx-committed-1", message("tx-committed-1", "m1"))).get(30, TimeUnit.SECONDS);
        tx.commitTransaction();
      }
      broker.produce(List.of(KafkaTestBroker.record(IN, "tx-after-1", message("tx-after-1", "m1"))));
      // The counters follow the journal's acknowledgement: wait for both, the row and the count. A
      // first write on a cold node may time out and be sent again, and the resend is then counted
      // as a duplicate of what the first stored: so the two counters together.
      KafkaIngestTest.await("the record after both transactions stored and counted",
          () -> node.rows("AgentSession|tx-after-") >= 1 && ingest.recorded() + ingest.duplicates() >= 2);

      assertEquals(0, node.rows("AgentSession|tx-aborted-"), "the aborted transaction's records are not stored");
      assertTrue(node.rows("AgentSession|tx-committed-") >= 1, "the committed transaction's record is stored");
      assertEquals(2, ingest.recorded() + ingest.duplicates(), "read: the committed record and the one after it");
      assertEquals(0, ingest.deadLettered(), "an aborted record is not read at all, so not dead-lettered either");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static KafkaProducer<String, String> transactional() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "t72-tx-producer");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static String message(String session, String eventId) {
    return "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"eventId\":\"" + eventId
        + "\",\"sessionId\":\"" + session + "\",\"agentId\":\"agent-1\"}";
  }
}
