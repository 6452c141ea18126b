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
   * (a version registered by hand before any trajectory completed). By default, {@link #agentIds()}.
   */
  default CompletionStage<List<String>> modelAgentIds() {
    return agentIds();
  }

  /** True when the entity with this persistence id has written at least one event. */
  CompletionStage<Boolean> exists(String persistenceId);
}
