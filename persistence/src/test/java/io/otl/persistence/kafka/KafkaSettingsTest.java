package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** agentscope.training.kafka: defaults from kafka.conf, client pass-through, secrets kept out of logs. */
class KafkaSettingsTest {
  private static KafkaSettings read(String hocon) {
    Config c = ConfigFactory.parseString(hocon)
        .withFallback(ConfigFactory.parseResources("kafka.conf"))
        .resolve();
    return KafkaSettings.fromConfig(c.getConfig("agentscope.training"));
  }

  @Test
  void defaultsAreThoseOfKafkaConf() {
    KafkaSettings s = read("");
    assertFalse(s.enabled());
    assertEquals(System.getenv("OTL_KAFKA_BOOTSTRAP") != null ? System.getenv("OTL_KAFKA_BOOTSTRAP") : "localhost:9092",
        s.bootstrapServers());
    assertEquals("otl-ingest", s.groupId());
    assertEquals(new KafkaSettings.Topics("agent-events", "agent-events.dlq", "trajectories", "model-updates"),
        s.topics());
    assertEquals(64, s.parallelism());
    assertEquals(2000, s.ingestBatchSize());
    assertEquals(1000, s.commitMaxBatch());
    assertEquals(Duration.ofSeconds(1), s.commitMaxInterval());
    assertEquals(Duration.ofSeconds(1), s.restartMinBackoff());
    assertEquals(Duration.ofSeconds(30), s.restartMaxBackoff());
    assertTrue(s.client().isEmpty());
  }

  /**
   * A renamed input topic kept the fixed default "agent-events.dlq", so its bad records went to the
   * dead letters of another input (found by the operator trial: prod.agent-events on a shared broker).
   */
  @Test
  void theDeadLetterTopicFollowsARenamedInputTopicUnlessNamed() {
    assertEquals("prod.agent-events.dlq",
        read("agentscope.training.kafka.topics.agent-events = prod.agent-events").topics().deadLetter());
    assertEquals("bad-records", read("""
        agentscope.training.kafka.topics { agent-events = prod.agent-events, dead-letter = bad-records }
        """).topics().deadLetter());
    var bad = assertThrows(IllegalArgumentException.class,
        () -> read("agentscope.training.kafka.topics.dead-letter = \"a b\""));
    assertTrue(bad.getMessage().contains("topics.dead-letter"), bad.getMessage());
  }

  @Test
  void staticMembershipIsDerivedByDefaultAndTheSessionTimeoutIsTenSeconds() {
    KafkaSettings s = read("");
    assertEquals(System.getenv("OTL_KAFKA_GROUP_INSTANCE_ID") == null ? "" : System.getenv("OTL_KAFKA_GROUP_INSTANCE_ID"),
        s.groupInstanceId(), "empty: the node derives it from its cluster address");
    assertEquals(Duration.ofSeconds(10), s.sessionTimeout());
    assertEquals("otl-10.0.0.7-25520", KafkaSettings.derivedGroupInstanceId("10.0.0.7", 25520));
    assertEquals("otl-node_1.example-25520", KafkaSettings.derivedGroupInstanceId("node 1.example", 25520));
    assertEquals("node-a", read("agentscope.training.kafka.group-instance-id = node-a").groupInstanceId());
    var bad = assertThrows(IllegalArgumentException.class,
        () -> read("agentscope.training.kafka.session-timeout = 2s"));
    assertTrue(bad.getMessage().contains("agentscope.training.kafka.session-timeout"), bad.getMessage());
    bad = assertThrows(IllegalArgumentException.class,
        () -> read("agentscope.training.kafka.group-instance-id = \"a b\""));
    assertTrue(bad.getMessage().contains("group-instance-id"), bad.getMessage());
  }

  @Test
  void clientPropertiesPassVerbatimAndSecretsNeverReachToString() {
    KafkaSettings s = read("""
        agentscope.training.kafka.client {
          security.protocol = SASL_SSL
          sasl.mechanism = PLAIN
          "sasl.jaas.config" = "org.apache.kafka.common.security.plain.PlainLoginModule required password=\\"hunter2\\";"
          ssl.truststore.password = "s3cret"
        }
        """);
    assertEquals("SASL_SSL", s.client().get("security.protocol"));
    assertEquals("PLAIN", s.client().get("sasl.mechanism"));
    assertTrue(s.client().get("sasl.jaas.config").contains("hunter2"));
    assertEquals("s3cret", s.client().get("ssl.truststore.password"));
    assertFalse(s.toString().contains("hunter2"), s.toString());
    assertFalse(s.toString().contains("s3cret"), s.toString());
    assertTrue(s.toString().contains("security.protocol=SASL_SSL"), s.toString());
  }

  /** A PEM private key given inline (Kafka types it a password) was printed whole at ingest start. */
  @Test
  void kafkasOwnPasswordSettingsAreMaskedWhateverTheirName() {
    KafkaSettings s = read("""
        agentscope.training.kafka.client {
          security.protocol = SSL
          ssl.keystore.type = PEM
          "ssl.keystore.key" = "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBg-----END PRIVATE KEY-----"
        }
        """);
    assertTrue(s.client().get("ssl.keystore.key").contains("MIIEvQIBADANBg"), "handed to the client verbatim");
    assertFalse(s.toString().contains("MIIEvQIBADANBg"), s.toString());
    assertTrue(s.toString().contains("ssl.keystore.type=PEM"), s.toString());
  }

  @Test
  void wrongValuesNameTheKey() {
    var e = assertThrows(IllegalArgumentException.class, () -> read("agentscope.training.kafka.parallelism = 0"));
    assertTrue(e.getMessage().contains("agentscope.training.kafka.parallelism"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> read("agentscope.training.kafka.topics.agent-events = \"no spaces\""));
    assertTrue(e.getMessage().contains("topics.agent-events"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> read("agentscope.training.kafka.restart { min-backoff = 10s, max-backoff = 1s }"));
    assertTrue(e.getMessage().contains("restart.max-backoff"), e.getMessage());
  }
}
