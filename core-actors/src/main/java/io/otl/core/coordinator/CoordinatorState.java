package io.otl.core.coordinator;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.otl.core.Persisted;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorReplies.HistoryEntry;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.OutputModel;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The state of the {@link TrainingCoordinator}: immutable values made only by {@link
 * CoordinatorEventHandler} (the snapshot is {@link State}; see PersistentMap for why and how it
 * stays O(log n) per event).
 */
public interface CoordinatorState {

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

  /**
   * What the coordinator knows of one session. Written as a JSON array in snapshots (compact).
   *
   * @param at the fact time of the completion or revision it holds (may be a client's time)
   * @param recordedAt when the node wrote that completion or revision (the server's clock); null in
   *     entries made before it was kept (4-element arrays in older snapshots), then {@code at} stands
   *     in for it. Only forgetting ({@link SessionForgetting}) reads it.
   */
  @JsonFormat(shape = JsonFormat.Shape.ARRAY)
  @JsonPropertyOrder({"kind", "reward", "quality", "at", "recordedAt"})
  public record SessionEntry(Kind kind, double reward, double quality, Instant at, Instant recordedAt) {
    public enum Kind {
      /** In the pool, eligible, not yet used. */
      POOLED,
      /** Below min-quality when seen. */
      FILTERED,
      /** Taken by a job: never pooled again. */
      USED
    }

    /** An entry of a message that carried no write time (older events). */
    public SessionEntry(Kind kind, double reward, double quality, Instant at) {
      this(kind, reward, quality, at, null);
    }

    @JsonCreator
    public static SessionEntry of(
        @JsonProperty("kind") Kind kind,
        @JsonProperty("reward") double reward,
        @JsonProperty("quality") double quality,
        @JsonProperty("at") Instant at,
        @JsonProperty("recordedAt") Instant recordedAt) {
      return new SessionEntry(kind, reward, quality, at, recordedAt);
    }

    public static SessionEntry of(Kind kind, double reward, double quality, Instant at) {
      return new SessionEntry(kind, reward, quality, at, null);
    }

    /**
     * The snapshot form: {@code [kind, reward, quality, at]}, then {@code recordedAt} when known, so
     * that an entry without it is written exactly as builds before it wrote it (and reads back so).
     */
    @com.fasterxml.jackson.annotation.JsonValue
    List<Object> asArray() {
      return recordedAt == null ? java.util.Arrays.asList(kind, reward, quality, at)
          : java.util.Arrays.asList(kind, reward, quality, at, recordedAt);
    }

    /** When its newest message was written: {@code recordedAt}, or {@code at} for older entries. */
    Instant writtenAt() {
      return recordedAt != null ? recordedAt : at;
    }

    SessionEntry withKind(Kind k) {
      return new SessionEntry(k, reward, quality, at, recordedAt);
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
      List<HistoryEntry> history,
      // trinity-proxy: the proxy-<n> this commit job led to (the newest); a field of its own, so
      // journals written before replay to the states they had (candidateVersion stays v<n> only)
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          String proxyCandidate) {

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
      String proxyCandidate;

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
        proxyCandidate = j.proxyCandidate;
      }

      Builder log(JobStatus s, Instant at, String detail) {
        history.add(new HistoryEntry(s, at, detail));
        return this;
      }

      Job build() {
        return new Job(j.jobId, j.trigger, j.requestedBy, j.backend, j.algorithm, j.baseModel,
            j.hyperparams, j.sessionIds, j.requestedAt, status, manifest, exportAttempts,
            submitAttempts, submitting, externalId, lastError, nextAttemptAt, outputModel,
            candidateVersion, handedOver, cancelRequested, preflightFailures, history, proxyCandidate);
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
   * @param proxyRestarts how often the proxy's model version was seen to go back (a restart), so
   *     that {@code proxyModelVersion} is the latest of the proxy's current run
   * @param forgottenBefore the newest {@code SessionsForgotten.before}: used and filtered sessions
   *     written before it were dropped from {@code sessions}; null while none was (and in snapshots
   *     written before forgetting existed)
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
      PolicyChanged policyChange,
      int proxyRestarts,
      // absent when null: a snapshot of a coordinator that never forgot stays what earlier builds wrote
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
          Instant forgottenBefore)
      implements Persisted {

    public static final State EMPTY = new State(PersistentMap.empty(), 0, 0.0, PersistentMap.empty(),
        List.of(), 1, null, 0, null, null, 0, null, null, 0, null);

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

    /**
     * Mean quality of the pool, null when it is empty. Rounded to 12 significant digits: the running sum
     * carries binary noise (0.8 + 0.8 + 1 + 1 + 1 is 4.6000000000000005), which the API showed as a mean of
     * 0.9200000000000002 and which could put a mean of exactly {@code min-quality} a hair below it.
     */
    public Double meanQuality() {
      if (poolSize == 0) return null;
      return java.math.BigDecimal.valueOf(poolQualitySum)
          .divide(java.math.BigDecimal.valueOf(poolSize), new java.math.MathContext(12))
          .doubleValue();
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
          pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    State withActive(String active) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq, active,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    State withSessions(PersistentMap<SessionEntry> s, int size, double sum) {
      return new State(s, size, size == 0 ? 0.0 : sum, pendingRewards, jobs, nextJobSeq, activeJobId,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    State withPending(PersistentMap<PendingReward> p) {
      return new State(sessions, poolSize, poolQualitySum, p, jobs, nextJobSeq, activeJobId,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    State withSchedule(ScheduleState sc) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, sc, proxyModelVersion,
          pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    State withCounters(int seq, int produced, Integer rearm) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, seq, activeJobId,
          produced, rearm, schedule, proxyModelVersion, pendingProxyCandidate, policyChange, proxyRestarts, forgottenBefore);
    }

    /** A new run of the proxy: its versions are counted from its start again. */
    State withProxyRestarts(int restarts) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate,
          policyChange, restarts, forgottenBefore);
    }

    State withProxy(int modelVersion, ProxyModelObserved pending) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, modelVersion, pending, policyChange, proxyRestarts, forgottenBefore);
    }

    /** Used and filtered sessions were forgotten: {@code s} without them, {@code before} the newest cutoff. */
    State withForgotten(PersistentMap<SessionEntry> s, Instant before) {
      return new State(s, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq, activeJobId,
          candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion, pendingProxyCandidate, policyChange,
          proxyRestarts, before);
    }

    State withPolicyChange(PolicyChanged change) {
      return new State(sessions, poolSize, poolQualitySum, pendingRewards, jobs, nextJobSeq,
          activeJobId, candidatesProduced, thresholdRearmAt, schedule, proxyModelVersion,
          pendingProxyCandidate, change, proxyRestarts, forgottenBefore);
    }
  }
}
