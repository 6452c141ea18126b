package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExportFailed;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobEvent;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.ProxyRestarted;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorEvents.RewardUpdated;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotSkipped;
import io.otl.core.coordinator.CoordinatorEvents.SessionsForgotten;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryFiltered;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorReplies.HistoryEntry;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.PendingReward;
import io.otl.core.coordinator.CoordinatorState.ScheduleState;
import io.otl.core.coordinator.CoordinatorState.SessionEntry;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The coordinator's event handler, including the job lifecycle REQUESTED → SUBMITTED → RUNNING →
 * SUCCEEDED | FAILED | CANCELLED as events make it. Pure and static: the entity, its command
 * handlers' plans and the audit's "state as of T" all replay with this one function.
 */
public final class CoordinatorEventHandler {
  private CoordinatorEventHandler() {}

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
    if (e instanceof ProxyRestarted r) {
      // a new run of the proxy: its versions count from where it is now (a candidate of the
      // previous run still waiting for its hand-over keeps waiting: those weights existed)
      return s.withProxyRestarts(r.restarts()).withProxy(r.modelVersion(), s.pendingProxyCandidate());
    }
    if (e instanceof TrajectoryPooled p) {
      SessionEntry prev = s.sessions().get(p.sessionId());
      if (prev != null && prev.kind() == SessionEntry.Kind.POOLED) {
        return s; // cannot happen (the command handler checks); stay idempotent
      }
      State next = s.withSessions(
          s.sessions().with(p.sessionId(),
              new SessionEntry(SessionEntry.Kind.POOLED, p.reward(), p.qualityScore(), p.completedAt(),
                  p.recordedAt())),
          s.poolSize() + 1, s.poolQualitySum() + p.qualityScore());
      if (!p.msgIds().isEmpty()) {
        next = next.withPending(next.pendingRewards().with(p.sessionId(),
            new PendingReward(p.msgIds(), p.reward())));
      }
      return next;
    }
    if (e instanceof TrajectoryFiltered f) {
      return s.withSessions(s.sessions().with(f.sessionId(),
              new SessionEntry(SessionEntry.Kind.FILTERED, 0.0, f.qualityScore(), f.completedAt(), f.recordedAt())),
          s.poolSize(), s.poolQualitySum());
    }
    if (e instanceof RewardUpdated r) {
      SessionEntry prev = s.sessions().get(r.sessionId());
      if (prev == null || prev.kind() != SessionEntry.Kind.POOLED) {
        return s;
      }
      State next = s.withSessions(
          s.sessions().with(r.sessionId(),
              new SessionEntry(SessionEntry.Kind.POOLED, r.reward(), r.qualityScore(), r.revisedAt(),
                  r.recordedAt() != null ? r.recordedAt() : prev.recordedAt())),
          s.poolSize(), s.poolQualitySum() - prev.quality() + r.qualityScore());
      PendingReward pending = next.pendingRewards().get(r.sessionId());
      if (pending != null) {
        next = next.withPending(next.pendingRewards().with(r.sessionId(),
            new PendingReward(pending.msgIds(), r.reward())));
      }
      return next;
    }
    if (e instanceof SessionsForgotten f) {
      return forgotten(s, f);
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

  /** Drops the used and filtered entries written before the cutoff; the pool and its counters stay. */
  private static State forgotten(State s, SessionsForgotten f) {
    PersistentMap<SessionEntry> kept = s.sessions();
    java.util.List<String> gone = new java.util.ArrayList<>();
    s.sessions().forEach((id, entry) -> {
      if (SessionForgetting.forgettable(entry, f.before())) gone.add(id);
    });
    for (String id : gone) kept = kept.without(id);
    Instant before = s.forgottenBefore() != null && s.forgottenBefore().isAfter(f.before())
        ? s.forgottenBefore() : f.before();
    return s.withForgotten(kept, before);
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
              r.trigger().configName() + " trigger"
                  + (r.requestedBy() == null || r.requestedBy().equals(r.trigger().configName()) ? "" : " (" + r.requestedBy() + ")")
                  + ": " + r.sessionIds().size() + " trajectories taken from the pool")), null);
      int seq = Math.max(s.nextJobSeq(), JobIds.seqOf(r.jobId()) + 1);
      return s.withSessions(sessions, size, sum).withJob(job).withActive(r.jobId())
          .withCounters(seq, s.candidatesProduced(), null);
    }
    if (e instanceof ProxyModelObserved o) {
      return s.withProxy(Math.max(s.proxyModelVersion(), o.modelVersion()), o);
    }
    Optional<Job> found = e.jobId() == null ? Optional.empty() : s.job(e.jobId());
    if (e instanceof CandidateHandedOver h) {
      State next = s;
      boolean proxyCandidate = s.pendingProxyCandidate() != null && s.pendingProxyCandidate().version().equals(h.givenName());
      if (proxyCandidate) {
        next = next.withProxy(s.proxyModelVersion(), null);
      }
      // A proxy candidate's source job is the commit job that succeeded before the proxy trained
      // (JobSucceeded without a model): the job view and the job's lineage name it from here.
      if (proxyCandidate && found.isPresent()) {
        Job.Builder b = found.get().edit();
        b.proxyCandidate = h.version();
        return next.withJob(b.build());
      }
      if (found.isPresent() && h.givenName().equals(found.get().candidateVersion())) {
        Job.Builder b = found.get().edit();
        b.handedOver = true;
        b.candidateVersion = h.version(); // the job's view and lineage show the name the model has
        next = next.withJob(b.log(b.status, h.at(), "handed over to ModelVersion as " + h.version()
            + (h.renamedFrom() == null ? "" : " (" + h.renamedFrom() + " is another version's name)")).build());
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
      if (x.unconfirmed() != null) {
        b.lastError = x.unconfirmed();
      }
      b.log(JobStatus.CANCELLED, x.at(), x.detail());
      return ended(s.withJob(b.build()), x.jobId());
    }
    throw new IllegalStateException("unhandled job event " + e.getClass().getName() + " (active " + active + ")");
  }

  private static State ended(State s, String jobId) {
    return jobId.equals(s.activeJobId()) ? s.withActive(null) : s;
  }

  /** Replays {@code events} from {@link State#EMPTY} with {@link #applyEvent}. */
  public static State replay(Iterable<? extends Event> events) {
    State s = State.EMPTY;
    for (Event e : events) {
      s = applyEvent(s, e);
    }
    return s;
  }
}
