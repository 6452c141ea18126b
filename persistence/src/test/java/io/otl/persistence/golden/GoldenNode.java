package io.otl.persistence.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;
import org.apache.pekko.stream.javadsl.Sink;

/** What the generator and the replay tests share: the node's config, replays and state rendering. */
final class GoldenNode {
  private GoldenNode() {}

  /** A local (non-cluster) system with the node's journal settings over {@code db}. */
  static Config config(Config db) {
    return db.withFallback(ConfigFactory.parseMap(Map.of(
            "pekko.loglevel", "WARNING",
            "pekko.loggers", List.of("org.apache.pekko.event.slf4j.Slf4jLogger"),
            "pekko.logging-filter", "org.apache.pekko.event.slf4j.Slf4jLoggingFilter",
            "pekko.coordinated-shutdown.exit-jvm", "off")))
        .withFallback(ConfigFactory.parseResources("otl-persistence.conf"))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  /** Every event of {@code persistenceId}, deserialized, in order. */
  static <E> List<E> events(ActorSystem<?> system, String persistenceId, Class<E> type) throws Exception {
    JdbcReadJournal journal = PersistenceQuery.get(system)
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    return journal.currentEventsByPersistenceId(persistenceId, 0L, Long.MAX_VALUE)
        .map(env -> type.cast(env.event()))
        .runWith(Sink.seq(), system)
        .toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /** Recovers {@code id} (snapshot, then events) with the entity's pure handler; its state. */
  @SuppressWarnings("unchecked")
  static <E, S> S recover(ActorSystem<?> system, PersistenceId id, S empty, BiFunction<S, E, S> handler)
      throws Exception {
    ActorRef<GoldenWriter.Cmd> probe = system.systemActorOf(GoldenWriter.probe(id, empty, handler),
        "probe-" + UUID.randomUUID(), Props.empty());
    // The probe only reads (it never persists), so it may recover while the writer still runs.
    Object state = AskPattern.<GoldenWriter.Cmd, Object>ask(probe, GoldenWriter.GetState::new,
        Duration.ofSeconds(30), system.scheduler()).toCompletableFuture().get(60, TimeUnit.SECONDS);
    return (S) state;
  }

  /**
   * The state as JSON, through the mapper of the {@code jackson-json} binding (the one snapshots
   * were written with), keys sorted: a stable rendering to compare replays with.
   */
  static JsonNode render(ActorSystem<?> system, Object state) {
    ObjectMapper mapper = JacksonObjectMapperProvider.get(system).getOrCreate("jackson-json", Optional.empty());
    return GoldenFiles.sorted(mapper.valueToTree(state));
  }
}
