package io.otl.persistence.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.slf4j.Logger;

/**
 * "Topics must exist" (docs/api.md): asks the broker whether the topics a stream uses exist before
 * the stream starts, and fails the attempt naming each missing topic and its key, or naming the
 * broker when it did not answer; the stream's restart back-off asks again. Without it a missing
 * topic showed only as the Kafka client's warnings about once a second, and for the publishers a
 * restart a minute later that named no key. Once the broker has confirmed the topics the check
 * passes at once: a restart after a journal timeout or a broker blip need not open another Admin
 * client. A broker that does not let this client describe topics is left to the stream. An
 * owner that meets a topic gone under it after all (a dead-letter send that failed) calls {@link
 * #askAgain()}: the next attempt asks the broker again and names the topic if it is missing.
 */
final class KafkaTopicCheck {
  /** How long the check waits for the broker's answer before the attempt fails and is retried. */
  static final Duration WAIT = Duration.ofSeconds(15);

  private final ActorSystem<?> system;
  private final KafkaSettings settings;
  private final Map<String, String> keys;
  private final String startsWhenCreated;
  private final String waitsForBroker;
  private final Logger log;
  private final AtomicLong checks = new AtomicLong();
  private volatile boolean confirmed;

  /**
   * @param keys each topic and the key that names it, e.g. {@code kafka.topics.agent-events}
   * @param startsWhenCreated what happens once a missing topic exists ("ingestion starts once it exists")
   * @param waitsForBroker what waits while the broker does not answer ("agent-events is not consumed")
   * @param log the owner's logger, which operators filter on
   */
  KafkaTopicCheck(ActorSystem<?> system, KafkaSettings settings, Map<String, String> keys, String startsWhenCreated,
      String waitsForBroker, Logger log) {
    this.system = system;
    this.settings = settings;
    this.keys = new LinkedHashMap<>(keys);
    this.startsWhenCreated = startsWhenCreated;
    this.waitsForBroker = waitsForBroker;
    this.log = log;
  }

  /** How often the broker was asked (an Admin client each time). */
  long checks() {
    return checks.get();
  }

  /**
   * The next {@link #run()} asks the broker again: a send to a confirmed topic failed (trial t36: the
   * dead-letter topic deleted under a running node stalled every partition, each restart going
   * straight back to the same record and a two-minute delivery timeout, naming nothing).
   */
  void askAgain() {
    confirmed = false;
  }

  /** Completes when the topics exist (or the broker would not say); fails naming what is wrong. */
  CompletionStage<Done> run() {
    if (confirmed) return CompletableFuture.completedFuture(Done.getInstance());
    return CompletableFuture.supplyAsync(this::ask, system.dispatchers().lookup(DispatcherSelector.blocking()));
  }

  private Done ask() {
    Map<String, Object> props = new HashMap<>(settings.client());
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
    List<String> missing = new ArrayList<>();
    boolean timedOut = false;
    boolean answered = false;
    checks.incrementAndGet();
    Admin admin = null;
    try {
      admin = Admin.create(props);
      var described = admin.describeTopics(keys.keySet(), new DescribeTopicsOptions().timeoutMs(10_000))
          .topicNameValues();
      for (var e : described.entrySet()) {
        try {
          e.getValue().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException x) {
          if (x.getCause() instanceof UnknownTopicOrPartitionException) {
            missing.add("'" + e.getKey() + "' (agentscope.training." + keys.get(e.getKey()) + ")");
          } else if (x.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
            timedOut = true;
          }
        } catch (TimeoutException x) {
          timedOut = true; // no broker to ask: the admin client waits for one past the call's timeoutMs
          break;
        }
      }
      answered = !timedOut;
    } catch (Exception unanswered) {
      // the stream meets the same broker and fails or waits as it always did
    } finally {
      // close() would otherwise wait up to a minute for the calls still waiting for a broker
      if (admin != null) admin.close(Duration.ofSeconds(1));
    }
    if (!missing.isEmpty()) {
      // Both of the ingest's topics missing (a first start) read "topic 'a' and 'b' does not exist:
      // create it" before trial t72: one topic is "it", two are "them".
      String message = missing.size() == 1
          ? "Kafka topic " + missing.get(0) + " does not exist on " + settings.bootstrapServers() + ": create it; "
              + startsWhenCreated
          : "Kafka topics " + String.join(" and ", missing) + " do not exist on " + settings.bootstrapServers()
              + ": create them; " + startsWhenCreated.replace("once it exists", "once they exist");
      log.error(message);
      throw new RestartLogging.Said(message);
    }
    // Only an answer settles it: a broker away at start is asked again on the next restart, so a
    // topic missing there is still named once the broker is back.
    if (timedOut) {
      String message = "Kafka broker " + settings.bootstrapServers() + " did not answer within " + WAIT.toSeconds()
          + " s: " + waitsForBroker + " until it does; asking again with the restart back-off"
          + " (agentscope.training.kafka.restart.*)";
      log.warn(message);
      throw new RestartLogging.Said(message);
    }
    if (answered) confirmed = true;
    return Done.getInstance();
  }
}
