package io.otl.core.api;

import io.otl.core.model.Deployments;
import io.otl.core.model.ModelVersion;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * The stable version's route for a session, whatever the rollout says: where the inference
 * gateway retries a call a candidate failed ({@code fallback-to-stable}, design §7.5). Read from
 * the agent's ModelVersion view, so the entity needs no command of its own for it.
 */
public final class StableRoute {
  private final ClusterSharding sharding;
  private final Duration askTimeout;

  public StableRoute(ClusterSharding sharding, Duration askTimeout) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
  }

  /** Empty when the agent has no stable version (or it is the one given as {@code except}). */
  public CompletionStage<Optional<ModelVersion.RouteDecision>> stable(String agentId, String sessionId,
      String except) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
        .thenApply(view -> view.stable() == null || view.stable().equals(except) ? Optional.empty()
            : view.versions().stream().filter(v -> v.version().equals(view.stable())).findFirst()
                .map(v -> decision(agentId, sessionId, v)));
  }

  /**
   * When the agent's stable version was registered (v0: when the node registered the base model for the
   * agent); empty when it has no stable. Starts the agent's entity: ask it only of an agent with versions.
   */
  public CompletionStage<Optional<java.time.Instant>> stableRegisteredAt(String agentId) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
        .thenApply(view -> view.versions().stream().filter(v -> v.version().equals(view.stable())).findFirst()
            .map(io.otl.core.model.ModelViews.VersionView::registeredAt));
  }

  /**
   * Where the stable is served: its confirmed deployment (endpoint and served model name), as the
   * route gives it, else the endpoint it was registered with. A trained stable is registered with its
   * checkpoint URI, which no server answers: the fallback was a 502 for every call once a trained
   * version had been promoted.
   */
  private static ModelVersion.RouteDecision decision(String agentId, String sessionId,
      io.otl.core.model.ModelViews.VersionView v) {
    Deployments.Deployment d = v.deployment();
    if (d != null && d.status() == Deployments.Status.CONFIRMED && d.endpoint() != null) {
      return new ModelVersion.RouteDecision(agentId, sessionId, v.version(), d.endpoint(), d.servedModel());
    }
    return new ModelVersion.RouteDecision(agentId, sessionId, v.version(), v.endpoint(), null);
  }
}
