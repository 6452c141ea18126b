package io.otl.core.api;

import io.otl.core.model.ModelVersion;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * Which model version serves a session (design §3.3, §7.3): deterministic and sticky, from the
 * agent's ModelVersion entity. Fails with {@link NoVersionException} when the agent has no
 * version to serve.
 */
public final class ModelRouter {
  private final ClusterSharding sharding;
  private final Duration askTimeout;

  public ModelRouter(ClusterSharding sharding, Duration askTimeout) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
  }

  public CompletionStage<ModelVersion.RouteDecision> route(String agentId, String sessionId) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.RouteReply>ask(reply -> new ModelVersion.Route(sessionId, reply), askTimeout)
        .thenCompose(r -> r instanceof ModelVersion.RouteDecision d
            ? CompletableFuture.completedFuture(d)
            : CompletableFuture.failedFuture(new NoVersionException(((ModelVersion.Failure) r).message())));
  }

  /** The agent has no stable version and no candidate: there is nothing to route to. */
  public static final class NoVersionException extends RuntimeException {
    public NoVersionException(String message) {
      super(message);
    }
  }
}
