package io.otl.core.coordinator;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.otl.core.Ids;
import io.otl.core.JsonSerializable;
import io.otl.core.Persisted;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.MissedSlots;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.OnlineTrainingBackend;
import io.otl.core.training.OutputModel;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingBackend;
import io.otl.core.training.TrainingBackendException;
import io.otl.core.training.TrainingJobSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EffectBuilder;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The training coordinator of one agent (entity key = agentId, design §3.2): the training pool,
 * the triggers (threshold, scheduled, manual), the pre-flight checklist and the job lifecycle
 * REQUESTED → SUBMITTED → RUNNING → SUCCEEDED | FAILED | CANCELLED, the hand-over of trained models
 * to ModelVersion, and the online (trinity-proxy) variant. See {@code package-info.java} for the
 * choices made where the design is silent.
 *
 * <p>Domain only: I/O goes through the ports ({@link DatasetExporter}, {@link TrainingBackend} or
 * {@link OnlineTrainingBackend}, {@link CandidateSink}); their results come back as internal
 * commands through {@code pipeToSelf}. Every intent is persisted before the call it announces
 * (JobSubmitting before submit, JobRequested before export, JobSucceeded before hand-over), so a
 * crash in between is recovered by repeating an idempotent call.
 */
public final class TrainingCoordinator
    extends EventSourcedBehaviorWithEnforcedReplies<
        TrainingCoordinator.Command, TrainingCoordinator.Event, TrainingCoordinator.State> {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "TrainingCoordinator");

  /** Tag of every job-lifecycle event (audit, Kafka). Pool and schedule events are not tagged. */
  public static final String JOBS_TAG = "coordinator-jobs";

  static final String SCHEDULE_TIMER = "schedule";
  static final String POLL_TIMER = "poll";
  static final String FORWARD_TIMER = "forward-retry";
  static final String METRICS_TIMER = "proxy-metrics";
  static final String PROXY_HANDOVER_TIMER = "proxy-handover";

  /** Longest single timer delay; a later slot is reached by re-arming (robust to clock drift). */
  private static final Duration MAX_TIMER_DELAY = Duration.ofHours(6);
  /** How many missed slots are walked one by one before jumping to the last day. */
  private static final int MAX_SLOT_WALK = 10_000;
  /** Most pending rewards forwarded per retry round. */
  private static final int FORWARD_BATCH = 256;

  /** The persistence id {@code TrainingCoordinator|<agentId>}. */
  public static PersistenceId persistenceId(String agentId) {
    return PersistenceId.of(ENTITY_TYPE_KEY.name(), agentId);
  }

  // ------------------------------------------------------------------------------------------
  // Job ids
  // ------------------------------------------------------------------------------------------

  /** {@code job-<seq>-<agentId>}: unique cluster-wide (one coordinator per agent) and routable. */
  public static String jobId(int seq, String agentId) {
    return "job-" + seq + "-" + agentId;
  }

  /**
   * The agent of a job id made by {@link #jobId}: {@code job-12-my-agent-3} → {@code my-agent-3}.
   * Empty when {@code jobId} is not of that form (so HTTP can answer 404).
   */
  public static Optional<String> agentIdOf(String jobId) {
    if (jobId == null || !jobId.startsWith("job-")) {
      return Optional.empty();
    }
    int i = 4;
    while (i < jobId.length() && jobId.charAt(i) >= '0' && jobId.charAt(i) <= '9') {
      i++;
    }
    if (i == 4 || jobId.charAt(4) == '0' || i - 4 > 9 || i >= jobId.length() || jobId.charAt(i) != '-') {
      return Optional.empty();
    }
    String agentId = jobId.substring(i + 1);
    return Ids.isValidAgentId(agentId) ? Optional.of(agentId) : Optional.empty();
  }

  // ------------------------------------------------------------------------------------------
  // Statuses
  // ------------------------------------------------------------------------------------------

  public enum JobStatus {
    REQUESTED,
    SUBMITTED,
    RUNNING,
    SUCCEEDED,
    FAILED,
    CANCELLED;

    public boolean isActive() {
      return this == REQUESTED || this == SUBMITTED || this == RUNNING;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Commands
  // ------------------------------------------------------------------------------------------

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
   */
  public record TrajectoryAvailable(
      String sessionId,
      String modelVersion,
      double reward,
      double qualityScore,
      Instant completedAt,
      boolean revision,
      List<String> msgIds,
      ActorRef<TrajectoryAck> replyTo)
      implements Command {
    public TrajectoryAvailable {
      msgIds = msgIds == null ? List.of() : List.copyOf(msgIds);
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
      implements Command {}

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
          RolloutChecked {}

  /** Sent to itself once recovery completed: re-arms timers and resumes interrupted work. */
  public enum Recovered implements Internal {
    INSTANCE
  }

  /** The schedule timer: a cron slot may be due. */
  public enum ScheduleTick implements Internal {
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

  public record StatusPolled(String jobId, BackendJobStatus status, String error, String errorKind)
      implements Internal {}

  public record CancelFinished(String jobId, String error, String errorKind) implements Internal {}

  public record HandOverFinished(String jobId, String version, String error) implements Internal {}

  public record RewardForwardFinished(String sessionId, String error) implements Internal {}

  public enum ForwardRetryTick implements Internal {
    INSTANCE
  }

  public enum ProxyMetricsTick implements Internal {
    INSTANCE
  }

  public record ProxyMetricsPolled(ProxyMetrics metrics, String error) implements Internal {}

  public record ProxyHandOverFinished(String version, String error) implements Internal {}

  public enum ProxyHandOverRetry implements Internal {
    INSTANCE
  }

  // ------------------------------------------------------------------------------------------
  // Replies
  // ------------------------------------------------------------------------------------------

  /** What became of a {@link TrajectoryAvailable}. */
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
      implements TriggerReply, CancelReply, JobReply, LineageReply, PolicyReply {}

  /**
   * The job exists (durably). A failed pre-flight still creates it, with status FAILED and the
   * reasons in {@code preflightFailures} (and in its history): HTTP answers 202 with the job id.
   */
  public record TriggerAccepted(String jobId, JobStatus status, List<String> preflightFailures)
      implements TriggerReply {}

  /** The cancellation is recorded; {@code status} is CANCELLED or, while the backend stops it, the current one. */
  public record CancelAccepted(String jobId, JobStatus status) implements CancelReply {}

  public record JobList(List<JobView> jobs) implements JsonSerializable {}

  // ------------------------------------------------------------------------------------------
  // Views (design §7.1 "training" and "job" shapes)
  // ------------------------------------------------------------------------------------------

  /**
   * @param triggers the configured trigger names in lower case (manual is accepted in any case)
   * @param nextScheduledRun next cron slot, null when the scheduled trigger is off
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
      Double meanQuality,
      String backend,
      String status)
      implements JsonSerializable {}

  public record JobSummary(String jobId, JobStatus status) implements JsonSerializable {}

  /** Exactly the job shape of design §7.1. */
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
      List<HistoryEntry> history)
      implements JobReply {}

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

  // ------------------------------------------------------------------------------------------
  // Events (facts only)
  // ------------------------------------------------------------------------------------------

  public sealed interface Event extends Persisted permits PoolEvent, ScheduleEvent, JobEvent, PolicyChanged {
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
      overrides = overrides == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(overrides));
    }
  }

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
   */
  public record TrajectoryPooled(
      String sessionId,
      String modelVersion,
      double reward,
      double qualityScore,
      Instant completedAt,
      List<String> msgIds,
      Instant at)
      implements PoolEvent {
    public TrajectoryPooled {
      msgIds = msgIds == null ? List.of() : List.copyOf(msgIds);
    }
  }

  /** A trajectory below min-quality: remembered so that it is never counted. */
  public record TrajectoryFiltered(String sessionId, double qualityScore, Instant completedAt, Instant at)
      implements PoolEvent {}

  /** A pooled trajectory's reward (and quality) was revised; it is not counted again. */
  public record RewardUpdated(
      String sessionId, double reward, double qualityScore, Instant revisedAt, Instant at)
      implements PoolEvent {}

  /** trinity-proxy: the reward was forwarded to the proxy (never forwarded again). */
  public record RewardForwarded(String sessionId, Instant at) implements PoolEvent {}

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

  public record JobCancelled(String jobId, String detail, Instant at) implements JobEvent {}

  /** ModelVersion has the candidate. */
  public record CandidateHandedOver(String jobId, String version, Instant at) implements JobEvent {}

  /**
   * trinity-proxy: the proxy reports a new model version, which becomes candidate {@code version}
   * ({@code proxy-<modelVersion>}).
   *
   * @param jobId the latest commit job before it (null if none)
   */
  public record ProxyModelObserved(
      String jobId, int modelVersion, String version, Map<String, Double> metrics, Instant at)
      implements JobEvent {
    public ProxyModelObserved {
      metrics = metrics == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(metrics));
    }
  }

  /** Tags of an event: job events carry {@link #JOBS_TAG}, the others none. */
  public static Set<String> tagsOf(Event event) {
    return event instanceof JobEvent ? Set.of(JOBS_TAG) : Set.of();
  }

  // ------------------------------------------------------------------------------------------
  // State (immutable; see PersistentMap for why and how it stays O(log n) per event)
  // ------------------------------------------------------------------------------------------

  /** What the coordinator knows of one session. Written as a JSON array in snapshots (compact). */
  @JsonFormat(shape = JsonFormat.Shape.ARRAY)
  @JsonPropertyOrder({"kind", "reward", "quality", "at"})
  public record SessionEntry(Kind kind, double reward, double quality, Instant at) {
    public enum Kind {
      /** In the pool, eligible, not yet used. */
      POOLED,
      /** Below min-quality when seen. */
      FILTERED,
      /** Taken by a job: never pooled again. */
      USED
    }

    @JsonCreator
    public static SessionEntry of(
        @JsonProperty("kind") Kind kind,
        @JsonProperty("reward") double reward,
        @JsonProperty("quality") double quality,
        @JsonProperty("at") Instant at) {
      return new SessionEntry(kind, reward, quality, at);
    }

    SessionEntry withKind(Kind k) {
      return new SessionEntry(k, reward, quality, at);
    }
  }

  /** trinity-proxy: a reward still to be forwarded. */
  public record PendingReward(List<String> msgIds, double reward) {
    public PendingReward {
      msgIds = List.copyOf(msgIds);
    }
  }

  /**
   * @param from slots after this instant count
   * @param lastSlot the last slot handled (fired or skipped), null before the first
   */
  public record ScheduleState(String cron, String zone, Instant from, Instant lastSlot) {
    /** Slots strictly after this instant are still to be handled. */
    Instant base() {
      return lastSlot != null && lastSlot.isAfter(from) ? lastSlot : from;
    }
  }

  /** One job, as its events made it. */
  public record Job(
      String jobId,
      TriggerType trigger,
      String requestedBy,
      Backend backend,
      String algorithm,
      String baseModel,
      Map<String, Object> hyperparams,
      List<String> sessionIds,
      Instant requestedAt,
      JobStatus status,
      DatasetManifest manifest,
      int exportAttempts,
      int submitAttempts,
      boolean submitting,
      String externalId,
      String lastError,
      Instant nextAttemptAt,
      OutputModel outputModel,
      String candidateVersion,
      boolean handedOver,
      boolean cancelRequested,
      List<String> preflightFailures,
      List<HistoryEntry> history) {

    public Job {
      hyperparams = hyperparams == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(hyperparams));
      sessionIds = sessionIds == null ? List.of() : List.copyOf(sessionIds);
      preflightFailures = preflightFailures == null ? List.of() : List.copyOf(preflightFailures);
      history = history == null ? List.of() : List.copyOf(history);
    }

    Builder edit() {
      return new Builder(this);
    }

    /** A copy-and-change helper (the record has many fields; events change a few). */
    static final class Builder {
      private final Job j;
      JobStatus status;
      DatasetManifest manifest;
      int exportAttempts;
      int submitAttempts;
      boolean submitting;
      String externalId;
      String lastError;
      Instant nextAttemptAt;
      OutputModel outputModel;
      String candidateVersion;
      boolean handedOver;
      boolean cancelRequested;
      List<String> preflightFailures;
      final List<HistoryEntry> history;

      Builder(Job j) {
        this.j = j;
        status = j.status;
        manifest = j.manifest;
        exportAttempts = j.exportAttempts;
        submitAttempts = j.submitAttempts;
        submitting = j.submitting;
        externalId = j.externalId;
        lastError = j.lastError;
        nextAttemptAt = j.nextAttemptAt;
        outputModel = j.outputModel;
        candidateVersion = j.candidateVersion;
        handedOver = j.handedOver;
        cancelRequested = j.cancelRequested;
        preflightFailures = j.preflightFailures;
        history = new ArrayList<>(j.history);
      }

      Builder log(JobStatus s, Instant at, String detail) {
        history.add(new HistoryEntry(s, at, detail));
        return this;
      }

      Job build() {
        return new Job(j.jobId, j.trigger, j.requestedBy, j.backend, j.algorithm, j.baseModel,
            j.hyperparams, j.sessionIds, j.requestedAt, status, manifest, exportAttempts,
            submitAttempts, submitting, externalId, lastError, nextAttemptAt, outputModel,
            candidateVersion, handedOver, cancelRequested, preflightFailures, history);
      }
    }
  }

  /**
   * The coordinator's state. Immutable: every field is a value; the session maps share structure
   * between versions, so an event costs O(log n) whatever the pool size.
   *
   * @param sessions every session seen: pooled, filtered or used
   * @param poolSize number of POOLED sessions
   * @param poolQualitySum sum of their quality scores (for the mean)
   * @param pendingRewards trinity-proxy: rewards not yet forwarded
   * @param jobs every job, oldest first
   * @param nextJobSeq the seq of the next job id
   * @param activeJobId the job in REQUESTED, SUBMITTED or RUNNING (at most one), else null
   * @param candidatesProduced batch jobs that succeeded with a model (names {@code v<n>})
   * @param thresholdRearmAt see {@link PreflightFailed#thresholdRearmAt()}
   * @param schedule null until the scheduled trigger was first armed
   * @param proxyModelVersion the latest proxy model version observed
   * @param pendingProxyCandidate observed but not yet handed over, else null
   * @param policyChange the last run-time policy change (its overrides are in force), null when none
   */
  public record State(
      PersistentMap<SessionEntry> sessions,
      int poolSize,
      double poolQualitySum,
      PersistentMap<PendingReward> pendingRewards,
      List<Job> jobs,
      int nextJobSeq,
      String activeJobId,
      int candidatesProduced,
      Integer thresholdRearmAt,
      ScheduleState schedule,
      int proxyModelVersion,
      ProxyModelObserved pendingProxyCandidate,
      PolicyChanged policyChange)
      implements Persisted {

    public static final State EMPTY = new State(PersistentMap.empty(), 0, 0.0, PersistentMap.empty(),
        List.of(), 1, null, 0, null, null, 0, null, null);

    public State {
      sessions = sessions == null ? PersistentMap.empty() : sessions;
      pendingRewards = pendingRewards == null ? PersistentMap.empty() : pendingRewards;
      jobs = jobs == null ? List.of() : List.copyOf(jobs);
    }

    public Optional<Job> job(String jobId) {
      for (int i = jobs.size() - 1; i >= 0; i--) {
        if (jobs.get(i).jobId().equals(jobId)) {
          return Optional.of(jobs.get(i));
        }
      }
      return Optional.empty();
    }

    public Optional<Job> activeJob() {
      return activeJobId == null ? Optional.empty() : job(activeJobId);
    }

    /** Mean quality of the pool, null when it is empty. */
    public Double meanQuality() {
      return poolSize == 0 ? null : poolQualitySum / poolSize;
    }

    /** The pooled session ids, oldest completion first (ties by id). O(sessions). */
    public List<String> poolSessionIds() {
      List<Map.Entry<String, SessionEntry>> pooled = new ArrayList<>(poolSize);
      sessions.forEach((id, e) -> {
        if (e.kind() == SessionEntry.Kind.POOLED) {
          pooled.add(Map.entry(id, e));
        }
      });
      pooled.sort(Comparator.<Map.Entry<String, SessionEntry>, Instant>comparing(
              e -> e.getValue().at(), Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(Map.Entry::getKey));
      List<String> ids = new ArrayList<>(pooled.size());
      for (Map.Entry<String, SessionEntry> e : pooled) {
        ids.add(e.getKey());
      }
      return ids;
    }

    State withJob(Job job) {
      List<Job> next = new ArrayList<>(jobs.size() + 1);
      boolean replaced = false;
      for (Job j : jobs) {
        if (j.jobId().equals(job.jobId())) {
          next.add(job);
          replaced = true;
        } else {
          next.add(j);
        }
      }
      if (!replaced) {
        next.add(job);
      }
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, next, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion,
          pendingProxyCandidate, policyChange);
    }

    State withActive(String active) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq, active,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange);
    }

    State withSessions(PersistentMap<SessionEntry> s, int size, double sum) {
      return new State(s, size, size == 0 ? 0.0 : sum, pendingRewards, jobs, nextJobSeq, activeJobId,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange);
    }

    State withPending(PersistentMap<PendingReward> p) {
      return new State(sessions, poolSize, poolQualitySum, p, jobs, nextJobSeq, activeJobId,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange);
    }

    State withSchedule(ScheduleState sc) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, sc, proxyModelVersion,
          pendingProxyCandidate, policyChange);
    }

    State withCounters(int seq, int produced, Integer rearm) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, seq, activeJobId,
          produced, rearm, schedule, proxyModelVersion, pendingProxyCandidate, policyChange);
    }

    State withProxy(int modelVersion, ProxyModelObserved pending) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, modelVersion, pending, policyChange);
    }

    State withPolicyChange(PolicyChanged change) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion,
          pendingProxyCandidate, change);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Event handler (pure, static: the audit's "state as of T" replays with the same function)
  // ------------------------------------------------------------------------------------------

  /**
   * Applies one event. Pure: no clock, no configuration, no I/O; everything it needs is in the
   * event. Replaying a journal from {@link State#EMPTY} (or from a snapshot) with this function
   * gives the entity's state after those events. The state is immutable, so replays never share
   * mutable data with a running entity.
   */
  public static State applyEvent(State s, Event e) {
    if (e instanceof PolicyChanged pc) {
      return s.withPolicyChange(pc);
    }
    if (e instanceof TrajectoryPooled p) {
      SessionEntry prev = s.sessions().get(p.sessionId());
      if (prev != null && prev.kind() == SessionEntry.Kind.POOLED) {
        return s; // cannot happen (the command handler checks); stay idempotent
      }
      State next = s.withSessions(
          s.sessions().with(p.sessionId(),
              new SessionEntry(SessionEntry.Kind.POOLED, p.reward(), p.qualityScore(), p.completedAt())),
          s.poolSize() + 1, s.poolQualitySum() + p.qualityScore());
      if (!p.msgIds().isEmpty()) {
        next = next.withPending(next.pendingRewards().with(p.sessionId(),
            new PendingReward(p.msgIds(), p.reward())));
      }
      return next;
    }
    if (e instanceof TrajectoryFiltered f) {
      return s.withSessions(s.sessions().with(f.sessionId(),
              new SessionEntry(SessionEntry.Kind.FILTERED, 0.0, f.qualityScore(), f.completedAt())),
          s.poolSize(), s.poolQualitySum());
    }
    if (e instanceof RewardUpdated r) {
      SessionEntry prev = s.sessions().get(r.sessionId());
      if (prev == null || prev.kind() != SessionEntry.Kind.POOLED) {
        return s;
      }
      State next = s.withSessions(
          s.sessions().with(r.sessionId(),
              new SessionEntry(SessionEntry.Kind.POOLED, r.reward(), r.qualityScore(), r.revisedAt())),
          s.poolSize(), s.poolQualitySum() - prev.quality() + r.qualityScore());
      PendingReward pending = next.pendingRewards().get(r.sessionId());
      if (pending != null) {
        next = next.withPending(next.pendingRewards().with(r.sessionId(),
            new PendingReward(pending.msgIds(), r.reward())));
      }
      return next;
    }
    if (e instanceof RewardForwarded f) {
      return s.withPending(s.pendingRewards().without(f.sessionId()));
    }
    if (e instanceof ScheduleArmed a) {
      Instant last = s.schedule() == null ? null : s.schedule().lastSlot();
      return s.withSchedule(new ScheduleState(a.cron(), a.zone(), a.from(), last));
    }
    if (e instanceof ScheduledSlotFired f) {
      return s.withSchedule(slotHandled(s.schedule(), f.slot()));
    }
    if (e instanceof ScheduledSlotSkipped k) {
      return s.withSchedule(slotHandled(s.schedule(), k.slot()));
    }
    if (e instanceof JobEvent je) {
      return applyJobEvent(s, je);
    }
    throw new IllegalStateException("unhandled event " + e.getClass().getName());
  }

  private static ScheduleState slotHandled(ScheduleState sc, Instant slot) {
    if (sc == null) {
      return new ScheduleState("", "UTC", slot, slot);
    }
    return new ScheduleState(sc.cron(), sc.zone(), sc.from(), slot);
  }

  private static State applyJobEvent(State s, JobEvent e) {
    if (e instanceof JobRequested r) {
      PersistentMap<SessionEntry> sessions = s.sessions();
      int size = s.poolSize();
      double sum = s.poolQualitySum();
      for (String id : r.sessionIds()) {
        SessionEntry entry = sessions.get(id);
        if (entry != null && entry.kind() == SessionEntry.Kind.POOLED) {
          sessions = sessions.with(id, entry.withKind(SessionEntry.Kind.USED));
          size--;
          sum -= entry.quality();
        }
      }
      Job job = new Job(r.jobId(), r.trigger(), r.requestedBy(), r.backend(), r.algorithm(),
          r.baseModel(), r.hyperparams(), r.sessionIds(), r.at(), JobStatus.REQUESTED, null, 0, 0,
          false, null, null, null, null, null, false, false, List.of(),
          List.of(new HistoryEntry(JobStatus.REQUESTED, r.at(),
              r.trigger().configName() + " trigger" + (r.requestedBy() == null ? "" : " (" + r.requestedBy() + ")")
                  + ": " + r.sessionIds().size() + " trajectories taken from the pool")));
      int seq = Math.max(s.nextJobSeq(), seqOf(r.jobId()) + 1);
      return s.withSessions(sessions, size, sum).withJob(job).withActive(r.jobId())
          .withCounters(seq, s.candidatesProduced(), null);
    }
    if (e instanceof ProxyModelObserved o) {
      return s.withProxy(Math.max(s.proxyModelVersion(), o.modelVersion()), o);
    }
    Optional<Job> found = e.jobId() == null ? Optional.empty() : s.job(e.jobId());
    if (e instanceof CandidateHandedOver h) {
      State next = s;
      if (s.pendingProxyCandidate() != null && s.pendingProxyCandidate().version().equals(h.version())) {
        next = next.withProxy(s.proxyModelVersion(), null);
      }
      if (found.isPresent() && h.version().equals(found.get().candidateVersion())) {
        Job.Builder b = found.get().edit();
        b.handedOver = true;
        next = next.withJob(b.log(b.status, h.at(), "handed over to ModelVersion as " + h.version()).build());
      }
      return next;
    }
    if (found.isEmpty()) {
      throw new IllegalStateException("event " + e.getClass().getSimpleName() + " for unknown job " + e.jobId());
    }
    Job.Builder b = found.get().edit();
    String active = s.activeJobId();
    if (e instanceof PreflightFailed f) {
      b.status = JobStatus.FAILED;
      b.preflightFailures = f.reasons();
      b.lastError = "pre-flight failed: " + String.join("; ", f.reasons());
      b.log(JobStatus.FAILED, f.at(), b.lastError
          + (f.sessionsReturned() ? " (trajectories returned to the pool)" : " (trajectories kept with this job)"));
      State next = s;
      if (f.sessionsReturned()) {
        PersistentMap<SessionEntry> sessions = s.sessions();
        int size = s.poolSize();
        double sum = s.poolQualitySum();
        for (String id : found.get().sessionIds()) {
          SessionEntry entry = sessions.get(id);
          if (entry != null && entry.kind() == SessionEntry.Kind.USED) {
            sessions = sessions.with(id, entry.withKind(SessionEntry.Kind.POOLED));
            size++;
            sum += entry.quality();
          }
        }
        next = next.withSessions(sessions, size, sum);
      }
      next = next.withCounters(next.nextJobSeq(), next.candidatesProduced(), f.thresholdRearmAt());
      return ended(next.withJob(b.build()), f.jobId());
    }
    if (e instanceof DatasetExported x) {
      b.manifest = x.manifest();
      b.lastError = null;
      b.nextAttemptAt = null;
      b.log(b.status, x.at(), "dataset exported: " + x.manifest().count() + " lines, sha256 "
          + x.manifest().sha256() + (x.manifest().seen() > 0 ? " (" + x.manifest().selectionSummary() + ")" : ""));
      return s.withJob(b.build());
    }
    if (e instanceof DatasetExportFailed x) {
      b.exportAttempts = x.attempt();
      b.lastError = "dataset export failed: " + x.error();
      b.nextAttemptAt = x.nextAttemptAt();
      b.log(b.status, x.at(), "export attempt " + x.attempt() + " failed: " + x.error()
          + "; next attempt at " + x.nextAttemptAt());
      return s.withJob(b.build());
    }
    if (e instanceof JobSubmitting x) {
      b.submitAttempts = x.attempt();
      b.submitting = true;
      b.nextAttemptAt = null;
      String what = found.get().backend() == Backend.TRINITY_PROXY ? "commit" : "submission";
      b.log(b.status, x.at(), what + " attempt " + x.attempt());
      return s.withJob(b.build());
    }
    if (e instanceof JobSubmitted x) {
      b.status = JobStatus.SUBMITTED;
      b.submitting = false;
      b.externalId = x.externalId();
      b.lastError = null;
      b.nextAttemptAt = null;
      b.log(JobStatus.SUBMITTED, x.at(), "accepted by the backend as " + x.externalId());
      return s.withJob(b.build());
    }
    if (e instanceof JobSubmitFailed x) {
      b.submitting = false;
      b.submitAttempts = Math.max(b.submitAttempts, x.attempt());
      b.lastError = x.error();
      b.nextAttemptAt = x.nextAttemptAt();
      b.log(b.status, x.at(), "attempt " + x.attempt() + " failed: " + x.error() + "; next attempt at "
          + x.nextAttemptAt());
      return s.withJob(b.build());
    }
    if (e instanceof JobStatusChanged x) {
      b.status = x.status();
      b.log(x.status(), x.at(), x.message());
      return s.withJob(b.build());
    }
    if (e instanceof JobSucceeded x) {
      b.status = JobStatus.SUCCEEDED;
      b.submitting = false;
      b.outputModel = x.outputModel();
      b.candidateVersion = x.candidateVersion();
      b.lastError = null;
      b.nextAttemptAt = null;
      b.log(JobStatus.SUCCEEDED, x.at(), x.outputModel() == null ? "committed to the trainer"
          : "output model " + x.outputModel().checkpointUri() + " (candidate " + x.candidateVersion() + ")");
      State next = s.withJob(b.build());
      if (x.outputModel() != null) {
        next = next.withCounters(next.nextJobSeq(), next.candidatesProduced() + 1, next.thresholdRearmAt());
      }
      return ended(next, x.jobId());
    }
    if (e instanceof JobFailed x) {
      b.status = JobStatus.FAILED;
      b.submitting = false;
      b.lastError = x.error();
      b.nextAttemptAt = null;
      b.log(JobStatus.FAILED, x.at(), x.error());
      return ended(s.withJob(b.build()), x.jobId());
    }
    if (e instanceof JobCancelRequested x) {
      b.cancelRequested = true;
      b.log(b.status, x.at(), "cancel requested" + (x.requestedBy() == null ? "" : " by " + x.requestedBy()));
      return s.withJob(b.build());
    }
    if (e instanceof JobCancelled x) {
      b.status = JobStatus.CANCELLED;
      b.submitting = false;
      b.nextAttemptAt = null;
      b.log(JobStatus.CANCELLED, x.at(), x.detail());
      return ended(s.withJob(b.build()), x.jobId());
    }
    throw new IllegalStateException("unhandled job event " + e.getClass().getName() + " (active " + active + ")");
  }

  private static State ended(State s, String jobId) {
    return jobId.equals(s.activeJobId()) ? s.withActive(null) : s;
  }

  private static int seqOf(String jobId) {
    int end = jobId.indexOf('-', 4);
    try {
      return Integer.parseInt(jobId.substring(4, end));
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /** Replays {@code events} from {@link State#EMPTY} with {@link #applyEvent}. */
  public static State replay(Iterable<? extends Event> events) {
    State s = State.EMPTY;
    for (Event e : events) {
      s = applyEvent(s, e);
    }
    return s;
  }

  // ------------------------------------------------------------------------------------------
  // Ports
  // ------------------------------------------------------------------------------------------

  /**
   * The side-effect ports. With {@code ray-jobs} the exporter and the batch backend are required;
   * with {@code trinity-proxy} the online backend (the exporter and batch backend may be null).
   */
  public record Ports(
      DatasetExporter exporter,
      TrainingBackend batchBackend,
      OnlineTrainingBackend onlineBackend,
      CandidateSink candidateSink,
      RolloutProbe rolloutProbe) {

    public Ports {
      Objects.requireNonNull(candidateSink, "candidateSink");
      rolloutProbe = rolloutProbe == null ? RolloutProbe.NONE : rolloutProbe;
    }

    public Ports(DatasetExporter exporter, TrainingBackend batchBackend, OnlineTrainingBackend onlineBackend,
        CandidateSink candidateSink) {
      this(exporter, batchBackend, onlineBackend, candidateSink, null);
    }

    /** The same ports, with ModelVersion asked for "no rollout in progress" before each job. */
    public Ports withRolloutProbe(RolloutProbe probe) {
      return new Ports(exporter, batchBackend, onlineBackend, candidateSink, probe);
    }

    public static Ports batch(DatasetExporter exporter, TrainingBackend backend, CandidateSink sink) {
      return new Ports(exporter, backend, null, sink);
    }

    public static Ports online(OnlineTrainingBackend backend, CandidateSink sink) {
      return new Ports(null, null, backend, sink);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Construction
  // ------------------------------------------------------------------------------------------

  private final String agentId;
  /** In force: the file's policy with the run-time overrides of {@link State#policyChange()}. */
  private TrainingPolicy policy;
  private final PolicyOverrides.Resolver resolver;
  private PolicyChanged policyApplied;
  private final Ports ports;
  private final Clock clock;
  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;

  /** Calls in flight (not persisted): keeps one call per step, whatever triggers it. */
  private final Set<String> inFlight = new HashSet<>();
  /** "One rollout at a time": asks ModelVersion before a manual or threshold job. */
  private final RolloutGate rollouts;
  /** How often a proxy commit checks again whether its rewards have all been forwarded. */
  private static final Duration COMMIT_WAIT = Duration.ofMillis(250);
  /** Consecutive failures per retried step (not persisted): drives the back-off. */
  private final Map<String, Integer> failures = new HashMap<>();

  /**
   * @param agentId the entity key
   * @param policy {@link TrainingPolicy#fromConfig}
   * @param ports the ports for {@code policy.backend()} (see {@link Ports})
   * @param clock the source of every timestamp and timer delay
   */
  public static Behavior<Command> create(String agentId, TrainingPolicy policy, Ports ports, Clock clock) {
    return create(agentId, policy, PolicyOverrides.Resolver.fixed(policy), ports, clock);
  }

  /**
   * @param resolver makes the agent's policy from run-time overrides ({@link
   *     PolicyOverrides#over}); {@code policy} is its answer to none
   */
  public static Behavior<Command> create(String agentId, TrainingPolicy policy, PolicyOverrides.Resolver resolver,
      Ports ports, Clock clock) {
    Objects.requireNonNull(resolver, "resolver");
    Objects.requireNonNull(agentId, "agentId");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(ports, "ports");
    Objects.requireNonNull(clock, "clock");
    if (policy.backend() == Backend.RAY_JOBS && (ports.exporter() == null || ports.batchBackend() == null)) {
      throw new IllegalArgumentException("backend ray-jobs needs a DatasetExporter and a TrainingBackend");
    }
    if (policy.backend() == Backend.TRINITY_PROXY && ports.onlineBackend() == null) {
      throw new IllegalArgumentException("backend trinity-proxy needs an OnlineTrainingBackend");
    }
    return Behaviors.setup(ctx -> Behaviors.withTimers(
        timers -> new TrainingCoordinator(agentId, policy, resolver, ports, clock, ctx, timers)));
  }

  private TrainingCoordinator(String agentId, TrainingPolicy policy, PolicyOverrides.Resolver resolver,
      Ports ports, Clock clock, ActorContext<Command> ctx, TimerScheduler<Command> timers) {
    super(persistenceId(agentId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.agentId = agentId;
    this.policy = policy;
    this.resolver = resolver;
    this.ports = ports;
    this.clock = clock;
    this.ctx = ctx;
    this.timers = timers;
    this.rollouts = new RolloutGate(agentId, ports.rolloutProbe(), ctx);
  }

  @Override
  public State emptyState() {
    return State.EMPTY;
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public Set<String> tagsFor(Event event) {
    return tagsOf(event);
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent((s, e) -> {
      State next = applyEvent(s, e);
      refreshPolicy(next);
      return next;
    });
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          refreshPolicy(state); // a snapshot replays no PolicyChanged
          ctx.getSelf().tell(Recovered.INSTANCE);
        })
        .build();
  }

  // ------------------------------------------------------------------------------------------
  // Command handlers
  // ------------------------------------------------------------------------------------------

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(TrajectoryAvailable.class, this::onTrajectory)
        .onCommand(TrajectoriesAvailable.class, this::onTrajectories)
        .onCommand(Trigger.class, this::onTrigger)
        .onCommand(CancelJob.class, this::onCancel)
        .onCommand(GetStatus.class, (s, c) -> Effect().reply(c.replyTo(), statusView(s)))
        .onCommand(GetJob.class, (s, c) -> Effect().reply(c.replyTo(), s.job(c.jobId())
            .<JobReply>map(this::view).orElseGet(() -> notFound(c.jobId()))))
        .onCommand(ListJobs.class, (s, c) -> Effect().reply(c.replyTo(), new JobList(s.jobs().stream()
            .filter(j -> c.status() == null || j.status() == c.status()).map(this::view).toList())))
        .onCommand(SetPolicy.class, this::onSetPolicy)
        .onCommand(GetPolicy.class, (s, c) -> Effect().reply(c.replyTo(), policyView(s)))
        .onCommand(GetJobLineage.class, (s, c) -> Effect().reply(c.replyTo(), s.job(c.jobId())
            .<LineageReply>map(j -> new JobLineage(j.jobId(), agentId, j.sessionIds(), j.manifest()))
            .orElseGet(() -> notFound(c.jobId()))))
        .onCommand(Recovered.class, (s, c) -> onRecovered(s))
        .onCommand(ScheduleTick.class, (s, c) -> onScheduleTick(s))
        .onCommand(PollTick.class, (s, c) -> onPollTick(s))
        .onCommand(RetryStep.class, this::onRetryStep)
        .onCommand(ExportFinished.class, this::onExportFinished)
        .onCommand(SubmitFinished.class, this::onSubmitFinished)
        .onCommand(StatusPolled.class, this::onStatusPolled)
        .onCommand(CancelFinished.class, this::onCancelFinished)
        .onCommand(HandOverFinished.class, this::onHandOverFinished)
        .onCommand(RewardForwardFinished.class, this::onRewardForwardFinished)
        .onCommand(ForwardRetryTick.class, (s, c) -> onForwardRetry(s))
        .onCommand(ProxyMetricsTick.class, (s, c) -> onProxyMetricsTick())
        .onCommand(ProxyMetricsPolled.class, this::onProxyMetricsPolled)
        .onCommand(ProxyHandOverFinished.class, this::onProxyHandOverFinished)
        .onCommand(RolloutChecked.class, (s, c) -> c.trigger() == TriggerType.MANUAL && c.rollout() != null
            ? Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, c.preflightReason()))
            : c.trigger() == TriggerType.MANUAL ? startManual(s, c.requestedBy(), c.preflightReason(), c.replyTo())
            : c.trigger() == TriggerType.SCHEDULED ? onSlotChecked(s, c)
            : rollouts.thresholdMayStart(c) ? startThreshold(s) : Effect().noReply())
        .onCommand(ProxyHandOverRetry.class, (s, c) -> {
          if (s.pendingProxyCandidate() != null) {
            handOverProxy(s.pendingProxyCandidate());
          }
          return Effect().noReply();
        })
        .build();
  }

  // ---- pool ----------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onTrajectory(State s, TrajectoryAvailable c) {
    Plan p = new Plan(s);
    TrajectoryAck ack = judge(p, c);
    if (ack.disposition() == Disposition.POOLED) maybeThreshold(p);
    return run(p, c.replyTo(), st -> ack);
  }

  /** One plan, one write; the threshold is looked at once, after the whole batch joined the pool. */
  private ReplyEffect<Event, State> onTrajectories(State s, TrajectoriesAvailable c) {
    Plan p = new Plan(s);
    List<TrajectoryAck> acks = new ArrayList<>(c.items().size());
    for (TrajectoryAvailable item : c.items()) acks.add(judge(p, item));
    if (acks.stream().anyMatch(a -> a.disposition() == Disposition.POOLED)) maybeThreshold(p);
    TrajectoryAcks reply = new TrajectoryAcks(List.copyOf(acks));
    return run(p, c.replyTo(), st -> reply);
  }

  /** Adds what one trajectory changes to the plan (judged against the plan's state so far). */
  private TrajectoryAck judge(Plan p, TrajectoryAvailable c) {
    String invalid = validate(c);
    if (invalid != null) {
      return new TrajectoryAck(c.sessionId(), Disposition.INVALID, invalid);
    }
    Instant now = clock.instant();
    Instant factAt = c.completedAt() == null ? now : c.completedAt();
    boolean eligible = c.qualityScore() >= policy.minQuality();
    SessionEntry entry = p.state.sessions().get(c.sessionId());
    Disposition d;
    String detail;
    if (entry == null || (entry.kind() == SessionEntry.Kind.FILTERED && c.revision() && eligible
        && isNewer(factAt, entry.at()))) {
      if (eligible) {
        List<String> msgIds = policy.backend() == Backend.TRINITY_PROXY ? c.msgIds() : List.of();
        p.add(new TrajectoryPooled(c.sessionId(), c.modelVersion(), c.reward(), c.qualityScore(),
            factAt, msgIds, now));
        if (!msgIds.isEmpty()) {
          p.after(st -> forward(c.sessionId(), st.pendingRewards().get(c.sessionId())));
        }
        d = Disposition.POOLED;
        detail = entry == null ? "joined the pool" : "joined the pool after a revision raised its quality";
      } else {
        p.add(new TrajectoryFiltered(c.sessionId(), c.qualityScore(), factAt, now));
        d = Disposition.FILTERED;
        detail = String.format(Locale.ROOT, "quality %.3f is below min-quality %.3f", c.qualityScore(),
            policy.minQuality());
      }
    } else if (entry.kind() == SessionEntry.Kind.POOLED && c.revision() && isNewer(factAt, entry.at())
        && (c.reward() != entry.reward() || c.qualityScore() != entry.quality())) {
      p.add(new RewardUpdated(c.sessionId(), c.reward(), c.qualityScore(), factAt, now));
      d = Disposition.REWARD_UPDATED;
      detail = "reward revised";
    } else {
      d = Disposition.DUPLICATE;
      detail = switch (entry.kind()) {
        case USED -> "already used by a job";
        case FILTERED -> "already seen (filtered)";
        case POOLED -> "already in the pool";
      };
    }
    return new TrajectoryAck(c.sessionId(), d, detail);
  }

  private static boolean isNewer(Instant candidate, Instant stored) {
    return stored == null || candidate.isAfter(stored);
  }

  private static String validate(TrajectoryAvailable c) {
    if (!Ids.isValidSessionId(c.sessionId())) {
      return Ids.problem("sessionId", c.sessionId(), Ids.MAX_SESSION_ID);
    }
    if (!Double.isFinite(c.reward())) {
      return "reward must be a finite number, was " + c.reward();
    }
    if (!(c.qualityScore() >= 0 && c.qualityScore() <= 1)) {
      return "qualityScore must be in [0, 1], was " + c.qualityScore();
    }
    return null;
  }

  // ---- triggers ------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onTrigger(State s, Trigger c) {
    if (!policy.trainingEnabled()) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, TrainingSwitch.refusal(agentId)));
    }
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, "job " + active.get().jobId()
          + " of agent " + agentId + " is " + active.get().status() + "; wait until it ends or cancel it"));
    }
    String requestedBy = c.requestedBy() == null || c.requestedBy().isBlank() ? "api" : c.requestedBy();
    if (rollouts.enabled()) {
      rollouts.ask(TriggerType.MANUAL, requestedBy, c.replyTo());
      return Effect().noReply();
    }
    return startManual(s, requestedBy, null, c.replyTo());
  }

  /** Run-time policy (see {@link PolicyOverrides}): validated like the file, persisted, in force at once. */
  private ReplyEffect<Event, State> onSetPolicy(State s, SetPolicy c) {
    Map<String, Object> flat;
    TrainingPolicy next;
    try {
      flat = PolicyOverrides.flatten(c.overrides());
      next = resolver.resolve(flat);
    } catch (IllegalArgumentException e) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.INVALID_INPUT, e.getMessage()));
    }
    String by = c.requestedBy() == null || c.requestedBy().isBlank() ? "api" : c.requestedBy();
    PolicyChanged change = new PolicyChanged(flat, by, clock.instant());
    policy = next; // the threshold check below already sees it; the event handler keeps it
    policyApplied = change;
    ctx.getLog().info("agent {}: policy changed by {}; run-time keys {}", agentId, by, flat.keySet());
    Plan p = new Plan(s);
    p.add(change);
    maybeThreshold(p);
    p.after(this::armScheduleTimer);
    return run(p, c.replyTo(), this::policyView);
  }

  private PolicyView policyView(State s) {
    PolicyChanged c = s.policyChange();
    return new PolicyView(agentId, PolicyOverrides.effective(policy), c == null ? Map.of() : c.overrides(),
        c == null ? null : c.changedBy(), c == null ? null : c.at());
  }

  /** Lays the state's run-time overrides over the file's policy when they changed (replay included). */
  private void refreshPolicy(State s) {
    PolicyChanged change = s.policyChange();
    if (change == policyApplied) return;
    policyApplied = change;
    try {
      policy = resolver.resolve(change == null ? Map.of() : change.overrides());
    } catch (IllegalArgumentException e) {
      // The file changed since and refuses them now: train with the file's policy, and say so.
      ctx.getLog().warn("agent {}: the run-time policy of {} no longer applies ({}); the file's policy is in force",
          agentId, change.at(), e.getMessage());
      policy = resolver.resolve(Map.of());
    }
  }

  /** A manual job after the rollout check; {@code rolloutReason} is its failed pre-flight item, or null. */
  ReplyEffect<Event, State> startManual(State s, String requestedBy, String rolloutReason,
      ActorRef<TriggerReply> replyTo) {
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      return Effect().reply(replyTo, new Refused(ErrorCode.CONFLICT, "job " + active.get().jobId()
          + " of agent " + agentId + " is " + active.get().status() + "; wait until it ends or cancel it"));
    }
    Plan p = new Plan(s);
    String jobId = startJob(p, TriggerType.MANUAL, requestedBy, rolloutReason);
    return run(p, replyTo, st -> {
      Job j = st.job(jobId).orElseThrow();
      return new TriggerAccepted(jobId, j.status(), j.preflightFailures());
    });
  }

  /** The threshold trigger: fires when the pool reaches min-samples and no job is active. */
  private void maybeThreshold(Plan p) {
    if (!thresholdDue(p.state)) {
      return;
    }
    if (rollouts.enabled()) {
      // Ask ModelVersion once the events are persisted; the answer starts the job or keeps waiting.
      p.after(st -> rollouts.ask(TriggerType.THRESHOLD, "threshold", null));
      return;
    }
    startJob(p, TriggerType.THRESHOLD, "threshold");
  }

  boolean thresholdDue(State s) {
    return policy.isEnabled(TriggerType.THRESHOLD) && s.activeJobId() == null
        && s.poolSize() >= policy.minSamples()
        && (s.thresholdRearmAt() == null || s.poolSize() >= s.thresholdRearmAt());
  }

  /** The threshold job after the rollout check found none in progress. */
  ReplyEffect<Event, State> startThreshold(State s) {
    if (!thresholdDue(s)) {
      return Effect().noReply();
    }
    Plan p = new Plan(s);
    startJob(p, TriggerType.THRESHOLD, "threshold");
    return run(p);
  }

  /**
   * Records a new job that takes the whole pool, runs the pre-flight checklist (a failure is
   * recorded with the job, which is then FAILED and returns the pool), and schedules the first
   * step (export, or commit for trinity-proxy) to run once the events are persisted.
   */
  private String startJob(Plan p, TriggerType trigger, String requestedBy) {
    return startJob(p, trigger, requestedBy, null);
  }

  private String startJob(Plan p, TriggerType trigger, String requestedBy, String rolloutReason) {
    State before = p.state;
    Instant now = clock.instant();
    String jobId = jobId(before.nextJobSeq(), agentId);
    p.add(new JobRequested(jobId, trigger, requestedBy, policy.backend(), policy.algorithm(),
        policy.baseModel(), policy.hyperparams(), before.poolSessionIds(), now));
    List<String> reasons = preflight(before, trigger);
    if (rolloutReason != null) {
      reasons.add(rolloutReason);
    }
    if (!reasons.isEmpty()) {
      Integer rearm = before.poolSize() + Math.max(1, policy.minSamples() / 10);
      p.add(new PreflightFailed(jobId, reasons, true, rearm, now));
    } else if (policy.backend() == Backend.TRINITY_PROXY) {
      p.add(new JobSubmitting(jobId, 1, now));
      p.after(st -> st.job(jobId).ifPresent(j -> sendSubmission(st, j)));
    } else {
      p.after(st -> st.job(jobId).ifPresent(this::export));
    }
    return jobId;
  }

  /**
   * The checklist of design §3.2 that can be decided before export. "No other job active" is
   * decided by the callers (a manual trigger is refused, a scheduled slot skipped, the threshold
   * waits); "no PII" is decided on the exported file.
   */
  private List<String> preflight(State s, TriggerType trigger) {
    List<String> reasons = new ArrayList<>();
    int needed = trigger == TriggerType.THRESHOLD ? policy.minSamples() : 1;
    if (s.poolSize() < needed) {
      reasons.add("not enough samples: the pool has " + s.poolSize() + " eligible trajectories, a "
          + trigger.configName() + " job needs at least " + needed);
    }
    Double mean = s.meanQuality();
    if (mean != null && mean < policy.minQuality()) {
      reasons.add(String.format(Locale.ROOT, "mean quality %.3f of the pool is below min-quality %.3f",
          mean, policy.minQuality()));
    }
    if (policy.baseModel().isBlank()) {
      reasons.add("base model is not set (agentscope.training.training-runner.base-model)");
    }
    reasons.addAll(RewardSource.problems(policy.algorithm(), policy.hyperparams(), policy.backend()));
    reasons.addAll(Distillation.problems(policy.algorithm(), policy.hyperparams(), policy.backend()));
    return reasons;
  }

  // ---- schedule ------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onScheduleTick(State s) {
    Plan p = new Plan(s);
    handleDueSlot(p, false);
    p.after(st -> {
      if (!rollouts.slotAsking()) armScheduleTimer(st);
    });
    return run(p);
  }

  /**
   * Handles the latest due slot, if any. At start-up a due slot was missed while no node ran: it
   * fires once (missed-slots = fire) or is recorded as skipped; earlier missed slots are covered by
   * it (only the latest one is recorded).
   */
  private void handleDueSlot(Plan p, boolean atStart) {
    if (!policy.isEnabled(TriggerType.SCHEDULED) || policy.cron() == null) {
      return;
    }
    Instant now = clock.instant();
    ScheduleState sc = p.state.schedule();
    if (sc == null || !sc.cron().equals(policy.cron().expression()) || !sc.zone().equals(policy.zone().getId())) {
      p.add(new ScheduleArmed(policy.cron().expression(), policy.zone().getId(), now, now));
      return;
    }
    Instant latest = null;
    int count = 0;
    Instant cursor = sc.base();
    while (true) {
      Instant next = nextSlot(cursor);
      if (next == null || next.isAfter(now)) {
        break;
      }
      latest = next;
      count++;
      cursor = next;
      if (count == MAX_SLOT_WALK && cursor.isBefore(now.minus(Duration.ofDays(1)))) {
        cursor = now.minus(Duration.ofDays(1));
      }
    }
    if (latest == null) {
      return;
    }
    String counted = count >= MAX_SLOT_WALK ? "at least " + count : String.valueOf(count);
    if (atStart && policy.missedSlots() == MissedSlots.SKIP) {
      p.add(new ScheduledSlotSkipped(latest, "missed while no node ran (" + counted
          + " slot(s), the latest at " + latest + "); missed-slots = skip", now));
      return;
    }
    boolean missed = atStart || count > 1;
    if (rollouts.enabled() && p.state.activeJobId() == null && p.state.poolSize() > 0) {
      // One rollout at a time: ask ModelVersion first (onSlotChecked fires or skips the slot).
      Instant slot = latest;
      p.after(st -> rollouts.askForSlot(slot, missed));
      return;
    }
    fireSlot(p, latest, missed, now);
  }

  /** A due slot's rollout answer: skipped with the reason while a rollout is in progress, else fired. */
  private ReplyEffect<Event, State> onSlotChecked(State s, RolloutChecked c) {
    rollouts.slotAnswered();
    Plan p = new Plan(s);
    ScheduleState sc = s.schedule();
    boolean handled = sc != null && sc.lastSlot() != null && !c.slot().isAfter(sc.lastSlot());
    if (!handled) {
      String reason = c.preflightReason();
      if (reason != null) {
        ctx.getLog().info("agent {}: scheduled slot {} skipped: {}", agentId, c.slot(), reason);
        p.add(new ScheduledSlotSkipped(c.slot(), reason, clock.instant()));
      } else {
        fireSlot(p, c.slot(), c.missed(), clock.instant());
      }
    }
    p.after(this::armScheduleTimer);
    return run(p);
  }

  private void fireSlot(Plan p, Instant slot, boolean missed, Instant now) {
    State s = p.state;
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      p.add(new ScheduledSlotSkipped(slot, "job " + active.get().jobId() + " is " + active.get().status(), now));
    } else if (s.poolSize() == 0) {
      p.add(new ScheduledSlotSkipped(slot, "the pool is empty", now));
    } else {
      String jobId = jobId(s.nextJobSeq(), agentId);
      p.add(new ScheduledSlotFired(slot, missed, jobId, now));
      startJob(p, TriggerType.SCHEDULED, missed ? "schedule (missed slot " + slot + ")" : "schedule");
    }
  }

  private Instant nextSlot(Instant after) {
    return policy.cron().nextAfter(ZonedDateTime.ofInstant(after, policy.zone()))
        .map(ZonedDateTime::toInstant).orElse(null);
  }

  /** The next slot still to be handled, or null (scheduled trigger off, or the cron never fires). */
  private Instant nextScheduledRun(State s) {
    if (!policy.isEnabled(TriggerType.SCHEDULED) || policy.cron() == null) {
      return null;
    }
    Instant now = clock.instant();
    ScheduleState sc = s.schedule();
    Instant base = sc == null || !sc.cron().equals(policy.cron().expression()) ? now : sc.base();
    Instant next = nextSlot(base);
    return next != null && !next.isAfter(now) ? nextSlot(now) : next;
  }

  private void armScheduleTimer(State s) {
    Instant next = nextScheduledRun(s);
    if (next == null) {
      timers.cancel(SCHEDULE_TIMER);
      return;
    }
    Duration delay = Duration.between(clock.instant(), next);
    if (delay.compareTo(MAX_TIMER_DELAY) > 0) {
      delay = MAX_TIMER_DELAY;
    }
    if (delay.isNegative() || delay.isZero()) {
      delay = Duration.ofMillis(1);
    }
    timers.startSingleTimer(SCHEDULE_TIMER, ScheduleTick.INSTANCE, delay);
  }

  // ---- recovery ------------------------------------------------------------------------------

  /**
   * After recovery: record missed slots, re-arm the schedule, resume the active job where its
   * events left it (export again, re-send the same submission, poll), hand over a succeeded
   * model not yet handed over, re-forward pending rewards, and check the threshold.
   */
  private ReplyEffect<Event, State> onRecovered(State s) {
    // Commands stashed during recovery run before this message, and may already have started
    // operations (a forward, a submission): inFlight guards them, so it is not cleared here.
    Plan p = new Plan(s);
    handleDueSlot(p, true);
    maybeThreshold(p);
    p.after(st -> {
      if (!rollouts.slotAsking()) armScheduleTimer(st);
    });
    p.after(st -> resume(s));
    if (policy.backend() == Backend.TRINITY_PROXY) {
      p.after(st -> {
        timers.startTimerWithFixedDelay(METRICS_TIMER, ProxyMetricsTick.INSTANCE, policy.pollInterval());
        forwardPending(st);
        if (st.pendingProxyCandidate() != null) {
          handOverProxy(st.pendingProxyCandidate());
        }
      });
    }
    return run(p);
  }

  /** Resumes what {@code s} (the recovered state) says is unfinished. */
  private void resume(State s) {
    s.activeJob().ifPresent(job -> {
      ctx.getLog().info("agent {}: resuming job {} ({})", agentId, job.jobId(), job.status());
      switch (job.status()) {
        case REQUESTED -> {
          if (job.cancelRequested()) {
            cancelOnBackend(job);
          } else if (!policy.trainingEnabled()) {
            ctx.getLog().info("agent {}: job {} stays REQUESTED: {}", agentId, job.jobId(), TrainingSwitch.HELD);
          } else if (job.submitting()) {
            sendSubmission(s, job); // the same job id: the backend makes it idempotent
          } else if (job.nextAttemptAt() != null) {
            retryAt(job.jobId(), job.nextAttemptAt());
          } else if (job.backend() == Backend.RAY_JOBS && job.manifest() == null) {
            export(job);
          } else {
            ctx.getSelf().tell(new RetryStep(job.jobId()));
          }
        }
        case SUBMITTED, RUNNING -> {
          if (job.cancelRequested()) {
            cancelOnBackend(job);
          }
          timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, Duration.ofMillis(1));
        }
        default -> { }
      }
    });
    for (Job job : s.jobs()) {
      if (job.status() == JobStatus.SUCCEEDED && job.candidateVersion() != null && !job.handedOver()) {
        handOver(job);
      }
    }
  }

  private void retryAt(String jobId, Instant at) {
    Duration delay = Duration.between(clock.instant(), at);
    timers.startSingleTimer("retry-" + jobId, new RetryStep(jobId),
        delay.isNegative() || delay.isZero() ? Duration.ofMillis(1) : delay);
  }

  private ReplyEffect<Event, State> onRetryStep(State s, RetryStep c) {
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return Effect().noReply();
    }
    Job job = found.get();
    if (job.status() == JobStatus.SUCCEEDED && job.candidateVersion() != null && !job.handedOver()) {
      handOver(job);
      return Effect().noReply();
    }
    if (!job.status().isActive()) {
      return Effect().noReply();
    }
    if (job.cancelRequested()) {
      cancelOnBackend(job);
      return Effect().noReply();
    }
    if (job.status() != JobStatus.REQUESTED) {
      return Effect().noReply();
    }
    if (job.backend() == Backend.RAY_JOBS && job.manifest() == null) {
      export(job);
      return Effect().noReply();
    }
    if (job.submitting()) {
      sendSubmission(s, job);
      return Effect().noReply();
    }
    Plan p = new Plan(s);
    p.add(new JobSubmitting(job.jobId(), job.submitAttempts() + 1, clock.instant()));
    p.after(st -> st.job(job.jobId()).ifPresent(j -> sendSubmission(st, j)));
    return run(p);
  }

  // ---- export --------------------------------------------------------------------------------

  private void export(Job job) {
    if (!inFlight.add("export:" + job.jobId())) {
      return;
    }
    CompletionStage<DatasetManifest> stage;
    try {
      stage = ports.exporter().export(new ExportRequest(job.jobId(), agentId, job.algorithm(), job.sessionIds()));
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (manifest, error) -> error != null || manifest == null
        ? new ExportFinished(job.jobId(), null, describe(error == null ? new IllegalStateException("no manifest") : error))
        : new ExportFinished(job.jobId(), manifest, null));
  }

  private ReplyEffect<Event, State> onExportFinished(State s, ExportFinished c) {
    inFlight.remove("export:" + c.jobId());
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || found.get().status() != JobStatus.REQUESTED || found.get().manifest() != null
        || found.get().cancelRequested()) {
      return Effect().noReply();
    }
    Job job = found.get();
    Instant now = clock.instant();
    Plan p = new Plan(s);
    if (c.error() != null) {
      int attempt = job.exportAttempts() + 1;
      Duration backoff = policy.backoff(attempt);
      p.add(new DatasetExportFailed(job.jobId(), attempt, c.error(), now.plus(backoff), now));
      if (attempt >= ExportRetries.MAX_ATTEMPTS) {
        // A failure that outlives the retries is not transient: fail the job with the reason and give
        // its trajectories back, so the agent's next trigger can run instead of waiting behind it.
        p.add(new PreflightFailed(job.jobId(), List.of(ExportRetries.reason(attempt, c.error())), true,
            p.state.poolSize() + job.sessionIds().size() + Math.max(1, policy.minSamples() / 10), now));
        return run(p);
      }
      p.after(st -> timers.startSingleTimer("retry-" + job.jobId(), new RetryStep(job.jobId()), backoff));
      return run(p);
    }
    DatasetManifest m = c.manifest();
    p.add(new DatasetExported(job.jobId(), m, now));
    if (!m.clean()) {
      p.add(new PreflightFailed(job.jobId(), List.of("the final PII scan found " + String.join(", ",
          m.piiFindings()) + " in the exported dataset " + m.path()), false, null, now));
      maybeThreshold(p);
    } else if (m.count() <= 0) {
      p.add(new PreflightFailed(job.jobId(), List.of("the exported dataset is empty (no "
          + job.algorithm() + " example could be built from " + job.sessionIds().size() + " trajectories; "
          + m.selectionSummary() + ")"),
          true, p.state.poolSize() + job.sessionIds().size() + Math.max(1, policy.minSamples() / 10), now));
    } else {
      p.add(new JobSubmitting(job.jobId(), 1, now));
      p.after(st -> st.job(job.jobId()).ifPresent(j -> sendSubmission(st, j)));
    }
    return run(p);
  }

  // ---- submission (ray-jobs) and commit (trinity-proxy) --------------------------------------

  private void sendSubmission(State s, Job job) {
    if (job.backend() == Backend.TRINITY_PROXY) {
      // A commit releases what the proxy holds: the job's rewards must be there first.
      if (job.sessionIds().stream().anyMatch(id -> s.pendingRewards().containsKey(id))) {
        forwardPending(s);
        timers.startSingleTimer("commit-wait:" + job.jobId(), new RetryStep(job.jobId()), COMMIT_WAIT);
      } else {
        commit(job);
      }
    } else {
      submit(job);
    }
  }

  private void submit(Job job) {
    int attempt = job.submitAttempts();
    if (!inFlight.add("submit:" + job.jobId() + ":" + attempt)) {
      return;
    }
    CompletionStage<BackendSubmission> stage;
    try {
      Map<String, String> metadata = new LinkedHashMap<>();
      metadata.put("agentId", agentId);
      metadata.put("trigger", job.trigger().configName());
      metadata.put("datasetSha256", job.manifest().sha256());
      metadata.put("datasetCount", String.valueOf(job.manifest().count()));
      DatasetLineage lineage = job.manifest().lineage();
      if (lineage != null) {
        metadata.put("startFrom", lineage.startFrom());
      }
      // Continual training: the exporter resolved the stable checkpoint (or the fallback to base).
      String startModel = lineage != null && lineage.startsFromCheckpoint() ? lineage.startCheckpoint() : job.baseModel();
      TrainingJobSpec spec = new TrainingJobSpec(job.jobId(), agentId, job.algorithm(), startModel,
          job.hyperparams(), job.manifest().path(), policy.checkpointRootDir(), metadata);
      stage = ports.batchBackend().submit(spec);
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (sub, error) -> error == null
        ? new SubmitFinished(job.jobId(), attempt, sub.externalId(), null, false)
        : new SubmitFinished(job.jobId(), attempt, null, describe(error), isRetryable(error)));
  }

  private void commit(Job job) {
    int attempt = job.submitAttempts();
    if (!inFlight.add("submit:" + job.jobId() + ":" + attempt)) {
      return;
    }
    CompletionStage<Void> stage;
    try {
      stage = ports.onlineBackend().commit();
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (ok, error) -> error == null
        ? new SubmitFinished(job.jobId(), attempt, "commit", null, false)
        : new SubmitFinished(job.jobId(), attempt, null, describe(error), isRetryable(error)));
  }

  private ReplyEffect<Event, State> onSubmitFinished(State s, SubmitFinished c) {
    inFlight.remove("submit:" + c.jobId() + ":" + c.attempt());
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return Effect().noReply();
    }
    Job job = found.get();
    if (job.status() == JobStatus.CANCELLED && c.externalId() != null && job.backend() == Backend.RAY_JOBS) {
      // Accepted after we recorded the cancellation: stop it too (cancel is idempotent).
      ctx.getLog().info("agent {}: job {} was accepted after its cancellation; stopping it", agentId, job.jobId());
      try {
        ports.batchBackend().cancel(job.jobId());
      } catch (RuntimeException e) {
        ctx.getLog().warn("agent {}: stopping job {} failed: {}", agentId, job.jobId(), describe(e));
      }
      return Effect().noReply();
    }
    if (job.status() != JobStatus.REQUESTED || !job.submitting() || job.submitAttempts() != c.attempt()) {
      return Effect().noReply(); // stale
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    if (c.externalId() != null) {
      if (job.backend() == Backend.TRINITY_PROXY) {
        p.add(new JobSucceeded(job.jobId(), null, null, now));
        maybeThreshold(p);
      } else {
        p.add(new JobSubmitted(job.jobId(), c.externalId(), now));
        p.after(st -> timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, policy.pollInterval()));
      }
    } else if (c.retryable()) {
      Duration backoff = policy.backoff(c.attempt());
      p.add(new JobSubmitFailed(job.jobId(), c.attempt(), c.error(), now.plus(backoff), now));
      p.after(st -> timers.startSingleTimer("retry-" + job.jobId(), new RetryStep(job.jobId()), backoff));
    } else {
      p.add(new JobFailed(job.jobId(), (job.backend() == Backend.TRINITY_PROXY ? "commit" : "submission")
          + " refused by the backend: " + c.error(), now));
      maybeThreshold(p);
    }
    return run(p);
  }

  // ---- polling -------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onPollTick(State s) {
    Optional<Job> active = s.activeJob();
    if (active.isEmpty() || !(active.get().status() == JobStatus.SUBMITTED
        || active.get().status() == JobStatus.RUNNING) || !inFlight.add("poll")) {
      return Effect().noReply();
    }
    String jobId = active.get().jobId();
    CompletionStage<BackendJobStatus> stage;
    try {
      stage = ports.batchBackend().status(jobId);
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (st, error) -> error == null
        ? new StatusPolled(jobId, st, null, null)
        : new StatusPolled(jobId, null, describe(error), kindOf(error)));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onStatusPolled(State s, StatusPolled c) {
    inFlight.remove("poll");
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || !(found.get().status() == JobStatus.SUBMITTED
        || found.get().status() == JobStatus.RUNNING)) {
      return Effect().noReply();
    }
    Job job = found.get();
    Instant now = clock.instant();
    Plan p = new Plan(s);
    boolean pollAgain = false;
    if (c.error() != null) {
      if (TrainingBackendException.Kind.NOT_FOUND.name().equals(c.errorKind())) {
        p.add(new JobFailed(job.jobId(), "the backend no longer knows the job: " + c.error(), now));
        maybeThreshold(p);
      } else {
        ctx.getLog().warn("agent {}: polling job {} failed ({}); polling again in {}", agentId,
            job.jobId(), c.errorKind(), policy.pollInterval());
        pollAgain = true;
      }
    } else {
      BackendJobStatus st = c.status();
      switch (st.state()) {
        case PENDING -> pollAgain = true;
        case RUNNING -> {
          if (job.status() == JobStatus.SUBMITTED) {
            p.add(new JobStatusChanged(job.jobId(), JobStatus.RUNNING,
                st.message().isBlank() ? "running on the backend" : st.message(), now));
          }
          pollAgain = true;
        }
        case SUCCEEDED -> {
          if (st.outputModel() == null) {
            p.add(new JobFailed(job.jobId(), "the backend reported SUCCEEDED without an output model", now));
          } else {
            String version = "v" + (s.candidatesProduced() + 1);
            p.add(new JobSucceeded(job.jobId(), st.outputModel(), version, now));
            p.after(st2 -> st2.job(job.jobId()).ifPresent(this::handOver));
          }
          maybeThreshold(p);
        }
        case FAILED -> {
          p.add(new JobFailed(job.jobId(), st.message().isBlank() ? "failed on the backend" : st.message(), now));
          maybeThreshold(p);
        }
        case STOPPED -> {
          p.add(new JobCancelled(job.jobId(), job.cancelRequested() ? "stopped on the backend"
              : "stopped on the backend without a cancel request here" + (st.message().isBlank() ? "" : ": " + st.message()), now));
          maybeThreshold(p);
        }
      }
    }
    if (pollAgain) {
      p.after(st -> {
        if (st.activeJobId() != null && st.activeJobId().equals(job.jobId())) {
          timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, policy.pollInterval());
        }
      });
    }
    return run(p);
  }

  // ---- cancellation --------------------------------------------------------------------------

  private ReplyEffect<Event, State> onCancel(State s, CancelJob c) {
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return Effect().reply(c.replyTo(), notFound(c.jobId()));
    }
    Job job = found.get();
    if (!job.status().isActive()) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, "job " + job.jobId() + " is " + job.status()));
    }
    if (job.cancelRequested()) {
      return Effect().reply(c.replyTo(), new CancelAccepted(job.jobId(), job.status()));
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    p.add(new JobCancelRequested(job.jobId(), c.requestedBy(), now));
    if (job.status() == JobStatus.REQUESTED && job.submitAttempts() == 0) {
      p.add(new JobCancelled(job.jobId(), "cancelled before submission", now));
      maybeThreshold(p);
    } else {
      p.after(st -> st.job(job.jobId()).ifPresent(this::cancelOnBackend));
    }
    return run(p, c.replyTo(), st -> new CancelAccepted(job.jobId(), st.job(job.jobId()).orElseThrow().status()));
  }

  private void cancelOnBackend(Job job) {
    if (!inFlight.add("cancel:" + job.jobId())) {
      return;
    }
    CompletionStage<Void> stage;
    if (job.backend() == Backend.TRINITY_PROXY) {
      // A commit cannot be recalled: the job just ends here.
      stage = java.util.concurrent.CompletableFuture.completedFuture(null);
    } else {
      try {
        stage = ports.batchBackend().cancel(job.jobId());
      } catch (RuntimeException e) {
        stage = java.util.concurrent.CompletableFuture.failedFuture(e);
      }
    }
    ctx.pipeToSelf(stage, (ok, error) -> error == null
        ? new CancelFinished(job.jobId(), null, null)
        : new CancelFinished(job.jobId(), describe(error), kindOf(error)));
  }

  private ReplyEffect<Event, State> onCancelFinished(State s, CancelFinished c) {
    inFlight.remove("cancel:" + c.jobId());
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || !found.get().status().isActive() || !found.get().cancelRequested()) {
      return Effect().noReply();
    }
    Job job = found.get();
    Instant now = clock.instant();
    Plan p = new Plan(s);
    String key = "cancel:" + job.jobId();
    if (c.error() == null || TrainingBackendException.Kind.NOT_FOUND.name().equals(c.errorKind())) {
      failures.remove(key);
      p.add(new JobCancelled(job.jobId(), c.error() == null
          ? (job.backend() == Backend.TRINITY_PROXY ? "cancelled (a commit already sent cannot be recalled)" : "stopped on the backend")
          : "cancelled (unknown to the backend)", now));
      maybeThreshold(p);
    } else if (TrainingBackendException.Kind.UNAVAILABLE.name().equals(c.errorKind()) || c.errorKind() == null) {
      int n = failures.merge(key, 1, Integer::sum);
      ctx.getLog().warn("agent {}: cancelling job {} failed ({}); retrying", agentId, job.jobId(), c.errorKind());
      timers.startSingleTimer("retry-" + job.jobId(), new RetryStep(job.jobId()), policy.backoff(n));
    } else if (job.status() == JobStatus.REQUESTED) {
      p.add(new JobCancelled(job.jobId(), "cancelled; the backend refused the stop: " + c.error(), now));
      maybeThreshold(p);
    } else {
      // Refused (e.g. it has just finished): polling records how it really ended.
      ctx.getLog().warn("agent {}: the backend refused to stop job {}; its final status will be polled",
          agentId, job.jobId());
    }
    return run(p);
  }

  // ---- hand-over -----------------------------------------------------------------------------

  private void handOver(Job job) {
    if (job.outputModel() == null || job.candidateVersion() == null || !inFlight.add("handover:" + job.jobId())) {
      return;
    }
    OutputModel m = job.outputModel();
    CompletionStage<Void> stage;
    try {
      stage = ports.candidateSink().register(agentId, job.candidateVersion(), m.checkpointUri(),
          m.checkpointUri(), job.jobId(), m.metrics());
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    String version = job.candidateVersion();
    ctx.pipeToSelf(stage, (ok, error) -> new HandOverFinished(job.jobId(), version,
        error == null ? null : describe(error)));
  }

  private ReplyEffect<Event, State> onHandOverFinished(State s, HandOverFinished c) {
    inFlight.remove("handover:" + c.jobId());
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || found.get().handedOver() || !c.version().equals(found.get().candidateVersion())) {
      return Effect().noReply();
    }
    String key = "handover:" + c.jobId();
    if (c.error() != null) {
      int n = failures.merge(key, 1, Integer::sum);
      ctx.getLog().warn("agent {}: handing over {} of job {} failed; retrying", agentId, c.version(), c.jobId());
      timers.startSingleTimer("retry-" + c.jobId(), new RetryStep(c.jobId()), policy.backoff(n));
      return Effect().noReply();
    }
    failures.remove(key);
    Plan p = new Plan(s);
    p.add(new CandidateHandedOver(c.jobId(), c.version(), clock.instant()));
    return run(p);
  }

  // ---- trinity-proxy -------------------------------------------------------------------------

  private void forward(String sessionId, PendingReward pending) {
    if (pending == null || ports.onlineBackend() == null || !inFlight.add("forward:" + sessionId)) {
      return;
    }
    CompletionStage<Void> stage;
    try {
      stage = ports.onlineBackend().forwardReward(pending.msgIds(), pending.reward(), sessionId, 0);
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (ok, error) -> new RewardForwardFinished(sessionId, error == null ? null : describe(error)));
  }

  private void forwardPending(State s) {
    int[] sent = {0};
    s.pendingRewards().forEach((id, pending) -> {
      if (sent[0] < FORWARD_BATCH && !inFlight.contains("forward:" + id)) {
        forward(id, pending);
        sent[0]++;
      }
    });
  }

  private ReplyEffect<Event, State> onRewardForwardFinished(State s, RewardForwardFinished c) {
    inFlight.remove("forward:" + c.sessionId());
    if (c.error() != null) {
      int n = failures.merge("forward", 1, Integer::sum);
      if (!timers.isTimerActive(FORWARD_TIMER)) {
        ctx.getLog().warn("agent {}: forwarding rewards to the Trinity proxy failed; retrying", agentId);
        timers.startSingleTimer(FORWARD_TIMER, ForwardRetryTick.INSTANCE, policy.backoff(n));
      }
      return Effect().noReply();
    }
    failures.remove("forward");
    if (!s.pendingRewards().containsKey(c.sessionId())) {
      return Effect().noReply();
    }
    Plan p = new Plan(s);
    p.add(new RewardForwarded(c.sessionId(), clock.instant()));
    return run(p);
  }

  private ReplyEffect<Event, State> onForwardRetry(State s) {
    forwardPending(s);
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onProxyMetricsTick() {
    if (ports.onlineBackend() == null || !inFlight.add("metrics")) {
      return Effect().noReply();
    }
    CompletionStage<ProxyMetrics> stage;
    try {
      stage = ports.onlineBackend().metrics();
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (m, error) -> new ProxyMetricsPolled(error == null ? m : null,
        error == null ? null : describe(error)));
    return Effect().noReply();
  }

  private ReplyEffect<Event, State> onProxyMetricsPolled(State s, ProxyMetricsPolled c) {
    inFlight.remove("metrics");
    if (c.error() != null || c.metrics() == null) {
      ctx.getLog().debug("agent {}: reading the proxy's metrics failed: {}", agentId, c.error());
      return Effect().noReply();
    }
    int latest = c.metrics().latestModelVersion();
    if (latest <= s.proxyModelVersion()) {
      return Effect().noReply();
    }
    String sourceJob = null;
    for (Job j : s.jobs()) {
      if (j.backend() == Backend.TRINITY_PROXY && j.status() == JobStatus.SUCCEEDED) {
        sourceJob = j.jobId();
      }
    }
    Map<String, Double> metrics = new LinkedHashMap<>();
    metrics.put("model_version", (double) latest);
    metrics.put("total_experience_count", (double) c.metrics().totalExperienceCount());
    metrics.put("ready_experience_count", (double) c.metrics().readyExperienceCount());
    metrics.put("explore_step_num", (double) c.metrics().exploreStepNum());
    Plan p = new Plan(s);
    p.add(new ProxyModelObserved(sourceJob, latest, "proxy-" + latest, metrics, clock.instant()));
    p.after(st -> {
      if (st.pendingProxyCandidate() != null) {
        handOverProxy(st.pendingProxyCandidate());
      }
    });
    return run(p);
  }

  private void handOverProxy(ProxyModelObserved o) {
    if (!inFlight.add("proxy-handover:" + o.version())) {
      return;
    }
    String endpoint = policy.trinityEndpoint();
    CompletionStage<Void> stage;
    try {
      stage = ports.candidateSink().register(agentId, o.version(),
          endpoint + "#model_version=" + o.modelVersion(), endpoint, o.jobId(), o.metrics());
    } catch (RuntimeException e) {
      stage = java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(stage, (ok, error) -> new ProxyHandOverFinished(o.version(), error == null ? null : describe(error)));
  }

  private ReplyEffect<Event, State> onProxyHandOverFinished(State s, ProxyHandOverFinished c) {
    inFlight.remove("proxy-handover:" + c.version());
    ProxyModelObserved pending = s.pendingProxyCandidate();
    if (pending == null || !pending.version().equals(c.version())) {
      return Effect().noReply();
    }
    if (c.error() != null) {
      int n = failures.merge("proxy-handover", 1, Integer::sum);
      ctx.getLog().warn("agent {}: handing over {} failed; retrying", agentId, c.version());
      timers.startSingleTimer(PROXY_HANDOVER_TIMER, ProxyHandOverRetry.INSTANCE, policy.backoff(n));
      return Effect().noReply();
    }
    failures.remove("proxy-handover");
    Plan p = new Plan(s);
    p.add(new CandidateHandedOver(pending.jobId(), pending.version(), clock.instant()));
    return run(p);
  }

  // ------------------------------------------------------------------------------------------
  // Plans: events decided by a command, applied as they are added, persisted together
  // ------------------------------------------------------------------------------------------

  private static final class Plan {
    State state;
    final List<Event> events = new ArrayList<>();
    final List<Consumer<State>> after = new ArrayList<>();

    Plan(State s) {
      this.state = s;
    }

    void add(Event e) {
      state = applyEvent(state, e);
      events.add(e);
    }

    /** Runs once the events are persisted (or at once when there are none), with the new state. */
    void after(Consumer<State> effect) {
      after.add(effect);
    }
  }

  private ReplyEffect<Event, State> run(Plan p) {
    return run(p, null, null);
  }

  private <R> ReplyEffect<Event, State> run(Plan p, ActorRef<R> replyTo, Function<State, R> reply) {
    List<Consumer<State>> after = List.copyOf(p.after);
    if (p.events.isEmpty()) {
      after.forEach(a -> a.accept(p.state));
      return replyTo == null ? Effect().noReply() : Effect().reply(replyTo, reply.apply(p.state));
    }
    List<Event> events = List.copyOf(p.events);
    EffectBuilder<Event, State> b = Effect().persist(events).thenRun((State st) -> {
      logTransitions(events);
      after.forEach(a -> a.accept(st));
    });
    return replyTo == null ? b.thenNoReply() : b.thenReply(replyTo, (State st) -> reply.apply(st));
  }

  /** One INFO line per job transition: ids and statuses only, no payloads. */
  private void logTransitions(List<Event> events) {
    for (Event e : events) {
      String what = null;
      if (e instanceof JobRequested r) {
        what = "REQUESTED (" + r.trigger().configName() + ", " + r.sessionIds().size() + " trajectories)";
      } else if (e instanceof PreflightFailed) {
        what = "FAILED (pre-flight)";
      } else if (e instanceof JobSubmitting x) {
        what = "submitting (attempt " + x.attempt() + ")";
      } else if (e instanceof JobSubmitFailed x) {
        what = "submission attempt " + x.attempt() + " failed, retry at " + x.nextAttemptAt();
      } else if (e instanceof JobSubmitted) {
        what = "SUBMITTED";
      } else if (e instanceof JobStatusChanged x) {
        what = x.status().name();
      } else if (e instanceof JobSucceeded x) {
        what = "SUCCEEDED" + (x.candidateVersion() == null ? "" : " (candidate " + x.candidateVersion() + ")");
      } else if (e instanceof JobFailed) {
        what = "FAILED";
      } else if (e instanceof JobCancelRequested) {
        what = "cancel requested";
      } else if (e instanceof JobCancelled) {
        what = "CANCELLED";
      } else if (e instanceof CandidateHandedOver x) {
        what = "handed over as " + x.version();
      }
      if (what != null) {
        ctx.getLog().info("agent {}: job {} {}", agentId, ((JobEvent) e).jobId(), what);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Views
  // ------------------------------------------------------------------------------------------

  private CoordinatorView statusView(State s) {
    JobSummary active = s.activeJob().map(j -> new JobSummary(j.jobId(), j.status())).orElse(null);
    return new CoordinatorView(agentId, s.poolSize(), policy.minSamples(), policy.triggerNames(),
        nextScheduledRun(s), active, s.meanQuality(), policy.backend().configName(),
        TrainingSwitch.status(policy));
  }

  private JobView view(Job j) {
    return jobView(agentId, j);
  }

  /**
   * The job shape of design §7.1 for a job of {@code agentId}: GET /v1/jobs/{jobId} and the audit's
   * job "as of T" both build it here.
   */
  public static JobView jobView(String agentId, Job j) {
    DatasetManifest m = j.manifest();
    return new JobView(
        j.jobId(),
        agentId,
        j.status(),
        j.trigger().configName(),
        j.algorithm(),
        j.baseModel(),
        j.hyperparams(),
        m == null ? null : new DatasetView(m.count(), m.sha256(), m.path(), m.exclusions(), m.lineage()),
        new BackendView(j.backend().configName(), j.externalId()),
        j.outputModel() == null ? null
            : new OutputModelView(j.outputModel().checkpointUri(), j.outputModel().metrics(), j.candidateVersion()),
        j.lastError(),
        j.history());
  }

  private Refused notFound(String jobId) {
    return new Refused(ErrorCode.NOT_FOUND, "job " + jobId + " not found for agent " + agentId);
  }

  // ------------------------------------------------------------------------------------------
  // Errors from ports
  // ------------------------------------------------------------------------------------------

  private static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static String describe(Throwable t) {
    Throwable u = unwrap(t);
    String msg = u.getMessage() == null ? u.getClass().getSimpleName() : u.getMessage();
    return msg.length() > 500 ? msg.substring(0, 500) + "…" : msg;
  }

  /** Retryable unless the backend said it won't help (REJECTED, NOT_FOUND) or the request is invalid. */
  private static boolean isRetryable(Throwable t) {
    Throwable u = unwrap(t);
    if (u instanceof TrainingBackendException b) {
      return b.retryable();
    }
    return !(u instanceof IllegalArgumentException);
  }

  private static String kindOf(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof TrainingBackendException b ? b.kind().name() : null;
  }
}
