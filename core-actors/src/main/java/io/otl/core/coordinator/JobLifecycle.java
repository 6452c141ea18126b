package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
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
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.TrainingBackendException;
import java.time.Instant;

/**
 * Pure rules of the job lifecycle that are decided on the backend's answers (the transitions
 * themselves are made by {@link CoordinatorEventHandler}).
 */
final class JobLifecycle {
  private JobLifecycle() {}

  /**
   * What a status poll means for the job.
   *
   * @param event the job's new fact, null when nothing changed
   * @param ended the job ended (the threshold trigger may fire again)
   * @param pollAgain the job still runs on the backend (or the poll failed for a passing reason)
   */
  record Polled(JobEvent event, boolean ended, boolean pollAgain) {}

  /** Submitted or running: the backend has it, and polling tells how it goes. */
  static boolean onBackend(Job job) {
    return job.status() == JobStatus.SUBMITTED || job.status() == JobStatus.RUNNING;
  }

  /** Succeeded with a model that ModelVersion does not have yet. */
  static boolean awaitsHandOver(Job job) {
    return job.status() == JobStatus.SUCCEEDED && job.candidateVersion() != null && !job.handedOver();
  }

  /**
   * The backend's status of a submitted or running job.
   *
   * @param candidatesProduced batch jobs that succeeded with a model so far: a new model is {@code v<n+1>}
   */
  static Polled polled(Job job, BackendJobStatus st, int candidatesProduced, Instant now) {
    return switch (st.state()) {
      case PENDING -> new Polled(pendingNote(job, st.message(), now), false, true);
      case RUNNING -> new Polled(job.status() == JobStatus.SUBMITTED
          ? new JobStatusChanged(job.jobId(), JobStatus.RUNNING,
              st.message().isBlank() ? "running on the backend" : st.message(), now)
          : null, false, true);
      case SUCCEEDED -> new Polled(st.outputModel() == null
          ? new JobFailed(job.jobId(), "the backend reported SUCCEEDED without an output model", now)
          : new JobSucceeded(job.jobId(), st.outputModel(), "v" + (candidatesProduced + 1), now), true, false);
      case FAILED -> new Polled(new JobFailed(job.jobId(),
          st.message().isBlank() ? "failed on the backend" : st.message(), now), true, false);
      case STOPPED -> new Polled(new JobCancelled(job.jobId(), job.cancelRequested() ? "stopped on the backend"
          : "stopped on the backend without a cancel request here"
              + (st.message().isBlank() ? "" : ": " + st.message()), now), true, false);
    };
  }

  /** Ray's answer for a job that has not started and says no more. */
  static final String NOT_STARTED = "Job has not started yet.";

  /**
   * Ray's reason for a job still PENDING, recorded once in its history: Ray 2.58 keeps a job whose
   * entrypoint asks for resources the cluster lacks (entrypoint_num_gpus on a GPU-less cluster)
   * PENDING with "… It may be waiting for resources …" for RAY_JOB_START_TIMEOUT_SECONDS (15 min),
   * and the job showed only "accepted by the backend" all that time (trial t76). Null when Ray says
   * nothing beyond "not started yet" or the history already has that reason.
   */
  static JobEvent pendingNote(Job job, String message, Instant now) {
    if (job.status() != JobStatus.SUBMITTED || message == null || message.isBlank()
        || message.strip().equals(NOT_STARTED)) {
      return null;
    }
    String detail = "pending on the backend: " + message.strip();
    for (var h : job.history()) {
      if (detail.equals(h.detail())) {
        return null;
      }
    }
    return new JobStatusChanged(job.jobId(), JobStatus.SUBMITTED, detail, now);
  }

  /** A failed poll: a job the backend no longer knows has failed; any other failure polls again. */
  static Polled pollFailed(Job job, String error, TrainingBackendException.Kind kind, Instant now) {
    if (kind != TrainingBackendException.Kind.NOT_FOUND) {
      return new Polled(null, false, true);
    }
    // A job whose cancel was requested is polled until Ray reports it stopped; a Ray that forgot it
    // meanwhile (a head restarted without persistence, trial t76) has nothing left to stop: cancelled,
    // as a stop answered 404 is.
    return new Polled(job.cancelRequested()
        ? new JobCancelled(job.jobId(), "cancelled (unknown to the backend): " + error, now)
        : new JobFailed(job.jobId(), "the backend no longer knows the job: " + error, now), true, false);
  }

  /**
   * What a failed stop on the backend means for a job whose cancellation was requested.
   *
   * @param event the job's new fact, null when nothing is recorded
   * @param retry send the stop again after the back-off
   */
  record StopFailed(JobEvent event, boolean retry) {}

  /**
   * A stop that failed for the {@code attempts}-th time in a row. A backend that no longer knows
   * the job has nothing to stop. A backend that cannot be reached is asked again, but for a job it
   * never acknowledged (REQUESTED) only {@link CancelRetries#MAX_ATTEMPTS} times: then the job is
   * cancelled with what is unknown. A submitted job stays until the backend answers, as its
   * polling does: it runs there, and releasing it would start a second job beside it. A refused
   * stop cancels a job the backend never acknowledged; for a submitted one, polling tells how it
   * ended.
   */
  static StopFailed stopFailed(Job job, String error, TrainingBackendException.Kind kind, int attempts,
      Instant now) {
    boolean acknowledged = job.status() != JobStatus.REQUESTED;
    if (kind == TrainingBackendException.Kind.NOT_FOUND) {
      return new StopFailed(new JobCancelled(job.jobId(), "cancelled (unknown to the backend)", now), false);
    }
    if (kind == TrainingBackendException.Kind.UNAVAILABLE || kind == null) {
      if (acknowledged || attempts < CancelRetries.MAX_ATTEMPTS) {
        return new StopFailed(null, true);
      }
      return new StopFailed(new JobCancelled(job.jobId(), "cancelled without the backend's confirmation after "
          + attempts + " failed stop attempts", now, CancelRetries.unconfirmed(job.jobId(), attempts, error)), false);
    }
    return new StopFailed(acknowledged ? null
        : new JobCancelled(job.jobId(), "cancelled; the backend refused the stop: " + error, now), false);
  }

  /** How a job event reads in the log (ids and statuses only, no payloads); null for none. */
  static String transition(Event e) {
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
      what = x.status() == JobStatus.SUBMITTED ? x.message() : x.status().name();
    } else if (e instanceof JobSucceeded x) {
      what = "SUCCEEDED" + (x.candidateVersion() == null ? "" : " (candidate " + x.candidateVersion() + ")");
    } else if (e instanceof JobFailed) {
      what = "FAILED";
    } else if (e instanceof JobCancelRequested) {
      what = "cancel requested";
    } else if (e instanceof JobCancelled) {
      what = "CANCELLED";
    } else if (e instanceof CandidateHandedOver x) {
      what = "handed over as " + x.version()
          + (x.renamedFrom() == null ? "" : " (" + x.renamedFrom() + " was taken)");
    }
    return what;
  }
}
