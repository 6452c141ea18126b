package io.otl.core.coordinator;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Port through which the TrainingCoordinator asks whether the agent has a rollout in progress (a
 * version DEPLOYING, in CANARY, RAMP or PAUSED at ModelVersion) before it starts a job: one rollout
 * at a time, so an agent never trains on data its canary is still producing and never queues
 * stale candidates behind it. The node answers with a sharding ask of {@code ModelVersion.Get}.
 *
 * <p>The stage completes with a short description ("v3 is CANARY") or empty when none, and fails
 * when ModelVersion did not answer; the coordinator then does not start the job either.
 */
@FunctionalInterface
public interface RolloutProbe {

  /** No ModelVersion to ask (tests, tools): never a rollout in progress. */
  RolloutProbe NONE = agentId -> CompletableFuture.completedFuture(Optional.empty());

  CompletionStage<Optional<String>> rolloutInProgress(String agentId);
}
