package io.otl.persistence.kafka;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.model.ModelSettings;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * A node as TrainingNode assembles it, reduced to what Kafka needs (this module cannot see
 * cluster-config): a one-node cluster, the JDBC journal, AgentSession and ModelVersion sharded, a
 * DataCollector. Journal: an H2 file, or a fresh PostgreSQL schema.
 */
final class TestNode implements AutoCloseable {
  static final String PG_URL = env("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  static final String PG_USER = env("OTL_TEST_PG_USER", "postgres");
  static final String PG_PASSWORD = env("OTL_TEST_PG_PASSWORD", "");

  final ActorSystem<Void> system;
  final JournalSettings journal;
  final DataCollector collector;
  final ClusterSharding sharding;
  final Config training;

  private TestNode(ActorSystem<Void> system, JournalSettings journal, DataCollector collector,
      ClusterSharding sharding, Config training) {
    this.system = system;
    this.journal = journal;
    this.collector = collector;
    this.sharding = sharding;
    this.training = training;
  }

  /** Overrides selecting a journal in a new H2 file under {@code dir}. */
  static Config h2(Path dir) {
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath()
            + ";DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE;WRITE_DELAY=0"));
  }

  /** Overrides selecting a journal in a new PostgreSQL schema. */
  static Config postgres() throws Exception {
    String schema = "otl_kafka_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = java.sql.DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
    }
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "postgres",
        "agentscope.training.db.url", PG_URL + "?currentSchema=" + schema,
        "agentscope.training.db.user", PG_USER,
        "agentscope.training.db.password", PG_PASSWORD));
  }

  /**
   * Whether to run on PostgreSQL: when it is reachable, or when OTL_REQUIRE_PG is set, where an
   * unreachable one fails the test rather than quietly running it on H2.
   */
  static boolean postgresRequiredOrReachable() {
    if (postgresReachable()) return true;
    if (System.getenv("OTL_REQUIRE_PG") != null) {
      throw new AssertionError("PostgreSQL at " + PG_URL + " is not reachable and OTL_REQUIRE_PG is set");
    }
    return false;
  }

  static boolean postgresReachable() {
    try (Connection c = java.sql.DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD)) {
      return c.isValid(2);
    } catch (Exception e) {
      return false;
    }
  }

  /** The node's configuration: {@code db} over kafka.conf, otl-persistence.conf and the defaults. */
  static Config config(Config db) {
    Map<String, Object> node = new HashMap<>();
    node.put("pekko.actor.provider", "cluster");
    node.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    node.put("pekko.remote.artery.canonical.port", 0);
    node.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    node.put("pekko.cluster.sharding.number-of-shards", 20);
    node.put("pekko.coordinated-shutdown.exit-jvm", "off");
    node.put("pekko.loggers", java.util.List.of("org.apache.pekko.event.slf4j.Slf4jLogger"));
    node.put("pekko.logging-filter", "org.apache.pekko.event.slf4j.Slf4jLoggingFilter");
    node.put("pekko.loglevel", "WARNING");
    return db.withFallback(ConfigFactory.parseMap(node))
        .withFallback(ConfigFactory.parseResources("otl-persistence.conf"))
        .withFallback(ConfigFactory.parseResources("kafka.conf"))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  static TestNode start(Config db) {
    KafkaTestBroker.quietLogs();
    Config base = config(db);
    Config training = base.getConfig("agentscope.training");
    JournalSettings journal = JournalSettings.fromConfig(training);
    JournalSchema.ensure(journal);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl", journal.pekkoConfig().withFallback(base));
    Cluster cluster = Cluster.get(system);
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    ClusterSharding sharding = ClusterSharding.get(system);
    SessionSettings sessionSettings = SessionSettings.fromConfig(training);
    Clock clock = Clock.systemUTC();
    sharding.init(Entity.of(AgentSession.ENTITY_TYPE_KEY,
            ctx -> AgentSession.create(ctx.getEntityId(), sessionSettings, clock, ctx.getShard()))
        .withStopMessage(new AgentSession.Stop()));
    sharding.init(Entity.of(ModelVersion.ENTITY_TYPE_KEY,
        ctx -> ModelVersion.create(ctx.getEntityId(), ModelSettings.defaults(), clock)));
    return new TestNode(system, journal, new DataCollector(sharding, Duration.ofSeconds(10)), sharding, training);
  }

  /** This node's Kafka settings, pointed at {@code broker}, with {@code overrides} below kafka. */
  KafkaSettings kafka(KafkaTestBroker broker, Map<String, Object> overrides) {
    Config o = ConfigFactory.parseMap(overrides).atPath("kafka");
    return KafkaSettings.fromConfig(o.withFallback(training)).withBootstrapServers(broker.bootstrapServers())
        .withRestartBackoff(Duration.ofMillis(200), Duration.ofSeconds(2));
  }

  /** Journal rows per persistence id with the given prefix. */
  Map<String, Long> rowsByPersistenceId(String prefix) throws Exception {
    Map<String, Long> out = new HashMap<>();
    try (Connection c = JournalSchema.connect(journal);
        PreparedStatement ps = c.prepareStatement(
            "SELECT persistence_id, COUNT(*) FROM event_journal WHERE persistence_id LIKE ? GROUP BY persistence_id")) {
      ps.setString(1, prefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  long rows(String prefix) throws Exception {
    return rowsByPersistenceId(prefix).values().stream().mapToLong(Long::longValue).sum();
  }

  /** The events of one persistence id, in journal order, as the read journal gives them. */
  java.util.List<Object> journalEvents(String persistenceId) throws Exception {
    org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal read =
        org.apache.pekko.persistence.query.PersistenceQuery.get(system).getReadJournalFor(
            org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal.class,
            org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal.Identifier());
    return read.currentEventsByPersistenceId(persistenceId, 0L, Long.MAX_VALUE)
        .map(org.apache.pekko.persistence.query.EventEnvelope::event)
        .runWith(org.apache.pekko.stream.javadsl.Sink.seq(), system)
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
