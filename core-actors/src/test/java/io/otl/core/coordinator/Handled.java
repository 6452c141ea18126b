package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorState.State;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.persistence.typed.internal.Callback;
import org.apache.pekko.persistence.typed.internal.CompositeEffect;
import org.apache.pekko.persistence.typed.internal.EffectImpl;
import org.apache.pekko.persistence.typed.internal.SideEffect;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One command through {@link TrainingCoordinator}'s real command handler and event handler, without
 * a journal: the events the handler's effect persists are applied with the entity's event handler,
 * then its callbacks (after-effects and the reply) run on the new state, as Pekko runs them once the
 * events are stored. Reading the effect uses Pekko's internal effect classes; the entity tests
 * ({@code TrainingCoordinatorTest}) run the same handlers on a real journal.
 *
 * @param events what the command persisted, in order
 * @param state the entity's state after them
 */
record Handled(List<Event> events, State state) {

  @SuppressWarnings("unchecked")
  static Handled handle(TrainingCoordinator entity, State s, Command c) {
    EffectImpl<Event, State> effect = (EffectImpl<Event, State>) (ReplyEffect<Event, State>)
        entity.commandHandler().apply(s, c);
    List<Event> events = new ArrayList<>(CollectionConverters.asJava(effect.events()));
    State next = s;
    for (Event e : events) {
      next = entity.eventHandler().apply(next, e);
    }
    runCallbacks(effect, next);
    return new Handled(List.copyOf(events), next);
  }

  /** Callbacks in the order they were added: {@code thenRun} nests the effect it extends. */
  @SuppressWarnings("unchecked")
  private static void runCallbacks(Object effect, State s) {
    if (effect instanceof CompositeEffect<?, ?> composite) {
      runCallbacks(composite.persistingEffect(), s);
      for (SideEffect<?> side : CollectionConverters.asJava(composite._sideEffects())) {
        if (side instanceof Callback<?> callback) {
          ((Callback<State>) callback).sideEffect().apply(s);
        }
      }
    }
  }
}
