package io.otl.core.entity;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The events one command decides, applied to the state as they are added (so later decisions of
 * the same command see earlier ones), then persisted together by the entity; plus effects to run
 * once they are persisted. A plan without events persists nothing and runs its effects at once.
 * The training coordinator and the model versions decide their commands this way, each with its own
 * pure event handler.
 *
 * @param <S> the entity's state
 * @param <E> the entity's event
 */
public final class Plan<S, E> {
  private final BiFunction<S, E, S> apply;
  private final List<E> events = new ArrayList<>();
  private final List<Consumer<S>> after = new ArrayList<>();
  private S state;

  public Plan(S initial, BiFunction<S, E, S> apply) {
    this.state = initial;
    this.apply = apply;
  }

  /** Decides one more event: the state moves on at once. */
  public void add(E e) {
    state = apply.apply(state, e);
    events.add(e);
  }

  /** Runs once the events are persisted (or at once when there are none), with the new state. */
  public void after(Consumer<S> effect) {
    after.add(effect);
  }

  /** The state after every event decided so far. */
  public S state() {
    return state;
  }

  /** The events decided so far, in order. */
  public List<E> events() {
    return List.copyOf(events);
  }

  public boolean isEmpty() {
    return events.isEmpty();
  }

  /** The effects to run after persisting, in the order they were added. */
  public List<Consumer<S>> afterEffects() {
    return List.copyOf(after);
  }
}
