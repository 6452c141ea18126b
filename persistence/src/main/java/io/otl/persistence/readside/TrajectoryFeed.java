package io.otl.persistence.readside;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionModel.Role;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * Every {@link AgentSession.TrajectoryCompleted} and {@link AgentSession.RewardRevised} of the
 * journal (tag {@value AgentSession#TRAJECTORY_TAG}), delivered to a {@link TrajectorySink}
 * at least once, in journal order of acknowledgement, with the offset in the journal — see
 * {@link TaggedEventFeed} for the guarantees and the reconciliation.
 *
 * <p>With {@code resolve-msg-ids} on, each notice carries the msgIds of the session's assistant
 * messages: the tagged event carries them itself since they were added to it; for events written
 * before, they are read with {@code currentEventsByPersistenceId} up to the tagged event (one query
 * on the journal's primary key per notice). Only {@code MessageRecorded} events matter for them; the
 * entity's handler appends every such event to the trajectory's messages, so collecting them from
 * the events gives the same list as folding {@code State.apply}, without copying the state per event.
 */
public final class TrajectoryFeed {
  private TrajectoryFeed() {}

  /** Starts the singleton of feed {@code feedName} on this node (every node may call it). */
  public static ActorRef<TaggedEventFeed.Command> start(
      ActorSystem<?> system, String feedName, TrajectorySink sink, FeedSettings settings) {
    return TaggedEventFeed.start(system, feedName, AgentSession.TRAJECTORY_TAG, mapper(system, settings),
        new TaggedEventFeed.Consumer<TrajectoryNotice>() {
          @Override
          public CompletionStage<Void> deliver(TrajectoryNotice item) {
            return sink.deliver(item);
          }

          @Override
          public CompletionStage<Void> deliverAll(List<TrajectoryNotice> items) {
            return sink.deliverAll(items);
          }
        }, settings);
  }

  /** The mapping from a tagged envelope to a notice (empty for anything else under the tag). */
  public static TaggedEventFeed.Mapper<TrajectoryNotice> mapper(ActorSystem<?> system, FeedSettings settings) {
    JdbcReadJournal journal = PersistenceQuery.get(system.classicSystem())
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    return env -> {
      Optional<TrajectoryNotice> bare = notice(env, List.of());
      if (bare.isEmpty() || !settings.resolveMsgIds()) return CompletableFuture.completedFuture(bare);
      List<String> stored = storedMsgIds(env.event());
      if (stored != null) return CompletableFuture.completedFuture(notice(env, stored));
      return msgIds(journal, system, env.persistenceId(), env.sequenceNr())
          .thenApply(ids -> notice(env, ids));
    };
  }

  /** The notice of a completion or revision envelope, with the given msgIds. */
  public static Optional<TrajectoryNotice> notice(EventEnvelope env, List<String> msgIds) {
    String sessionId = sessionId(env.persistenceId());
    long ordering = TaggedEventFeed.ordering(env);
    if (env.event() instanceof AgentSession.TrajectoryCompleted c) {
      return Optional.of(new TrajectoryNotice(sessionId, c.agentId(), c.modelVersion(), c.eventId(), false,
          c.reward(), c.qualityScore(), c.outcome(), msgIds, ordering, c.at(),
          c.recordedAt() != null ? c.recordedAt() : c.at()));
    }
    if (env.event() instanceof AgentSession.RewardRevised r) {
      return Optional.of(new TrajectoryNotice(sessionId, r.agentId(), r.modelVersion(), r.eventId(), true,
          r.reward(), r.qualityScore(), r.outcome(), msgIds, ordering, r.at(),
          r.recordedAt() != null ? r.recordedAt() : r.at()));
    }
    return Optional.empty();
  }

  /** The msgIds the tagged event carries itself (written by this build on), or null: read them. */
  static List<String> storedMsgIds(Object event) {
    if (event instanceof AgentSession.TrajectoryCompleted c) return c.msgIds();
    if (event instanceof AgentSession.RewardRevised r) return r.msgIds();
    return null;
  }

  /** The assistant messages' msgIds of a session, up to (and including) sequence number {@code upTo}. */
  public static CompletionStage<List<String>> msgIds(
      JdbcReadJournal journal, ActorSystem<?> system, String persistenceId, long upTo) {
    return journal.currentEventsByPersistenceId(persistenceId, 0L, upTo)
        .map(EventEnvelope::event)
        .filter(e -> e instanceof AgentSession.MessageRecorded m && m.role() == Role.assistant && m.msgId() != null)
        .map(e -> ((AgentSession.MessageRecorded) e).msgId())
        .runWith(Sink.seq(), system)
        .exceptionallyCompose(e -> {
          // A stored event that cannot be read (issue #14: tool input nested past Jackson's limit)
          // must not stop the feed for every agent behind it: the notice goes without msgIds.
          if (isDatabaseFailure(e)) return CompletableFuture.failedFuture(e);
          log.warn("{}: an event up to seqNr {} cannot be read ({}); its trajectory notice carries no msgIds",
              persistenceId, upTo, root(e).getClass().getSimpleName());
          return CompletableFuture.completedFuture(List.of());
        });
  }

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TrajectoryFeed.class);

  private static boolean isDatabaseFailure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof java.sql.SQLException || c instanceof java.util.concurrent.TimeoutException) return true;
    }
    return false;
  }

  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) c = c.getCause();
    return c;
  }

  /** "AgentSession|s-1" → "s-1". */
  static String sessionId(String persistenceId) {
    int bar = persistenceId.indexOf('|');
    return bar < 0 ? persistenceId : persistenceId.substring(bar + 1);
  }
}
