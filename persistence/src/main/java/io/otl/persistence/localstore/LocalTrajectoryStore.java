package io.otl.persistence.localstore;

import io.otl.core.session.AgentSession;
import io.otl.persistence.export.Trajectory;
import io.otl.persistence.kafka.TrajectoryRecords;
import io.otl.persistence.readside.FeedSettings;
import io.otl.persistence.readside.TaggedEventFeed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code data-collector.store-type = local}: each completed trajectory, besides being in the
 * journal, becomes one JSON line of {@code <store-path>/trajectories-<UTC day of completion>.jsonl}.
 *
 * <p>The line has the shape of the Kafka {@code trajectories} topic (design §7.2): the SFT export
 * shape, as the exporter's SFT line renders it ({@code messages} with tool calls, {@code tools} a
 * JSON array) plus {@code reward},
 * {@code qualityScore}, {@code modelVersion}, {@code agentId}, {@code sessionId}, {@code status},
 * {@code at}, {@code id}. It is built from the journal, where text is already desensitized. Only
 * completions are written; later reward revisions stay in the journal (and on Kafka).
 *
 * <p>Driven by its own trajectory feed ({@code local-store}, offset in the journal), so after any
 * crash every completion is written, and {@link DailyJsonlFiles} keeps it to one line per session.
 * The feed is a cluster singleton: in a cluster one node writes at a time and the writer moves on
 * fail-over, so {@code store-path} must then be a folder all nodes share.
 */
public final class LocalTrajectoryStore {
  private static final Logger log = LoggerFactory.getLogger(LocalTrajectoryStore.class);

  /** The feed's name: its offset lives in the journal as {@code FeedOffset|local-store}. */
  public static final String FEED = "local-store";

  private static final String PREFIX = AgentSession.ENTITY_TYPE_KEY.name() + "|";

  private LocalTrajectoryStore() {}

  private record Line(LocalDate day, String sessionId, String json) {}

  /**
   * Starts the feed writing under {@code dir}, created if missing.
   *
   * @throws IllegalArgumentException naming {@code store-path} when the folder cannot be created or written
   */
  public static ActorRef<TaggedEventFeed.Command> start(ActorSystem<?> system, Path dir, FeedSettings settings) {
    Path folder = dir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(folder);
    } catch (IOException e) {
      throw new IllegalArgumentException("agentscope.training.data-collector.store-path = \"" + dir
          + "\": must be a folder this node can create and write (" + e.getClass().getSimpleName() + ")", e);
    }
    if (!Files.isWritable(folder)) {
      throw new IllegalArgumentException("agentscope.training.data-collector.store-path = \"" + dir
          + "\": must be a folder this node can write");
    }
    JdbcReadJournal journal = PersistenceQuery.get(system.classicSystem())
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    DailyJsonlFiles files = new DailyJsonlFiles(folder);
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    log.info("store-type local: completed trajectories go to {}/trajectories-<day>.jsonl", folder);
    return TaggedEventFeed.start(system, FEED, AgentSession.TRAJECTORY_TAG,
        env -> line(journal, system, env),
        line -> CompletableFuture.runAsync(() -> files.append(line.day(), line.sessionId(), line.json()), blocking),
        settings);
  }

  /** The line of a completion, built from the session's events up to it; empty for anything else. */
  private static CompletionStage<Optional<Line>> line(JdbcReadJournal journal, ActorSystem<?> system,
      EventEnvelope env) {
    if (!(env.event() instanceof AgentSession.TrajectoryCompleted done) || !env.persistenceId().startsWith(PREFIX)) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    String sessionId = env.persistenceId().substring(PREFIX.length());
    return journal.currentEventsByPersistenceId(env.persistenceId(), 0L, env.sequenceNr())
        .runFold(new Trajectory.Builder(sessionId), (b, e) -> b.add((AgentSession.Event) e.event()), system)
        .thenApply(b -> Optional.of(new Line(LocalDate.ofInstant(done.at(), ZoneOffset.UTC), sessionId,
            TrajectoryRecords.json(sessionId, done, b.build()))));
  }
}
