package io.otl.core.api;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Which entities exist in the journal. Edges ask before addressing an agent's coordinator or
 * model versions, so a request for an unknown agent answers 404 instead of starting (and
 * remembering) an entity for it.
 */
public interface AgentDirectory {
  /** Agents whose training coordinator has written at least one event. */
  CompletionStage<List<String>> agentIds();

  /**
   * Agents whose model versions have written at least one event: also those with no coordinator yet
   * (a version registered by hand before any trajectory completed, the gateway's v0).
   */
  CompletionStage<List<String>> modelAgentIds();

  /**
   * Agents the journal knows, sorted: a training coordinator (a completed session, a policy, a job)
   * or model versions (the gateway's first call registers v0).
   */
  default CompletionStage<List<String>> knownAgentIds() {
    return agentIds().thenCombine(modelAgentIds(), (coordinators, models) -> {
      java.util.TreeSet<String> all = new java.util.TreeSet<>(coordinators);
      all.addAll(models);
      return List.copyOf(all);
    });
  }

  /** True when the entity with this persistence id has written at least one event. */
  CompletionStage<Boolean> exists(String persistenceId);
}
