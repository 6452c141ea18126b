package io.otl.core.api;

import io.otl.core.Ids;
import io.otl.core.entity.Rejection;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.Desensitizer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * The model views of design §7.3, for an agent's own JVM: what {@code GET /v1/models/{agentId}}
 * answers (versions, states, ratios, metrics) and the manual promote and rollback. An agent
 * without versions is unknown, as over HTTP: the view is empty, a transition fails with {@link
 * RefusedException} of kind NOT_FOUND, and no entity is started for it. Each transition is journaled
 * with its actor, {@code java} or {@code java:<name>}. A transition the version's
 * state does not allow fails with kind INVALID_TRANSITION; an invalid id with {@link
 * IllegalArgumentException} naming it.
 */
public final class ModelVersions {
  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final AgentDirectory directory;
  private final Desensitizer desensitizer;

  /**
   * @param desensitizer the sessions' own: a rollback's reason is journaled, and raw PII never
   *     reaches the journal (design §3.1)
   */
  public ModelVersions(ClusterSharding sharding, Duration askTimeout, AgentDirectory directory,
      Desensitizer desensitizer) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.directory = directory;
    this.desensitizer = desensitizer;
  }

  /** The agent's versions with their states, ratios, metrics and history; empty for an unknown agent. */
  public CompletionStage<Optional<ModelVersion.ModelsView>> versions(String agentId) {
    return known(agentId).thenCompose(exists -> !exists
        ? CompletableFuture.completedFuture(Optional.empty())
        : sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
            .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
            .thenApply(v -> v.versions().isEmpty() ? Optional.empty() : Optional.of(v)));
  }

  /** Rolls a READY (or NO_EVIDENCE) version out, or moves a paused one on; recorded as by {@code java}. */
  public CompletionStage<ModelVersion.VersionStatus> promote(String agentId, String version) {
    return promote(agentId, version, null);
  }

  /**
   * As {@link #promote(String, String)}, recorded as by {@code java:<actor>} (null: {@code java}), as
   * the HTTP API records {@code http:<X-Actor>} (docs/operations.md "Who did it").
   */
  public CompletionStage<ModelVersion.VersionStatus> promote(String agentId, String version, String actor) {
    return transition(agentId, version, actor, (who, reply) -> new ModelVersion.Promote(version, who, reply));
  }

  /** Rolls a candidate back, or the stable back to the previous stable; {@code reason} may be null. */
  public CompletionStage<ModelVersion.VersionStatus> rollback(String agentId, String version, String reason) {
    return rollback(agentId, version, reason, null);
  }

  /** As {@link #rollback(String, String, String)}, recorded as by {@code java:<actor>} (null: {@code java}). */
  public CompletionStage<ModelVersion.VersionStatus> rollback(String agentId, String version, String reason,
      String actor) {
    String stored = reason == null || reason.isBlank() ? null : desensitizer.apply(reason);
    return transition(agentId, version, actor, (who, reply) -> new ModelVersion.Rollback(version, stored, who, reply));
  }

  /** Holds a rollout at its ratio (CANARY/RAMP → PAUSED), recorded as by {@code java:<actor>} (null: {@code java}). */
  public CompletionStage<ModelVersion.VersionStatus> pause(String agentId, String version, String actor) {
    return transition(agentId, version, actor, (who, reply) -> new ModelVersion.Pause(version, who, reply));
  }

  /** Moves a paused rollout on at the same step, recorded as by {@code java:<actor>} (null: {@code java}). */
  public CompletionStage<ModelVersion.VersionStatus> resume(String agentId, String version, String actor) {
    return transition(agentId, version, actor, (who, reply) -> new ModelVersion.Resume(version, who, reply));
  }

  private CompletionStage<ModelVersion.VersionStatus> transition(String agentId, String version, String actor,
      BiFunction<String, ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command> command) {
    String problem = Ids.versionProblem("version", version);
    if (problem != null) return CompletableFuture.failedFuture(new IllegalArgumentException(problem));
    return OperatorNames.asJava(actor, who -> known(agentId).thenCompose(exists -> !exists
        ? CompletableFuture.<ModelVersion.VersionStatus>failedFuture(new RefusedException(Rejection.Kind.NOT_FOUND,
            "agent " + agentId + " has no model versions"))
        : sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
            .<ModelVersion.TransitionReply>ask(reply -> command.apply(who, reply), askTimeout)
            .thenCompose(r -> r instanceof ModelVersion.VersionStatus s
                ? CompletableFuture.completedFuture(s)
                : CompletableFuture.failedFuture(RefusedException.of((ModelVersion.Failure) r)))));
  }

  private CompletionStage<Boolean> known(String agentId) {
    String problem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (problem != null) return CompletableFuture.failedFuture(new IllegalArgumentException(problem));
    return directory.exists(ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agentId);
  }
}
