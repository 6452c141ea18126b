package io.otl.persistence.kafka;

import io.otl.core.JsonSerializable;
import io.otl.core.Persisted;
import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;

/**
 * How far a Kafka publisher got: the journal offset (the {@code ordering} of the read journal's
 * {@code eventsByTag}) of the last event whose record the broker acknowledged. Kept in the journal
 * itself (persistence id {@code KafkaOffset|<topic>}), so a publisher resumes where it stopped on
 * whichever node its singleton runs next. The offset only moves forward.
 */
public final class KafkaPublisherOffset
    extends EventSourcedBehaviorWithEnforcedReplies<
        KafkaPublisherOffset.Command, KafkaPublisherOffset.Event, KafkaPublisherOffset.State> {

  public static final String ENTITY_TYPE = "KafkaOffset";

  public sealed interface Command extends JsonSerializable {}

  /** The stored offset (0 when nothing was published yet). */
  public record Get(ActorRef<Current> replyTo) implements Command {}

  /** Store {@code offset} if it is ahead of the stored one; always acknowledged. */
  public record Store(long offset, ActorRef<Done> replyTo) implements Command {}

  public record Current(long offset) implements JsonSerializable {}

  public sealed interface Event extends Persisted {}

  public record OffsetStored(long offset) implements Event {}

  public record State(long offset) implements Persisted {}

  public static PersistenceId persistenceId(String topic) {
    return PersistenceId.of(ENTITY_TYPE, topic);
  }

  public static Behavior<Command> create(String topic) {
    return new KafkaPublisherOffset(topic);
  }

  private KafkaPublisherOffset(String topic) {
    super(persistenceId(topic),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
  }

  @Override
  public State emptyState() {
    return new State(0L);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // Only the latest offset matters: keep a snapshot and drop the events before it.
    return RetentionCriteria.snapshotEvery(100, 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Get.class, (state, c) -> Effect().reply(c.replyTo(), new Current(state.offset())))
        .onCommand(Store.class, (state, c) -> c.offset() <= state.offset()
            ? Effect().reply(c.replyTo(), Done.getInstance())
            : Effect().persist(new OffsetStored(c.offset())).thenReply(c.replyTo(), s -> Done.getInstance()))
        .build();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(OffsetStored.class, (state, e) -> new State(Math.max(state.offset(), e.offset())))
        .build();
  }
}
