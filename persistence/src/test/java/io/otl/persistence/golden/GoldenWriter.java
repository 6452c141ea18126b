package io.otl.persistence.golden;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;

/**
 * Writes given events of an entity under its persistence id, through the real journal plugin and
 * serializers, folding them with the entity's own pure event handler; snapshots the entity's state
 * after the sequence numbers asked for. The golden generator uses it where driving the entity's
 * commands would need its I/O ports and timers (the coordinator), and to get a snapshot of each
 * state class; {@link #probe} recovers a state the same way for the replay tests.
 */
final class GoldenWriter<E, S> extends EventSourcedBehavior<GoldenWriter.Cmd, E, S> {

  sealed interface Cmd {}

  record Write(List<?> events, ActorRef<Done> replyTo) implements Cmd {}

  record GetState(ActorRef<Object> replyTo) implements Cmd {}

  private final S empty;
  private final BiFunction<S, E, S> handler;
  private final Set<Long> snapshotAfter;
  private final Function<E, Set<String>> tags;

  private GoldenWriter(PersistenceId id, S empty, BiFunction<S, E, S> handler, Set<Long> snapshotAfter,
      Function<E, Set<String>> tags) {
    super(id, SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(2), 0.1));
    this.empty = empty;
    this.handler = handler;
    this.snapshotAfter = snapshotAfter;
    this.tags = tags;
  }

  static <E, S> Behavior<Cmd> create(PersistenceId id, S empty, BiFunction<S, E, S> handler,
      Set<Long> snapshotAfter, Function<E, Set<String>> tags) {
    return new GoldenWriter<>(id, empty, handler, snapshotAfter, tags);
  }

  /** Recovers (snapshot, then events) with the entity's handler and answers its state. */
  static <E, S> Behavior<Cmd> probe(PersistenceId id, S empty, BiFunction<S, E, S> handler) {
    return new GoldenWriter<>(id, empty, handler, Set.of(), e -> Set.of());
  }

  @Override
  public S emptyState() {
    return empty;
  }

  @Override
  public boolean shouldSnapshot(S state, E event, long sequenceNr) {
    return snapshotAfter.contains(sequenceNr);
  }

  @Override
  public Set<String> tagsFor(E event) {
    return tags.apply(event);
  }

  @Override
  @SuppressWarnings("unchecked")
  public CommandHandler<Cmd, E, S> commandHandler() {
    return (state, cmd) -> cmd instanceof Write w
        ? Effect().persist((List<E>) w.events()).thenReply(w.replyTo(), x -> Done.getInstance())
        : Effect().reply(((GetState) cmd).replyTo(), state);
  }

  @Override
  public EventHandler<S, E> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(handler::apply);
  }
}
