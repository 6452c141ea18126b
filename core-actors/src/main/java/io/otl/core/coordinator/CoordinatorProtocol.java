package io.otl.core.coordinator;

import io.otl.core.JsonSerializable;
import io.otl.core.coordinator.CoordinatorReplies.CancelReply;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.JobList;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorReplies.LineageReply;
import io.otl.core.coordinator.CoordinatorReplies.PolicyReply;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingBackendException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The commands of the {@link TrainingCoordinator} (its protocol; replies are in {@link
 * CoordinatorReplies}). Every command is {@link JsonSerializable}: sharding may deliver it from
 * another node. {@code TrainingCoordinator} implements this interface, so {@code
 * TrainingCoordinator.Trigger} and the like keep naming these types.
 */
public interface CoordinatorProtocol {

  public sealed interface Command extends JsonSerializable
      permits TrajectoryAvailable,
          TrajectoriesAvailable,
          Trigger,
          CancelJob,
          GetStatus,
          GetJob,
          ListJobs,
          GetJobLineage,
          SetPolicy,
          GetPolicy,
          Internal {}

  /**
   * A completed trajectory ({@code revision = false}, from TrajectoryCompleted) or a revised reward
   * ({@code revision = true}, from RewardRevised) of this agent. Sent at least once, possibly many
   * times and out of order by the read-side forwarder; every session is counted once.
   *
   * @param completedAt when the fact happened (the completion, or the revision); a revision older
   *     than the stored reward is a duplicate
   * @param msgIds the assistant messages' msgIds (the Trinity proxy's response ids); used only with
   *     the trinity-proxy backend
   * @param recordedAt when the node wrote the completion or revision (the server's clock, where
   *     {@code completedAt} may be a client's): the feed time that forgetting counts in; null from a
   *     sender that does not know it ({@code completedAt} stands in)
   */
  public record TrajectoryAvailable(
      String sessionId,
      String modelVersion,
      double reward,
      double qualityScore,
      Instant completedAt,
      boolean revision,
      List<String> msgIds,
      ActorRef<TrajectoryAck> replyTo,
      // absent when null: a node of an earlier build reads the message as before
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Instant recordedAt)
      implements Command {
    public TrajectoryAvailable {
      msgIds = msgIds == null ? List.of() : List.copyOf(msgIds);
    }

    public TrajectoryAvailable(String sessionId, String modelVersion, double reward, double qualityScore,
        Instant completedAt, boolean revision, List<String> msgIds, ActorRef<TrajectoryAck> replyTo) {
      this(sessionId, modelVersion, reward, qualityScore, completedAt, revision, msgIds, replyTo, null);
    }
  }

  /**
   * Many {@link TrajectoryAvailable} of this agent at once (their own {@code replyTo} is unused):
   * judged in order as if sent one by one, persisted in one write, answered with one ack per item.
   * The read-side feed sends these so that one agent with many completions is one journal write
   * per batch, not one per trajectory.
   */
  public record TrajectoriesAvailable(List<TrajectoryAvailable> items, ActorRef<TrajectoryAcks> replyTo)
      implements Command {
    public TrajectoriesAvailable {
      items = items == null ? List.of() : List.copyOf(items);
    }
  }

  /** The acks of a {@link TrajectoriesAvailable}, in its order. */
  public record TrajectoryAcks(List<TrajectoryAck> acks) implements JsonSerializable {}

  /** Manual trigger (always allowed). */
  public record Trigger(String requestedBy, ActorRef<TriggerReply> replyTo) implements Command {}

  public record CancelJob(String jobId, String requestedBy, ActorRef<CancelReply> replyTo)
      implements Command {}

  /** GET /v1/training/{agentId}. */
  public record GetStatus(ActorRef<CoordinatorView> replyTo) implements Command {}

  /** GET /v1/jobs/{jobId}. */
  public record GetJob(String jobId, ActorRef<JobReply> replyTo) implements Command {}

  /** GET /v1/jobs?agentId=&status=; {@code status} null lists every job, oldest first. */
  public record ListJobs(JobStatus status, ActorRef<JobList> replyTo) implements Command {}

  /** The exact trajectories of a job (kept out of the job JSON, which stays small). */
  public record GetJobLineage(String jobId, ActorRef<LineageReply> replyTo) implements Command {}

  /**
   * PUT /v1/training/{agentId}/policy: replaces the agent's run-time overrides (an empty map goes
   * back to the file's policy). Refused INVALID_INPUT, with nothing persisted, when a key is not
   * overridable or a value is refused (see {@link PolicyOverrides}).
   */
  public record SetPolicy(Map<String, Object> overrides, String requestedBy, ActorRef<PolicyReply> replyTo)
      implements Command {
    public SetPolicy {
      overrides = io.otl.core.PlainValues.plain(overrides); // from another node: JSON arrays as Scala lists
    }
  }

  /** GET /v1/training/{agentId}/policy. */
  public record GetPolicy(ActorRef<PolicyReply> replyTo) implements Command {}

  /**
   * Messages the entity sends itself (timers, {@code pipeToSelf} results). Public only so that
   * tests can drive timers; nothing else should send them.
   */
  public sealed interface Internal extends Command
      permits Recovered,
          ScheduleTick,
          PollTick,
          RetryStep,
          ExportFinished,
          SubmitFinished,
          StatusPolled,
          CancelFinished,
          HandOverFinished,
          RewardForwardFinished,
          ForwardRetryTick,
          ProxyMetricsTick,
          ProxyMetricsPolled,
          ProxyHandOverFinished,
          ProxyHandOverRetry,
          RolloutChecked,
          ThresholdRecheck {}

  /** Sent to itself once recovery completed: re-arms timers and resumes interrupted work. */
  public enum Recovered implements Internal {
    INSTANCE
  }

  /** The schedule timer: a cron slot may be due. */
  public enum ScheduleTick implements Internal {
    INSTANCE
  }

  /**
   * While a reached threshold waits for a rollout, ask again: after a rollback or a promote with no
   * traffic left to bring a trajectory, the job never started and the view kept naming the old state.
   */
  public enum ThresholdRecheck implements Internal {
    INSTANCE
  }

  /** The poll timer: ask the backend about the active job. */
  public enum PollTick implements Internal {
    INSTANCE
  }

  /** A back-off expired: retry the pending step of the job (export, submit, cancel, hand-over). */
  public record RetryStep(String jobId) implements Internal {}

  public record ExportFinished(String jobId, DatasetManifest manifest, String error) implements Internal {}

  /** Result of submit (ray-jobs) or commit (trinity-proxy); {@code externalId} null on failure. */
  public record SubmitFinished(
      String jobId, int attempt, String externalId, String error, boolean retryable)
      implements Internal {}

  public record StatusPolled(
      String jobId, BackendJobStatus status, String error, TrainingBackendException.Kind errorKind)
      implements Internal {}

  /**
   * @param beforeAcknowledged the stop was sent while the backend had not acknowledged the job's
   *     submission (REQUESTED): its "unknown job" may only mean the submission had not landed yet
   */
  public record CancelFinished(String jobId, String error, TrainingBackendException.Kind errorKind,
      boolean beforeAcknowledged) implements Internal {
    public CancelFinished(String jobId, String error, TrainingBackendException.Kind errorKind) {
      this(jobId, error, errorKind, false);
    }
  }

  /**
   * @param version the name the job gave its candidate
   * @param handedOverAs the name ModelVersion has it under (another when that one was taken), null on error
   */
  public record HandOverFinished(String jobId, String version, String handedOverAs, String error)
      implements Internal {}

  /** @param refused the proxy refused the reward for good ({@link PortCalls#refusedForGood}); error says why */
  public record RewardForwardFinished(String sessionId, String error, boolean refused) implements Internal {
    public RewardForwardFinished(String sessionId, String error) {
      this(sessionId, error, false);
    }
  }

  public enum ForwardRetryTick implements Internal {
    INSTANCE
  }

  public enum ProxyMetricsTick implements Internal {
    INSTANCE
  }

  public record ProxyMetricsPolled(ProxyMetrics metrics, String error) implements Internal {}

  /** Like {@link HandOverFinished}, for the proxy's pending candidate. */
  public record ProxyHandOverFinished(String version, String handedOverAs, String error) implements Internal {}

  public enum ProxyHandOverRetry implements Internal {
    INSTANCE
  }
}
