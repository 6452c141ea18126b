package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;

import io.otl.core.api.AgentDirectory;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /v1/agents}: the agents the journal knows, so that a client (the console's overview) finds an
 * agent that has served gateway calls or completed sessions before it ever ran a training job.
 */
public final class AgentRoutes {
  private final AgentDirectory agents;

  /** One agent of the list, its fields in this order. */
  record Agent(String agentId, boolean training, boolean models) {}

  public AgentRoutes(AgentDirectory agents) {
    this.agents = agents;
  }

  /**
   * Each agent says whether it has a training coordinator ({@code training}) and model versions
   * ({@code models}): the console asked {@code GET /v1/training/{agentId}} of every agent, and an agent
   * that had only served gateway calls answered 404 on each refresh, an error in the browser's console
   * (trial t111).
   */
  public Route route() {
    return path("agents", () -> get(() ->
        completeWithFuture(guard(() -> agents.agentIds().thenCombine(agents.modelAgentIds(), (coordinators, models) -> {
          Set<String> training = Set.copyOf(coordinators);
          Set<String> versioned = Set.copyOf(models);
          TreeSet<String> all = new TreeSet<>(training);
          all.addAll(versioned);
          return Json.ok(Map.of("agents", all.stream()
              .map(id -> new Agent(id, training.contains(id), versioned.contains(id))).toList()));
        })))));
  }
}
