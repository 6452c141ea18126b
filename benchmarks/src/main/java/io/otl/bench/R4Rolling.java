package io.otl.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * R4's rolling restart (issue #22 item 3): each node in turn gets SIGTERM, as a deployment or a
 * supervisor sends it, and is started again once it has exited; the next node only after it is
 * ready. The HTTP and Kafka load of R4 keeps running, so R4's lost / duplicated checks at the end
 * cover it. Measured here: per node, SIGTERM to exit and SIGTERM to ready again; and whether Kafka
 * kept ingesting: the longest time the group's committed offsets did not move while the producer
 * kept sending (R4's producer sends every 50 ms, and a healthy group commits within a second).
 */
final class R4Rolling {
  private R4Rolling() {}

  static Map<String, Object> run(List<NodeJvm> nodes, KafkaBroker broker, String group, Duration ready)
      throws Exception {
    List<Double> stopSeconds = new ArrayList<>();
    List<Double> readySeconds = new ArrayList<>();
    CommitWatch watch = new CommitWatch(broker, group);
    watch.start();
    try {
      for (NodeJvm node : nodes) {
        long t0 = System.nanoTime();
        stopSeconds.add(node.stopGracefully(Duration.ofSeconds(60)) / 1000.0);
        node.start();
        node.awaitReady(ready);
        readySeconds.add((System.nanoTime() - t0) / 1e9);
        System.out.printf("R4 rolling restart: node on :%d stopped in %.1f s, ready again %.1f s after SIGTERM%n",
            node.httpPort, stopSeconds.get(stopSeconds.size() - 1), readySeconds.get(readySeconds.size() - 1));
      }
    } finally {
      watch.stop();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("stopSecondsEach", stopSeconds);
    out.put("readyAfterSigtermSecondsEach", readySeconds);
    out.put("kafkaLongestStallSeconds", watch.longestStallSeconds());
    System.out.printf("R4 rolling restart: Kafka's committed offsets stood still for at most %.1f s%n",
        watch.longestStallSeconds());
    return out;
  }

  /** Samples the group's committed offsets every 250 ms and keeps the longest gap between advances. */
  private static final class CommitWatch {
    private final KafkaBroker broker;
    private final String group;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private volatile long longestStallNanos;
    private Thread thread;

    CommitWatch(KafkaBroker broker, String group) {
      this.broker = broker;
      this.group = group;
    }

    void start() {
      thread = new Thread(() -> {
        try (Admin admin = broker.admin()) {
          long lastSum = -1;
          long lastAdvance = System.nanoTime();
          while (running.get()) {
            long now = System.nanoTime();
            long sum = committed(admin);
            if (sum > lastSum) {
              lastSum = sum;
              lastAdvance = now;
            }
            longestStallNanos = Math.max(longestStallNanos, now - lastAdvance);
            Thread.sleep(250);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (Exception e) {
          System.err.println("R4 rolling restart: offset watch failed: " + e);
          longestStallNanos = Long.MAX_VALUE;
        }
      }, "r4-commit-watch");
      thread.start();
    }

    private long committed(Admin admin) throws Exception {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
      return offsets.values().stream().filter(o -> o != null).mapToLong(OffsetAndMetadata::offset).sum();
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(TimeUnit.SECONDS.toMillis(40));
    }

    double longestStallSeconds() {
      return longestStallNanos == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : longestStallNanos / 1e9;
    }
  }
}
