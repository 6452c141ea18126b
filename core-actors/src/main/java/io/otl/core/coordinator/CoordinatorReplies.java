package io.otl.core.coordinator;

import io.otl.core.JsonSerializable;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.entity.Rejection;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the {@link TrainingCoordinator} answers: replies to its {@link CoordinatorProtocol commands}
 * and the views of design §7.1 (their JSON field names are the HTTP contract).
 */
public interface CoordinatorReplies {

  /** What became of a {@link CoordinatorProtocol.TrajectoryAvailable}. */
  public enum Disposition {
    /** New eligible trajectory: it joined the pool (counted once). */
    POOLED,
    /** New trajectory below min-quality: remembered, never counted. */
    FILTERED,
    /** A newer reward for a pooled trajectory: stored, not counted again. */
    REWARD_UPDATED,
    /** Nothing new (a repeat, an older revision, or a session already used by a job). */
    DUPLICATE,
    /** Refused: the message is malformed; nothing persisted. */
    INVALID
  }

  public record TrajectoryAck(String sessionId, Disposition disposition, String detail)
      implements JsonSerializable {}

  /** HTTP mapping: NOT_FOUND → 404, CONFLICT → 409, INVALID_INPUT → 400. */
  public enum ErrorCode {
    NOT_FOUND,
    CONFLICT,
    INVALID_INPUT
  }

  public sealed interface TriggerReply extends JsonSerializable permits TriggerAccepted, Refused {}

  public sealed interface CancelReply extends JsonSerializable permits CancelAccepted, Refused {}

  public sealed interface JobReply extends JsonSerializable permits JobView, Refused {}

  public sealed interface LineageReply extends JsonSerializable permits JobLineage, Refused {}

  public sealed interface PolicyReply extends JsonSerializable permits PolicyView, Refused {}

  /** A command was refused; nothing was persisted. */
  public record Refused(ErrorCode code, String message)
      implements TriggerReply, CancelReply, JobReply, LineageReply, PolicyReply, Rejection {

    @Override
    public Rejection.Kind rejectionKind() {
      return switch (code) {
        case NOT_FOUND -> Rejection.Kind.NOT_FOUND;
        case CONFLICT -> Rejection.Kind.CONFLICT;
        case INVALID_INPUT -> Rejection.Kind.INVALID_INPUT;
      };
    }
  }

  /**
   * The job exists (durably). A failed pre-flight still creates it, with status FAILED and the
   * reasons in {@code preflightFailures} (and in its history): HTTP answers 202 with the job id.
   * {@code preflightWarnings} are items that did not stop the job but may stop it on a real backend
   * (e.g. too few GPUs for an RL job); empty when none.
   */
  public record TriggerAccepted(String jobId, JobStatus status, List<String> preflightFailures,
      List<String> preflightWarnings) implements TriggerReply {
    public TriggerAccepted {
      preflightFailures = preflightFailures == null ? List.of() : List.copyOf(preflightFailures);
      preflightWarnings = preflightWarnings == null ? List.of() : List.copyOf(preflightWarnings);
    }
  }

  /** The cancellation is recorded; {@code status} is CANCELLED or, while the backend stops it, the current one. */
  public record CancelAccepted(String jobId, JobStatus status) implements CancelReply {}

  public record JobList(List<JobView> jobs) implements JsonSerializable {}

  // ------------------------------------------------------------------------------------------
  // Views (design §7.1 "training" and "job" shapes)
  // ------------------------------------------------------------------------------------------

  /**
   * @param triggers the configured trigger names in lower case (manual is accepted in any case)
   * @param nextScheduledRun next cron slot, null when the scheduled trigger is off
   * @param waitingFor why the threshold, reached, starts no job ("rollout of v3 is CANARY"), as of
   *     its last check; null when no job is active only because the pool is short, or a job is active
   * @param meanQuality mean quality score of the pool, null when the pool is empty
   * @param backend {@code ray-jobs} or {@code trinity-proxy}
   * @param status {@code enabled}, or {@code disabled} when {@code agentscope.training.enabled = false}
   */
  public record CoordinatorView(
      String agentId,
      int poolSize,
      int minSamples,
      List<String> triggers,
      Instant nextScheduledRun,
      JobSummary activeJob,
      String waitingFor,
      Double meanQuality,
      String backend,
      String status)
      implements JsonSerializable {}

  public record JobSummary(String jobId, JobStatus status) implements JsonSerializable {}

  /**
   * The job shape of design §7.1, plus {@code warnings}: what did not stop the job but would make a
   * real backend train nothing (its exported rows fill no batch); absent when there is none.
   */
  public record JobView(
      String jobId,
      String agentId,
      JobStatus status,
      String trigger,
      String algorithm,
      String baseModel,
      Map<String, Object> hyperparams,
      DatasetView dataset,
      BackendView backend,
      OutputModelView outputModel,
      String error,
      List<HistoryEntry> history,
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
      List<String> warnings)
      implements JobReply {
    public JobView {
      // a reply from a node of an earlier build (a rolling upgrade) carries no warnings
      warnings = warnings == null ? List.of() : List.copyOf(warnings);
    }
  }

  /**
   * @param exclusions trajectories left out, by reason (empty: not shown)
   * @param lineage start checkpoint, replay and held-out set (continual training; null: not shown)
   */
  public record DatasetView(int count, String sha256, String path,
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
      Map<String, Integer> exclusions,
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
      DatasetLineage lineage) implements JsonSerializable {}

  public record BackendView(String type, String externalId) implements JsonSerializable {}

  /** @param version the candidate's name at ModelVersion */
  public record OutputModelView(String checkpointUri, Map<String, Double> metrics, String version)
      implements JsonSerializable {}

  /** One line of a job's history; several lines may share a status (e.g. retries). */
  public record HistoryEntry(JobStatus status, Instant at, String detail) implements JsonSerializable {}

  /**
   * @param sessionIds the trajectories the job took from the pool
   * @param dataset the exporter's manifest (the trajectories actually written, count, SHA-256),
   *     null before export
   */
  public record JobLineage(String jobId, String agentId, List<String> sessionIds, DatasetManifest dataset)
      implements LineageReply {}
}
