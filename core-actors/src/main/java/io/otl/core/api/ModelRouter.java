package io.otl.core.api;

import io.otl.core.Ids;
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

  private final KeyLikeIds keyLikeIds;

  public ModelRouter(ClusterSharding sharding, Duration askTimeout) {
    this(sharding, askTimeout, KeyLikeIds.NONE);
  }

  /** @param keyLikeIds refuses to register an agent whose id holds an API key, before its entity is addressed */
  public ModelRouter(ClusterSharding sharding, Duration askTimeout, KeyLikeIds keyLikeIds) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.keyLikeIds = keyLikeIds;
  }

  /**
   * The version serving {@code sessionId} of {@code agentId}. Fails with {@link
   * InvalidRouteException} (naming the field) for a missing or invalid agentId or sessionId (design
   * §3.1's rules; nothing is registered for it), with {@link
   * NoVersionException} when the agent has nothing to route to.
   */
  public CompletionStage<ModelVersion.RouteDecision> route(String agentId, String sessionId) {
    return route(agentId, sessionId, null);
  }

  /**
   * As {@link #route(String, String)} for a session that started on {@code pinnedVersion} (null:
   * not started): it stays there while that version serves, so no rollout step moves it.
   */
  public CompletionStage<ModelVersion.RouteDecision> route(String agentId, String sessionId, String pinnedVersion) {
    // The ids' rules (design §3.1), as the route read and the gateway check them: a missing agentId
    // cannot address the agent's entity (the ask would only time out), and an invalid one started an
    // entity that registered v0 under it in the journal (the route registers v0 on first use).
    String problem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (problem == null) problem = Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID);
    if (problem != null) return CompletableFuture.failedFuture(new InvalidRouteException(problem));
    // The route registers v0 of an agent's first call: one whose id holds a key (X-Agent-Id: sk-proj-…)
    // is refused before its entity starts (sharding journals the ids of the entities it starts).
    return keyLikeIds.forAgent(agentId, "agentId").thenCompose(refused -> refused != null
        ? CompletableFuture.failedFuture(new InvalidRouteException(refused.message()))
        : sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
            .<ModelVersion.RouteReply>ask(reply -> new ModelVersion.Route(sessionId, pinnedVersion, reply), askTimeout)
            .thenCompose(r -> r instanceof ModelVersion.RouteDecision d
                ? CompletableFuture.completedFuture(d)
                : CompletableFuture.failedFuture(failure((ModelVersion.Failure) r))));
  }

  /**
   * Tells the agent's ModelVersion that the model server does not serve {@code version} any more
   * (it answered 404 for its served model): the entity loads its adapters again. Fire and forget:
   * the call that found it is answered by the fallback meanwhile.
   */
  public void servingLost(String agentId, String version) {
    if (agentId == null || agentId.isEmpty() || version == null) return;
    sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId).tell(new ModelVersion.ServingLost(version));
  }

  private static RuntimeException failure(ModelVersion.Failure f) {
    return f.rejectionKind() == io.otl.core.entity.Rejection.Kind.INVALID_INPUT
        ? new InvalidRouteException(f.message())
        : new NoVersionException(f.message());
  }

  /** The agentId or sessionId is not valid; the message names the field. */
  public static final class InvalidRouteException extends IllegalArgumentException {
    public InvalidRouteException(String message) {
      super(message);
    }
  }

  /** The agent has no stable version and no candidate: there is nothing to route to. */
  public static final class NoVersionException extends RuntimeException {
    public NoVersionException(String message) {
      super(message);
    }
  }
}
