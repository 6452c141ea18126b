package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;

import io.otl.core.api.AgentDirectory;
import java.util.Map;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /v1/agents}: the agents the journal knows, so that a client (the console's overview) finds an
 * agent that has served gateway calls or completed sessions before it ever ran a training job.
 */
public final class AgentRoutes {
  private final AgentDirectory agents;

  public AgentRoutes(AgentDirectory agents) {
    this.agents = agents;
  }

  public Route route() {
    return path("agents", () -> get(() ->
        completeWithFuture(guard(() -> agents.knownAgentIds().thenApply(ids ->
            Json.ok(Map.of("agents", ids.stream().map(id -> Map.of("agentId", id)).toList())))))));
  }
}
