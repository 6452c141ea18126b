package io.otl.persistence.kafka;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

/**
 * {@code agentscope.training.kafka} (defaults and one comment per key in {@code kafka.conf}).
 *
 * @param client Kafka client properties handed verbatim to every consumer and producer; {@link
 *     #toString()} masks the values of secret-looking keys
 * @param groupInstanceId the ingest consumer's static group membership id ({@code group.instance.id});
 *     empty in the config means "derive it from the node's cluster address" (io.otl.node.TrainingNode)
 * @param sessionTimeout the ingest consumer's {@code session.timeout.ms}
 */
public record KafkaSettings(
    boolean enabled,
    String bootstrapServers,
    String groupId,
    Topics topics,
    int parallelism,
    int ingestBatchSize,
    Duration ingestBatchWindow,
    int commitMaxBatch,
    Duration commitMaxInterval,
    int publishOffsetBatch,
    Duration publishOffsetInterval,
    Duration restartMinBackoff,
    Duration restartMaxBackoff,
    Map<String, String> client,
    String groupInstanceId,
    Duration sessionTimeout) {

  /** Config path below {@code agentscope.training}. */
  public static final String PATH = "kafka";

  /** What {@code group-instance-id} may be when it is set (Kafka's static member ids, one per node). */
  public static final String GROUP_INSTANCE_ID = "[A-Za-z0-9._:-]{1,249}";

  /** Appended to {@code topics.agent-events} when {@code topics.dead-letter} is left empty. */
  public static final String DEAD_LETTER_SUFFIX = ".dlq";

  public record Topics(String agentEvents, String deadLetter, String trajectories, String modelUpdates) {}

  public KafkaSettings {
    client = Collections.unmodifiableMap(new LinkedHashMap<>(client));
  }

  /**
   * Reads {@code kafka} below {@code agentscope.training}.
   *
   * @throws IllegalArgumentException naming the key and the allowed values
   */
  public static KafkaSettings fromConfig(Config agentscopeTraining) {
    Config k = agentscopeTraining.getConfig(PATH);
    try {
      String agentEvents = topic(k, "topics.agent-events");
      // Derived from the input by default: a renamed input topic with a fixed "agent-events.dlq"
      // sent its bad records to the dead letters of another input (another environment's).
      String deadLetter = k.getString("topics.dead-letter").isBlank()
          ? agentEvents + DEAD_LETTER_SUFFIX
          : topic(k, "topics.dead-letter");
      Topics topics = new Topics(agentEvents, deadLetter,
          topic(k, "topics.trajectories"), topic(k, "topics.model-updates"));
      String bootstrap = k.getString("bootstrap-servers").trim();
      if (bootstrap.isEmpty()) throw bad("bootstrap-servers", bootstrap, "a non-empty host:port list");
      String group = k.getString("group-id").trim();
      if (group.isEmpty()) throw bad("group-id", group, "a non-empty consumer group id");
      Duration minBackoff = positive(k, "restart.min-backoff");
      Duration maxBackoff = positive(k, "restart.max-backoff");
      if (maxBackoff.compareTo(minBackoff) < 0) {
        throw bad("restart.max-backoff", maxBackoff, "a duration >= restart.min-backoff (" + minBackoff + ")");
      }
      Map<String, String> client = new LinkedHashMap<>();
      Map<String, String> sorted = new TreeMap<>();
      for (Map.Entry<String, ConfigValue> e : k.getConfig("client").entrySet()) {
        // A key written quoted ("sasl.jaas.config") comes back as a quoted path; unquote it.
        sorted.put(e.getKey().replace("\"", ""), String.valueOf(e.getValue().unwrapped()));
      }
      client.putAll(sorted);
      String instance = k.getString("group-instance-id").trim();
      if (!instance.isEmpty() && !instance.matches(GROUP_INSTANCE_ID)) {
        throw bad("group-instance-id", instance, "empty (derived from the cluster address) or 1-249 characters of "
            + "[A-Za-z0-9._:-], unique per node");
      }
      Duration session = positive(k, "session-timeout");
      if (session.compareTo(Duration.ofSeconds(6)) < 0 || session.compareTo(Duration.ofMinutes(5)) > 0) {
        throw bad("session-timeout", session, "a duration from 6s to 5m (the brokers' default "
            + "group.min/max.session.timeout.ms)");
      }
      return new KafkaSettings(k.getBoolean("enabled"), bootstrap, group, topics, atLeastOne(k, "parallelism"),
          atLeastOne(k, "ingest.batch-size"), positive(k, "ingest.batch-window"),
          atLeastOne(k, "commit.max-batch"), positive(k, "commit.max-interval"),
          atLeastOne(k, "publish.offset-batch"), positive(k, "publish.offset-interval"),
          minBackoff, maxBackoff, client, instance, session);
    } catch (ConfigException e) {
      throw new IllegalArgumentException("agentscope.training.kafka: " + e.getMessage(), e);
    }
  }

  /** The same settings talking to other brokers (tests, tools). */
  public KafkaSettings withBootstrapServers(String servers) {
    return new KafkaSettings(enabled, servers, groupId, topics, parallelism, ingestBatchSize, ingestBatchWindow,
        commitMaxBatch, commitMaxInterval, publishOffsetBatch, publishOffsetInterval, restartMinBackoff,
        restartMaxBackoff, client, groupInstanceId, sessionTimeout);
  }

  /** The same settings with another restart back-off (tests). */
  public KafkaSettings withRestartBackoff(Duration min, Duration max) {
    return new KafkaSettings(enabled, bootstrapServers, groupId, topics, parallelism, ingestBatchSize,
        ingestBatchWindow, commitMaxBatch, commitMaxInterval, publishOffsetBatch, publishOffsetInterval, min, max,
        client, groupInstanceId, sessionTimeout);
  }

  /** The same settings with this static group membership id (empty: dynamic membership). */
  public KafkaSettings withGroupInstanceId(String id) {
    return new KafkaSettings(enabled, bootstrapServers, groupId, topics, parallelism, ingestBatchSize,
        ingestBatchWindow, commitMaxBatch, commitMaxInterval, publishOffsetBatch, publishOffsetInterval,
        restartMinBackoff, restartMaxBackoff, client, id, sessionTimeout);
  }

  /**
   * The default static membership id of a node: its cluster address, unique among running members and
   * the same across its restarts (a node on an OS-chosen port gets a new one each start, which only
   * costs it the fast resume).
   */
  public static String derivedGroupInstanceId(String host, int port) {
    return ("otl-" + host + "-" + port).replaceAll("[^A-Za-z0-9._:-]", "_");
  }

  /**
   * The client settings Kafka itself types as passwords, whatever their name: {@code ssl.keystore.key}
   * holds a PEM private key and was printed whole in the node's "Kafka ingestion … started" line.
   */
  private static final java.util.Set<String> KAFKA_PASSWORDS = kafkaPasswords();

  private static java.util.Set<String> kafkaPasswords() {
    java.util.Set<String> out = new java.util.HashSet<>();
    for (ConfigDef def : java.util.List.of(ConsumerConfig.configDef(), ProducerConfig.configDef(),
        AdminClientConfig.configDef())) {
      def.configKeys().forEach((name, key) -> {
        if (key.type == ConfigDef.Type.PASSWORD) out.add(name);
      });
    }
    return java.util.Set.copyOf(out);
  }

  /** True for client keys whose values must never be logged. */
  public static boolean isSecretKey(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    return KAFKA_PASSWORDS.contains(key) || k.contains("password") || k.contains("secret") || k.contains("jaas");
  }

  /** The client properties with secret values replaced by {@code ***}, for logs and messages. */
  public Map<String, String> clientForLogs() {
    Map<String, String> out = new LinkedHashMap<>();
    client.forEach((key, value) -> out.put(key, isSecretKey(key) ? "***" : value));
    return out;
  }

  @Override
  public String toString() {
    return "KafkaSettings[enabled=" + enabled + ", bootstrap-servers=" + bootstrapServers + ", group-id=" + groupId
        + ", group-instance-id=" + groupInstanceId + ", session-timeout=" + sessionTimeout
        + ", " + topics + ", parallelism=" + parallelism + ", client=" + clientForLogs() + "]";
  }

  private static String topic(Config k, String key) {
    String t = k.getString(key).trim();
    if (t.isEmpty() || t.length() > 249 || !t.matches("[A-Za-z0-9._-]+")) {
      throw bad(key, t, "a Kafka topic name (1-249 characters of [A-Za-z0-9._-])");
    }
    return t;
  }

  private static int atLeastOne(Config k, String key) {
    int v = k.getInt(key);
    if (v < 1) throw bad(key, v, "an integer >= 1");
    return v;
  }

  private static Duration positive(Config k, String key) {
    Duration d = k.getDuration(key);
    if (d.isNegative() || d.isZero()) throw bad(key, d, "a duration > 0, e.g. 1s");
    return d;
  }

  private static IllegalArgumentException bad(String key, Object value, String allowed) {
    return new IllegalArgumentException("agentscope.training.kafka." + key + " = " + value + ": expected " + allowed);
  }
}
