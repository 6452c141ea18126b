package io.otl.core.coordinator;

import io.otl.core.Persisted;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.OutputModel;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The events of the {@link TrainingCoordinator} (facts only). They are bound to the journal by
 * logical names (persistence's {@code PersistedTypes}), not by where they are declared: their JSON
 * field names are the journal's format and never change (docs/schema-evolution.md).
 */
public interface CoordinatorEvents {

  /** Tag of every job-lifecycle event (audit, Kafka). Pool and schedule events are not tagged. */
  String JOBS_TAG = "coordinator-jobs";

  public sealed interface Event extends Persisted permits PoolEvent, ScheduleEvent, JobEvent, PolicyChanged,
      ProxyRestarted, SessionsForgotten {
    Instant at();
  }

  /** High-volume, untagged. */
  public sealed interface PoolEvent extends Event
      permits TrajectoryPooled, TrajectoryFiltered, RewardUpdated, RewardForwarded {
    String sessionId();
  }

  /**
   * The agent's run-time policy overrides were replaced (untagged). {@code overrides} holds every
   * run-time key (flat, relative to training-runner); empty means the file's policy again.
   */
  public record PolicyChanged(Map<String, Object> overrides, String changedBy, Instant at) implements Event {
    public PolicyChanged {
      overrides = io.otl.core.PlainValues.plain(overrides); // JSON arrays replay as Scala lists
    }
  }

  /**
   * trinity-proxy (untagged): the proxy's {@code model_version} went below the last one seen, so it
   * restarted and counts its versions from its start again; {@code modelVersion} is where it is now.
   * Recorded even at 0 (the weights it started with, no candidate), so that its next version is
   * new although the first run had that number too.
   *
   * @param restarts how many restarts of the proxy this coordinator has seen, this one included
   */
  public record ProxyRestarted(int restarts, int modelVersion, Instant at) implements Event {}

  /**
   * Used and filtered sessions no revision can reach any more were dropped from the state (untagged):
   * every such entry whose newest message was written before {@code before}; pooled ones are never
   * dropped. From then on a completion or revision of a session the coordinator does not know, written
   * before {@code before} plus the feedback window, is a repeat (see {@code SessionForgetting}).
   *
   * @param count how many entries it dropped (for the log and the audit; replay recounts nothing)
   */
  public record SessionsForgotten(Instant before, int count, Instant at) implements Event {}

  /** Untagged. */
  public sealed interface ScheduleEvent extends Event
      permits ScheduleArmed, ScheduledSlotFired, ScheduledSlotSkipped {}

  /** Tagged {@link #JOBS_TAG}. */
  public sealed interface JobEvent extends Event
      permits JobRequested,
          PreflightFailed,
          DatasetExported,
          DatasetExportFailed,
          JobSubmitting,
          JobSubmitted,
          JobSubmitFailed,
          JobStatusChanged,
          JobSucceeded,
          JobFailed,
          JobCancelRequested,
          JobCancelled,
          CandidateHandedOver,
          ProxyModelObserved {
    /** The job; null only for a proxy model version observed before any commit job. */
    String jobId();
  }

  /**
   * An eligible trajectory joined the pool.
   *
   * @param msgIds recorded only with the trinity-proxy backend (needed to forward the reward)
   * @param recordedAt when the node wrote the completion (or revision) it came from, the server's
   *     clock; null when the message did not say (older events, older senders)
   */
  public record TrajectoryPooled(
      String sessionId,
      String modelVersion,
      double reward,
      double qualityScore,
      Instant completedAt,
      List<String> msgIds,
      Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Instant recordedAt)
      implements PoolEvent {
    public TrajectoryPooled {
      msgIds = msgIds == null ? List.of() : List.copyOf(msgIds);
    }

    public TrajectoryPooled(String sessionId, String modelVersion, double reward, double qualityScore,
        Instant completedAt, List<String> msgIds, Instant at) {
      this(sessionId, modelVersion, reward, qualityScore, completedAt, msgIds, at, null);
    }
  }

  /**
   * A trajectory below min-quality: remembered so that it is never counted.
   *
   * @param recordedAt as in {@link TrajectoryPooled}
   */
  public record TrajectoryFiltered(String sessionId, double qualityScore, Instant completedAt, Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Instant recordedAt)
      implements PoolEvent {
    public TrajectoryFiltered(String sessionId, double qualityScore, Instant completedAt, Instant at) {
      this(sessionId, qualityScore, completedAt, at, null);
    }
  }

  /**
   * A pooled trajectory's reward (and quality) was revised; it is not counted again.
   *
   * @param recordedAt as in {@link TrajectoryPooled}
   */
  public record RewardUpdated(
      String sessionId, double reward, double qualityScore, Instant revisedAt, Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Instant recordedAt)
      implements PoolEvent {
    public RewardUpdated(String sessionId, double reward, double qualityScore, Instant revisedAt, Instant at) {
      this(sessionId, reward, qualityScore, revisedAt, at, null);
    }
  }

  /**
   * trinity-proxy: the reward was forwarded to the proxy (never forwarded again).
   *
   * @param refused null: the proxy took it; else why the proxy refused it for good (a 4xx other than 404,
   *     408 and 429: sent again it would be refused again), so that it stops holding the agent's commit
   */
  public record RewardForwarded(
      String sessionId,
      Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          String refused)
      implements PoolEvent {
    public RewardForwarded(String sessionId, Instant at) {
      this(sessionId, at, null);
    }
  }

  /**
   * The schedule (re)starts: slots after {@code from} count. Recorded the first time and whenever
   * the cron expression or the zone changed, so a changed schedule never fires "missed" slots.
   */
  public record ScheduleArmed(String cron, String zone, Instant from, Instant at) implements ScheduleEvent {}

  /**
   * @param missed true when the slot was missed while no node ran and fires late, at start-up
   * @param jobId the job it started
   */
  public record ScheduledSlotFired(Instant slot, boolean missed, String jobId, Instant at)
      implements ScheduleEvent {}

  public record ScheduledSlotSkipped(Instant slot, String reason, Instant at) implements ScheduleEvent {}

  /**
   * A job starts: it takes every pooled trajectory ({@code sessionIds}); the pool restarts from
   * zero. Carries the configuration it runs with, so later config changes don't rewrite history.
   */
  public record JobRequested(
      String jobId,
      TriggerType trigger,
      String requestedBy,
      Backend backend,
      String algorithm,
      String baseModel,
      Map<String, Object> hyperparams,
      List<String> sessionIds,
      Instant at)
      implements JobEvent {
    public JobRequested {
      hyperparams = hyperparams == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(hyperparams));
      sessionIds = sessionIds == null ? List.of() : List.copyOf(sessionIds);
    }
  }

  /**
   * The pre-flight checklist failed: the job is FAILED with these reasons.
   *
   * @param sessionsReturned true: the job's trajectories go back to the pool (checks made before
   *     export); false: they stay with the failed job (PII found in the exported file: they would
   *     fail every later job too)
   * @param thresholdRearmAt the threshold trigger may fire again once the pool has this many
   *     trajectories (so a failing checklist does not start a job for every new trajectory); null
   *     for no restriction
   */
  public record PreflightFailed(
      String jobId, List<String> reasons, boolean sessionsReturned, Integer thresholdRearmAt, Instant at)
      implements JobEvent {
    public PreflightFailed {
      reasons = List.copyOf(reasons);
    }
  }

  public record DatasetExported(String jobId, DatasetManifest manifest, Instant at) implements JobEvent {}

  public record DatasetExportFailed(
      String jobId, int attempt, String error, Instant nextAttemptAt, Instant at)
      implements JobEvent {}

  /** Intent: submission (ray-jobs) or commit (trinity-proxy) number {@code attempt} is being sent. */
  public record JobSubmitting(String jobId, int attempt, Instant at) implements JobEvent {}

  public record JobSubmitted(String jobId, String externalId, Instant at) implements JobEvent {}

  /** A retryable submission failure; the job stays REQUESTED until {@code nextAttemptAt}. */
  public record JobSubmitFailed(
      String jobId, int attempt, String error, Instant nextAttemptAt, Instant at)
      implements JobEvent {}

  public record JobStatusChanged(String jobId, JobStatus status, String message, Instant at)
      implements JobEvent {}

  /**
   * @param outputModel the trained model (null for a trinity-proxy commit)
   * @param candidateVersion the name it gets at ModelVersion ({@code v<n>}), null without a model
   */
  public record JobSucceeded(String jobId, OutputModel outputModel, String candidateVersion, Instant at)
      implements JobEvent {}

  public record JobFailed(String jobId, String error, Instant at) implements JobEvent {}

  public record JobCancelRequested(String jobId, String requestedBy, Instant at) implements JobEvent {}

  /**
   * The job ended as CANCELLED.
   *
   * @param unconfirmed null when the backend confirmed the stop (or never had the job); otherwise
   *     what is unknown: the stop of a submission the backend never acknowledged could not be
   *     delivered within {@code CancelRetries.MAX_ATTEMPTS}, so a job of that id may still run on the
   *     cluster. Shown as the job's error. Absent in journals written before it existed.
   */
  public record JobCancelled(
      String jobId,
      String detail,
      Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          String unconfirmed)
      implements JobEvent {

    public JobCancelled(String jobId, String detail, Instant at) {
      this(jobId, detail, at, null);
    }
  }

  /**
   * ModelVersion has the candidate.
   *
   * @param version the name ModelVersion has it under
   * @param renamedFrom the name the coordinator gave it ({@code JobSucceeded} / {@code
   *     ProxyModelObserved}) when another version held that name; null when it kept its name (and
   *     in journals written before names could be taken)
   */
  public record CandidateHandedOver(
      String jobId,
      String version,
      Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          String renamedFrom)
      implements JobEvent {

    public CandidateHandedOver(String jobId, String version, Instant at) {
      this(jobId, version, at, null);
    }

    /** The name the coordinator gave the candidate before the hand-over. */
    public String givenName() {
      return renamedFrom == null ? version : renamedFrom;
    }
  }

  /**
   * trinity-proxy: the proxy reports a new model version, which becomes candidate {@code version}
   * ({@code proxy-<modelVersion>}, or {@code proxy-r<restarts>-<modelVersion>} after a restart).
   *
   * @param jobId the latest commit job before it (null if none)
   * @param restarts how often the proxy's {@code model_version} had gone back (a proxy restart
   *     counts its versions from its start again) before this observation; null for none, as in
   *     journals written before restarts were told apart
   */
  public record ProxyModelObserved(
      String jobId,
      int modelVersion,
      String version,
      Map<String, Double> metrics,
      Instant at,
      // absent when null: the event's JSON stays byte for byte what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Integer restarts)
      implements JobEvent {
    public ProxyModelObserved {
      metrics = metrics == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(metrics));
      restarts = restarts == null || restarts == 0 ? null : restarts;
    }

    /** An observation of the proxy's first run (no restart seen). */
    public ProxyModelObserved(String jobId, int modelVersion, String version, Map<String, Double> metrics, Instant at) {
      this(jobId, modelVersion, version, metrics, at, null);
    }

    /** The restarts seen before it, 0 for none. */
    public int restartsSeen() {
      return restarts == null ? 0 : restarts;
    }
  }

  /** Tags of an event: job events carry {@link #JOBS_TAG}, the others none. */
  public static Set<String> tagsOf(Event event) {
    return event instanceof JobEvent ? Set.of(JOBS_TAG) : Set.of();
  }
}
