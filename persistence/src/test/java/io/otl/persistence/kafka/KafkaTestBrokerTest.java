package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test broker itself: serves, and survives a stop and start of its broker in place. */
class KafkaTestBrokerTest {
  @Test
  void brokerRestartsInPlaceAndKeepsItsRecords() throws Exception {
    try (KafkaTestBroker broker = KafkaTestBroker.start(2, "probe")) {
      broker.produce(List.of(KafkaTestBroker.record("probe", "k", "one")));
      broker.stopBroker();
      broker.startBroker();
      broker.produce(List.of(KafkaTestBroker.record("probe", "k", "two")));
      var read = broker.readAll("probe", 2, Duration.ofSeconds(30), Duration.ZERO);
      assertEquals(List.of("one", "two"), read.stream().map(r -> r.value()).toList());
    }
  }
}
