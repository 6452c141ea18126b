package io.otl.persistence.readside;

import io.otl.core.JsonSerializable;
import io.otl.core.Persisted;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * The offset of one feed, kept in the journal itself (persistence id {@code FeedOffset|<feed>}).
 * Besides the latest acknowledged ordering it keeps a small ring of (time, ordering) points, so the
 * reconciliation can ask "which offset had the feed reached {@code rescan-window} ago?" — also
 * right after a restart, since the ring is part of the replayed state.
 */
public final class FeedOffsetStore
    extends EventSourcedBehaviorWithEnforcedReplies<FeedOffsetStore.Command, FeedOffsetStore.Event,
        FeedOffsetStore.State> {

  public static final String ENTITY_TYPE = "FeedOffset";
  /** Ring points are at least rescan-window / RING_RESOLUTION apart; about that many are kept. */
  static final int RING_RESOLUTION = 60;

  public sealed interface Command extends JsonSerializable {}

  /** Replies with the state (latest offset, ring). */
  public record Get(ActorRef<State> replyTo) implements Command {}

  /** The feed's consumer acknowledged everything up to {@code ordering} (inclusive). */
  public record Advance(long ordering, Instant at, ActorRef<Done> replyTo) implements Command {}

  public sealed interface Event extends Persisted {}

  public record OffsetAdvanced(long ordering, Instant at) implements Event {}

  /** One observation: at {@code at} the feed had acknowledged everything up to {@code ordering}. */
  public record Point(Instant at, long ordering) implements JsonSerializable {}

  /**
   * @param ordering the latest acknowledged ordering (0: nothing yet)
   * @param at when it was stored (null: never)
   * @param ring older observations, oldest first; exactly one of them is older than the window
   *     measured from the newest, the rest are newer
   */
  public record State(long ordering, Instant at, List<Point> ring) implements Persisted {
    public static State empty() {
      return new State(0L, null, List.of());
    }

    /** Pure: the window only decides which points are kept, never depends on a clock. */
    public State apply(OffsetAdvanced e, Duration window) {
      long next = Math.max(ordering, e.ordering());
      List<Point> points = new ArrayList<>(ring);
      Duration spacing = window.dividedBy(RING_RESOLUTION);
      if (points.isEmpty() || !e.at().isBefore(points.get(points.size() - 1).at().plus(spacing))) {
        points.add(new Point(e.at(), next));
      }
      Instant horizon = e.at().minus(window);
      while (points.size() > 1 && !points.get(1).at().isAfter(horizon)) points.remove(0);
      return new State(next, e.at(), List.copyOf(points));
    }

    /**
     * The offset the feed had reached at {@code cutoff}: the newest known point not after it.
     * When none is that old (a feed younger than the window), 0: everything is rescanned.
     */
    public long offsetAt(Instant cutoff) {
      long found = -1;
      for (Point p : ring) if (!p.at().isAfter(cutoff)) found = p.ordering();
      if (at != null && !at.isAfter(cutoff)) found = Math.max(found, ordering);
      return Math.max(found, 0L);
    }
  }

  private final Duration window;

  public static Behavior<Command> create(String feedName, Duration rescanWindow) {
    return new FeedOffsetStore(feedName, rescanWindow);
  }

  public static PersistenceId persistenceId(String feedName) {
    return PersistenceId.of(ENTITY_TYPE, feedName);
  }

  private FeedOffsetStore(String feedName, Duration window) {
    super(persistenceId(feedName),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.window = window;
  }

  @Override
  public State emptyState() {
    return State.empty();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Get.class, (state, cmd) -> Effect().reply(cmd.replyTo(), state))
        .onCommand(Advance.class, (state, cmd) -> cmd.ordering() <= state.ordering()
            ? Effect().reply(cmd.replyTo(), Done.getInstance())
            : Effect().persist(new OffsetAdvanced(cmd.ordering(), cmd.at()))
                .thenReply(cmd.replyTo(), s -> Done.getInstance()))
        .build();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState()
        .onAnyEvent((state, e) -> state.apply((OffsetAdvanced) e, window));
  }

  /**
   * The stored offset of a feed, read from the journal without starting the feed (tools, tests):
   * the highest {@link OffsetAdvanced} ordering, 0 when none was stored.
   */
  public static CompletionStage<Long> readStoredOffset(ActorSystem<?> system, String feedName) {
    JdbcReadJournal journal = PersistenceQuery.get(system.classicSystem())
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    return journal.currentEventsByPersistenceId(persistenceId(feedName).id(), 0L, Long.MAX_VALUE)
        .map(env -> env.event() instanceof OffsetAdvanced a ? a.ordering() : 0L)
        .runWith(Sink.fold(0L, Math::max), system);
  }
}
