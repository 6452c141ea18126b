package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka door takes the AgentScope article's feedback names ({@code USER_RATING},
 * {@code POSITIVE}, {@code NEGATIVE}) like HTTP and Java do, and the journal holds our kinds; an
 * unknown kind is still dead-lettered; feedback is keyed by its feedbackId as on the other doors.
 */
class KafkaFeedbackAliasTest {
  private static String feedback(String eventId, String kind, String value) {
    return "{\"type\":\"feedback\",\"eventId\":\"" + eventId + "\",\"sessionId\":\"alias-1\",\"agentId\":\"agent-a\","
        + "\"kind\":\"" + kind + "\",\"feedbackId\":\"" + eventId + "\"" + (value == null ? "" : ",\"value\":" + value)
        + "}";
  }

  @Test
  void articleKindsAreStoredUnderOurs(@TempDir Path dir) throws Exception {
    try (KafkaTestBroker broker = KafkaTestBroker.start(1, "ae-alias", "dlq-alias");
        TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-alias", "topics.agent-events", "ae-alias", "topics.dead-letter", "dlq-alias")));
      broker.produce(List.of(
          KafkaTestBroker.record("ae-alias", "alias-1", "{\"type\":\"message\",\"eventId\":\"m1\",\"sessionId\":"
              + "\"alias-1\",\"agentId\":\"agent-a\",\"role\":\"user\",\"content\":\"hi\"}"),
          KafkaTestBroker.record("ae-alias", "alias-1", feedback("f1", "USER_RATING", "4")),
          KafkaTestBroker.record("ae-alias", "alias-1", feedback("f2", "POSITIVE", null)),
          KafkaTestBroker.record("ae-alias", "alias-1", feedback("f3", "LIKE", null)),
          KafkaTestBroker.record("ae-alias", "alias-1", feedback("f4", "NEGATIVE", null))));
      KafkaIngestTest.await("three feedbacks and one dead letter", () -> ingest.deadLettered() == 1
          && trajectory(node).map(s -> s.feedback().size() == 3).orElse(false));
      AgentSession.State s = trajectory(node).orElseThrow();
      assertEquals(List.of("RATING", "THUMBS_UP", "THUMBS_DOWN"),
          s.feedback().stream().map(f -> f.kind().name()).toList());
      assertEquals(4.0, s.feedback().get(0).value());
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Feedback is keyed by its feedbackId on every door (trial t105): a rating recorded through the Java
   * API (or POST …/feedback, which carry no eventId) and then sent as a Kafka record with an eventId of
   * its own is acknowledged as a duplicate, not stored and counted in the reward a second time.
   */
  @Test
  void aFeedbackIdAlreadyRecordedByAnotherDoorIsADuplicateOnKafka(@TempDir Path dir) throws Exception {
    try (KafkaTestBroker broker = KafkaTestBroker.start(1, "ae-fbid", "dlq-fbid");
        TestNode node = TestNode.start(TestNode.h2(dir))) {
      node.collector.record("alias-1", "agent-a", List.of(new io.otl.core.session.SessionInput.Message(
          "m1", null, "user", "hi", null, null))).toCompletableFuture().get(10, TimeUnit.SECONDS);
      node.collector.feedback("alias-1", "agent-a", "RATING", 5.0, "fb-shared").toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-fbid", "topics.agent-events", "ae-fbid", "topics.dead-letter", "dlq-fbid")));
      broker.produce(List.of(KafkaTestBroker.record("ae-fbid", "alias-1", "{\"type\":\"feedback\",\"eventId\":"
          + "\"kafka-evt-1\",\"sessionId\":\"alias-1\",\"agentId\":\"agent-a\",\"kind\":\"RATING\",\"value\":5,"
          + "\"feedbackId\":\"fb-shared\"}")));
      KafkaIngestTest.await("the record read", () -> ingest.duplicates() + ingest.recorded() == 1);
      assertEquals(1, ingest.duplicates());
      assertEquals(1, trajectory(node).orElseThrow().feedback().size());
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static java.util.Optional<AgentSession.State> trajectory(TestNode node) throws Exception {
    return node.collector.trajectory("alias-1").toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
