package io.otl.core.api;

import io.otl.core.Ids;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.entity.Rejection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * The coordinator views of design §7.3, for an agent's own JVM: what {@code GET
 * /v1/training/{agentId}} and {@code /v1/jobs} answer, the manual trigger of §3.2 ("manual
 * (HTTP/Java)") and a job's cancellation. An agent without a coordinator (no completed trajectory
 * yet) is unknown, as over HTTP: reads answer empty, commands fail with {@link RefusedException}
 * of kind NOT_FOUND, and no entity is started for it. An invalid id fails with {@link
 * IllegalArgumentException} naming it.
 */
public final class TrainingCoordinators {
  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final AgentDirectory directory;

  public TrainingCoordinators(ClusterSharding sharding, Duration askTimeout, AgentDirectory directory) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.directory = directory;
  }

  /** Pool size, thresholds, next scheduled run and active job; empty for an unknown agent. */
  public CompletionStage<Optional<TrainingCoordinator.CoordinatorView>> status(String agentId) {
    return known(agentId).thenCompose(exists -> !exists
        ? CompletableFuture.completedFuture(Optional.empty())
        : coordinator(agentId).<TrainingCoordinator.CoordinatorView>ask(TrainingCoordinator.GetStatus::new, askTimeout)
            .thenApply(Optional::of));
  }

  /**
   * A manual trigger: the job's id and status, with the pre-flight checklist's reasons when it failed
   * (the job then ends FAILED at once). Refused (CONFLICT) while a job of the agent is active.
   */
  public CompletionStage<TrainingCoordinator.TriggerAccepted> trigger(String agentId) {
    return trigger(agentId, null);
  }

  /**
   * As {@link #trigger(String)}, with the job's {@code requestedBy} {@code java:<actor>} (null: {@code
   * java}), as the HTTP API records {@code http:<X-Actor>} (docs/operations.md "Who did it").
   */
  public CompletionStage<TrainingCoordinator.TriggerAccepted> trigger(String agentId, String actor) {
    return OperatorNames.asJava(actor, who -> known(agentId).thenCompose(exists -> !exists ? unknownAgent(agentId)
        : coordinator(agentId).<TrainingCoordinator.TriggerReply>ask(
                reply -> new TrainingCoordinator.Trigger(who, reply), askTimeout)
            .thenCompose(r -> r instanceof TrainingCoordinator.TriggerAccepted a
                ? CompletableFuture.completedFuture(a)
                : CompletableFuture.failedFuture(RefusedException.of((TrainingCoordinator.Refused) r)))));
  }

  /** The agent's jobs, oldest first; empty for an unknown agent. */
  public CompletionStage<List<TrainingCoordinator.JobView>> jobs(String agentId) {
    return known(agentId).thenCompose(exists -> !exists
        ? CompletableFuture.completedFuture(List.of())
        : coordinator(agentId).<TrainingCoordinator.JobList>ask(
                reply -> new TrainingCoordinator.ListJobs(null, reply), askTimeout)
            .thenApply(TrainingCoordinator.JobList::jobs));
  }

  /** A job's status and history; empty for a job no coordinator knows. */
  public CompletionStage<Optional<TrainingCoordinator.JobView>> job(String jobId) {
    Optional<String> agentId = agentOf(jobId);
    if (agentId.isEmpty()) return CompletableFuture.completedFuture(Optional.empty());
    return known(agentId.get()).thenCompose(exists -> !exists
        ? CompletableFuture.completedFuture(Optional.empty())
        : coordinator(agentId.get()).<TrainingCoordinator.JobReply>ask(
                reply -> new TrainingCoordinator.GetJob(jobId, reply), askTimeout)
            .thenApply(r -> r instanceof TrainingCoordinator.JobView v ? Optional.of(v) : Optional.empty()));
  }

  /** Cancels a job; refused (CONFLICT) for a finished one, NOT_FOUND for an unknown one. */
  public CompletionStage<TrainingCoordinator.CancelAccepted> cancel(String jobId) {
    return cancel(jobId, null);
  }

  /** As {@link #cancel(String)}, with the cancellation's {@code requestedBy} {@code java:<actor>} (null: {@code java}). */
  public CompletionStage<TrainingCoordinator.CancelAccepted> cancel(String jobId, String actor) {
    return OperatorNames.asJava(actor, who -> {
      Optional<String> agentId = agentOf(jobId);
      if (agentId.isEmpty()) return unknownJob(jobId);
      return known(agentId.get()).thenCompose(exists -> !exists ? unknownJob(jobId)
          : coordinator(agentId.get()).<TrainingCoordinator.CancelReply>ask(
                  reply -> new TrainingCoordinator.CancelJob(jobId, who, reply), askTimeout)
              .thenCompose(r -> r instanceof TrainingCoordinator.CancelAccepted a
                  ? CompletableFuture.completedFuture(a)
                  : CompletableFuture.failedFuture(RefusedException.of((TrainingCoordinator.Refused) r))));
    });
  }

  private CompletionStage<Boolean> known(String agentId) {
    String problem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (problem != null) return CompletableFuture.failedFuture(new IllegalArgumentException(problem));
    return directory.exists(TrainingCoordinator.persistenceId(agentId).id());
  }

  private static Optional<String> agentOf(String jobId) {
    return jobId == null ? Optional.empty() : TrainingCoordinator.agentIdOf(jobId).filter(Ids::isValidAgentId);
  }

  private org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef<TrainingCoordinator.Command> coordinator(
      String agentId) {
    return sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agentId);
  }

  private static <T> CompletionStage<T> unknownAgent(String agentId) {
    return CompletableFuture.failedFuture(new RefusedException(Rejection.Kind.NOT_FOUND,
        "agent " + agentId + " has no training coordinator yet (no completed trajectory)"));
  }

  private static <T> CompletionStage<T> unknownJob(String jobId) {
    return CompletableFuture.failedFuture(new RefusedException(Rejection.Kind.NOT_FOUND,
        "no job has this id (job ids look like job-<n>-<agentId>)"));
  }
}
