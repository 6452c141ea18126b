package io.otl.core.model;

import java.util.List;

/**
 * Published on the actor system's event stream once a model version entity has persisted transition
 * events (never on recovery), so the node can count rollouts as they happen: a gauge sampled every
 * few seconds missed a canary rolled back within the interval. Ids and events only, as the log line.
 *
 * @param agentId the entity's agent
 * @param events the transitions of one write, in order
 */
public record TransitionsPersisted(String agentId, List<ModelEvents.TransitionEvent> events) {
  public TransitionsPersisted {
    events = List.copyOf(events);
  }
}
