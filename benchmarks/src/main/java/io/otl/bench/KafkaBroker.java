package io.otl.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A single-node KRaft broker in the benchmark JVM (KafkaClusterTestKit, design §10), with the
 * replication settings one node needs; loopback only. Topics are created up front.
 */
final class KafkaBroker implements AutoCloseable {
  /** The benchmark's producer's client id, so its network thread is told apart from the node's producers. */
  static final String BENCH_PRODUCER_ID = "bench-producer";
  private final KafkaClusterTestKit cluster;

  private KafkaBroker(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  static KafkaBroker start(int partitions, String... topics) throws Exception {
    int brokerPort = freePort();
    int controllerPort = freePort();
    TestKitNodes nodes = new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1)
        .setPerServerProperties(Map.of(0, Map.of(
            "listeners", "EXTERNAL://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort)))
        .build();
    KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "4")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("auto.create.topics.enable", "false")
        .build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
      KafkaBroker b = new KafkaBroker(cluster);
      b.createTopics(partitions, topics);
      return b;
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
  }

  String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
  }

  private void createTopics(int partitions, String... topics) throws Exception {
    try (Admin admin = admin()) {
      List<NewTopic> list = new ArrayList<>();
      for (String t : topics) list.add(new NewTopic(t, partitions, (short) 1));
      admin.createTopics(list).all().get(30, TimeUnit.SECONDS);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (true) {
        var d = admin.describeTopics(List.of(topics)).allTopicNames().get(30, TimeUnit.SECONDS);
        boolean ready = d.values().stream().allMatch(td -> td.partitions().size() == partitions
            && td.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0));
        if (ready) return;
        if (System.nanoTime() > deadline) throw new IllegalStateException("topics without a leader: " + d);
        Thread.sleep(100);
      }
    }
  }

  KafkaProducer<String, byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(ProducerConfig.CLIENT_ID_CONFIG, BENCH_PRODUCER_ID);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }
}
