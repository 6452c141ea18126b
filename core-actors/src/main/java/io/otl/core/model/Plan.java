package io.otl.core.model;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelState.State;
import java.util.ArrayList;
import java.util.List;

/**
 * The events one {@link ModelVersion} command decides, with the state they lead to, so later
 * decisions of the same command see earlier ones (a promotion, then the next auto-deploy).
 * The entity's own plan; the coordinator has another (to be reconciled into one shared kernel).
 */
final class Plan {
  final List<Event> events = new ArrayList<>();
  State state;

  Plan(State initial) {
    this.state = initial;
  }

  void add(Event e) {
    events.add(e);
    state = ModelEventHandler.apply(state, e);
  }
}
