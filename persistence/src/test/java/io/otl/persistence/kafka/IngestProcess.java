package io.otl.persistence.kafka;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.Map;

/**
 * A node ingesting from Kafka in a JVM of its own, for the crash test: {@code IngestProcess
 * <journal dir> <bootstrap servers> <topic> <dead-letter topic> <group>}. Prints {@code recorded
 * <n>, restarts <r>} every second; runs until killed.
 */
public final class IngestProcess {
  private IngestProcess() {}

  public static void main(String[] args) throws Exception {
    TestNode node = TestNode.start(TestNode.h2(Path.of(args[0])));
    KafkaSettings settings = KafkaSettings.fromConfig(ConfigFactory.parseMap(crashSettings(args[2], args[3], args[4]))
            .atPath("kafka").withFallback(node.training))
        .withBootstrapServers(args[1]);
    KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings);
    System.out.println("INGESTING");
    while (true) {
      Thread.sleep(200);
      System.out.println("recorded " + ingest.recorded() + ", restarts " + ingest.restarts());
    }
  }

  /** A short consumer session, so the group notices a killed member within seconds. */
  static Map<String, Object> crashSettings(String topic, String deadLetter, String group) {
    return Map.of(
        "group-id", group,
        "topics.agent-events", topic,
        "topics.dead-letter", deadLetter,
        "client.\"session.timeout.ms\"", "6000",
        "client.\"heartbeat.interval.ms\"", "1000");
  }
}
