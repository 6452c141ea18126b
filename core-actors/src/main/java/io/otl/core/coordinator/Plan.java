package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorState.State;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The events one command decides, applied as they are added (so later decisions of the same
 * command see them) and persisted together by {@code TrainingCoordinator.run}; plus what to do once
 * they are persisted. A plan without events persists nothing and answers nothing but runs its
 * {@link #after} effects at once.
 */
final class Plan {
  State state;
  final List<Event> events = new ArrayList<>();
  final List<Consumer<State>> after = new ArrayList<>();

  Plan(State s) {
    this.state = s;
  }

  void add(Event e) {
    state = CoordinatorEventHandler.applyEvent(state, e);
    events.add(e);
  }

  /** Runs once the events are persisted (or at once when there are none), with the new state. */
  void after(Consumer<State> effect) {
    after.add(effect);
  }
}
