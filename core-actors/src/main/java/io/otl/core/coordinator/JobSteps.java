package io.otl.core.coordinator;

import static io.otl.core.coordinator.PortCalls.call;
import static io.otl.core.coordinator.PortCalls.describe;
import static io.otl.core.coordinator.PortCalls.isRetryable;
import static io.otl.core.coordinator.PortCalls.kindOf;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExportFailed;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorProtocol.CancelFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ExportFinished;
import io.otl.core.coordinator.CoordinatorProtocol.HandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.PollTick;
import io.otl.core.coordinator.CoordinatorProtocol.RetryStep;
import io.otl.core.coordinator.CoordinatorProtocol.StatusPolled;
import io.otl.core.coordinator.CoordinatorProtocol.SubmitFinished;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.StepKey.Step;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingJobSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * The steps of a job after it was requested: export, submission (ray-jobs) or commit
 * (trinity-proxy), polling, cancellation on the backend and the hand-over of the trained model,
 * each a port call whose result comes back as an internal command; and where a recovered job
 * resumes. Every intent is persisted before the call it announces, so a crash in between is
 * recovered by repeating an idempotent call. Handlers return a {@link Plan} that {@code
 * TrainingCoordinator} runs; what each result means for the job is in {@link JobLifecycle}.
 */
final class JobSteps {
  static final String POLL_TIMER = "poll";
  /** How often a proxy commit checks again whether its rewards have all been forwarded. */
  private static final Duration COMMIT_WAIT = Duration.ofMillis(250);

  private final CoordinatorRuntime rt;
  private final ProxyLoop proxy;
  /** The threshold trigger, looked at when a job ends (see {@code TrainingCoordinator.maybeThreshold}). */
  private final Consumer<Plan<State, Event>> maybeThreshold;

  JobSteps(CoordinatorRuntime rt, ProxyLoop proxy, Consumer<Plan<State, Event>> maybeThreshold) {
    this.rt = rt;
    this.proxy = proxy;
    this.maybeThreshold = maybeThreshold;
  }

  // ---- recovery and retries ------------------------------------------------------------------

  /** Resumes what {@code s} (the recovered state) says is unfinished. */
  void resume(State s) {
    s.activeJob().ifPresent(job -> {
      rt.log().info("agent {}: resuming job {} ({})", rt.agentId, job.jobId(), job.status());
      switch (job.status()) {
        case REQUESTED -> {
          if (job.cancelRequested()) {
            cancelOnBackend(job);
          } else if (!rt.policy.trainingEnabled()) {
            rt.log().info("agent {}: job {} stays REQUESTED: {}", rt.agentId, job.jobId(), TrainingSwitch.HELD);
          } else if (job.submitting()) {
            sendSubmission(s, job); // the same job id: the backend makes it idempotent
          } else if (job.nextAttemptAt() != null) {
            retryAt(job.jobId(), job.nextAttemptAt());
          } else if (job.backend() == Backend.RAY_JOBS && job.manifest() == null) {
            export(job);
          } else {
            rt.ctx.getSelf().tell(new RetryStep(job.jobId()));
          }
        }
        case SUBMITTED, RUNNING -> {
          if (job.cancelRequested()) {
            cancelOnBackend(job);
          }
          rt.timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, Duration.ofMillis(1));
        }
        default -> { }
      }
    });
    for (Job job : s.jobs()) {
      if (JobLifecycle.awaitsHandOver(job)) {
        handOver(job);
      }
    }
  }

  private void retryAt(String jobId, Instant at) {
    Duration delay = Duration.between(rt.now(), at);
    retryIn(jobId, delay.isNegative() || delay.isZero() ? Duration.ofMillis(1) : delay);
  }

  private void retryIn(String jobId, Duration delay) {
    rt.timers.startSingleTimer("retry-" + jobId, new RetryStep(jobId), delay);
  }

  Plan<State, Event> onRetryStep(State s, RetryStep c) {
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return p;
    }
    Job job = found.get();
    if (JobLifecycle.awaitsHandOver(job)) {
      handOver(job);
    } else if (!job.status().isActive()) {
      return p;
    } else if (job.cancelRequested()) {
      cancelOnBackend(job);
    } else if (job.status() != JobStatus.REQUESTED) {
      return p;
    } else if (job.backend() == Backend.RAY_JOBS && job.manifest() == null) {
      export(job);
    } else if (job.submitting()) {
      sendSubmission(s, job);
    } else {
      p.add(new JobSubmitting(job.jobId(), job.submitAttempts() + 1, rt.now()));
      p.after(st -> st.job(job.jobId()).ifPresent(j -> sendSubmission(st, j)));
    }
    return p;
  }

  // ---- export --------------------------------------------------------------------------------

  void export(Job job) {
    if (!rt.inFlight.add(StepKey.of(Step.EXPORT, job.jobId()))) {
      return;
    }
    CompletionStage<DatasetManifest> stage = call(() -> rt.ports.exporter()
        .export(new ExportRequest(job.jobId(), rt.agentId, job.algorithm(), job.sessionIds())));
    rt.ctx.pipeToSelf(stage, (manifest, error) -> error != null || manifest == null
        ? new ExportFinished(job.jobId(), null, describe(error == null ? new IllegalStateException("no manifest") : error))
        : new ExportFinished(job.jobId(), manifest, null));
  }

  Plan<State, Event> onExportFinished(State s, ExportFinished c) {
    rt.inFlight.remove(StepKey.of(Step.EXPORT, c.jobId()));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || found.get().status() != JobStatus.REQUESTED || found.get().manifest() != null
        || found.get().cancelRequested()) {
      return p;
    }
    Job job = found.get();
    Instant now = rt.now();
    TrainingPolicy policy = rt.policy;
    if (c.error() != null) {
      int attempt = job.exportAttempts() + 1;
      Duration backoff = policy.backoff(attempt);
      p.add(new DatasetExportFailed(job.jobId(), attempt, c.error(), now.plus(backoff), now));
      if (attempt >= ExportRetries.MAX_ATTEMPTS) {
        // A failure that outlives the retries is not transient: fail the job with the reason and give
        // its trajectories back, so the agent's next trigger can run instead of waiting behind it.
        p.add(new PreflightFailed(job.jobId(), List.of(ExportRetries.reason(attempt, c.error())), true,
            Preflight.rearmAt(p.state().poolSize() + job.sessionIds().size(), policy,
            Preflight.failedInARow(p.state(), job.jobId())), now));
        return p;
      }
      p.after(st -> retryIn(job.jobId(), backoff));
      return p;
    }
    DatasetManifest m = c.manifest();
    p.add(new DatasetExported(job.jobId(), m, now));
    if (!m.clean()) {
      p.add(new PreflightFailed(job.jobId(), List.of("the final PII scan found " + String.join(", ",
          m.piiFindings()) + " in the exported dataset " + m.path()), false, null, now));
      maybeThreshold.accept(p);
    } else if (m.count() <= 0) {
      p.add(new PreflightFailed(job.jobId(), List.of("the exported dataset is empty (no "
          + job.algorithm() + " example could be built from " + job.sessionIds().size() + " trajectories; "
          + m.selectionSummary() + ")" + allHeldOut(m)),
          true, Preflight.rearmAt(p.state().poolSize() + job.sessionIds().size(), policy,
            Preflight.failedInARow(p.state(), job.jobId())), now));
    } else {
      // Logged, not journaled, like the pre-flight warnings; GET /v1/jobs/{jobId} shows it too.
      Preflight.smallDataset(job.backend(), job.hyperparams(), m.count()).forEach(w -> p.after(st ->
          rt.log().warn("agent {}: job {} dataset warning: {}", rt.agentId, job.jobId(), w)));
      p.add(new JobSubmitting(job.jobId(), 1, now));
      p.after(st -> st.job(job.jobId()).ifPresent(j -> sendSubmission(st, j)));
    }
    return p;
  }

  /**
   * What to do when every trajectory went to the evaluation set: a first manual trigger on a small pool
   * (one session: 1 of 1 held out) failed with only the counts, and nothing said why or what to change.
   */
  static String allHeldOut(DatasetManifest m) {
    Integer held = m.exclusions().get("held-out-for-eval");
    if (held == null || held <= 0 || m.exclusions().size() != 1) return "";
    return ": every trajectory fell into the held-out evaluation set (training-runner.eval-fraction); record more"
        + " sessions and trigger again, or lower eval-fraction (0 holds none out)";
  }

  // ---- submission (ray-jobs) and commit (trinity-proxy) --------------------------------------

  void sendSubmission(State s, Job job) {
    if (job.backend() == Backend.TRINITY_PROXY) {
      if (ProxyRules.commitMustWait(s, job)) {
        proxy.forwardPending(s);
        rt.timers.startSingleTimer("commit-wait:" + job.jobId(), new RetryStep(job.jobId()), COMMIT_WAIT);
      } else {
        commit(job);
      }
    } else {
      submit(job);
    }
  }

  private void submit(Job job) {
    int attempt = job.submitAttempts();
    if (!rt.inFlight.add(StepKey.submit(job.jobId(), attempt))) {
      return;
    }
    TrainingPolicy policy = rt.policy;
    rt.ctx.pipeToSelf(call(() -> rt.ports.batchBackend().submit(spec(job, policy))), (sub, error) -> error == null
        ? new SubmitFinished(job.jobId(), attempt, sub.externalId(), null, false)
        : new SubmitFinished(job.jobId(), attempt, null, describe(error), isRetryable(error)));
  }

  private TrainingJobSpec spec(Job job, TrainingPolicy policy) {
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put("agentId", rt.agentId);
    metadata.put("trigger", job.trigger().configName());
    metadata.put("datasetSha256", job.manifest().sha256());
    metadata.put("datasetCount", String.valueOf(job.manifest().count()));
    DatasetLineage lineage = job.manifest().lineage();
    if (lineage != null) {
      metadata.put("startFrom", lineage.startFrom());
    }
    // Continual training: the exporter resolved the stable checkpoint (or the fallback to base).
    String startCheckpoint = lineage != null && lineage.startsFromCheckpoint() ? lineage.startCheckpoint() : null;
    return new TrainingJobSpec(job.jobId(), rt.agentId, job.algorithm(), job.baseModel(),
        job.hyperparams(), job.manifest().path(), policy.checkpointRootDir(), metadata, startCheckpoint);
  }

  private void commit(Job job) {
    int attempt = job.submitAttempts();
    if (!rt.inFlight.add(StepKey.submit(job.jobId(), attempt))) {
      return;
    }
    rt.ctx.pipeToSelf(call(() -> rt.ports.onlineBackend().commit()), (ok, error) -> error == null
        ? new SubmitFinished(job.jobId(), attempt, "commit", null, false)
        : new SubmitFinished(job.jobId(), attempt, null, describe(error), isRetryable(error)));
  }

  Plan<State, Event> onSubmitFinished(State s, SubmitFinished c) {
    rt.inFlight.remove(StepKey.submit(c.jobId(), c.attempt()));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return p;
    }
    Job job = found.get();
    if (job.status() == JobStatus.CANCELLED && c.externalId() != null && job.backend() == Backend.RAY_JOBS) {
      // Accepted after we recorded the cancellation: stop it too (cancel is idempotent).
      rt.log().info("agent {}: job {} was accepted after its cancellation; stopping it", rt.agentId, job.jobId());
      try {
        rt.ports.batchBackend().cancel(job.jobId());
      } catch (RuntimeException e) {
        rt.log().warn("agent {}: stopping job {} failed: {}", rt.agentId, job.jobId(), describe(e));
      }
      return p;
    }
    if (job.status() != JobStatus.REQUESTED || !job.submitting() || job.submitAttempts() != c.attempt()) {
      return p; // stale
    }
    Instant now = rt.now();
    if (c.externalId() != null) {
      if (job.backend() == Backend.TRINITY_PROXY) {
        p.add(new JobSucceeded(job.jobId(), null, null, now));
        maybeThreshold.accept(p);
      } else {
        p.add(new JobSubmitted(job.jobId(), c.externalId(), now));
        p.after(st -> rt.timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, rt.policy.pollInterval()));
      }
    } else if (c.retryable()) {
      Duration backoff = rt.policy.backoff(c.attempt());
      p.add(new JobSubmitFailed(job.jobId(), c.attempt(), c.error(), now.plus(backoff), now));
      p.after(st -> retryIn(job.jobId(), backoff));
    } else {
      p.add(new JobFailed(job.jobId(), (job.backend() == Backend.TRINITY_PROXY ? "commit" : "submission")
          + " refused by the backend: " + c.error(), now));
      maybeThreshold.accept(p);
    }
    return p;
  }

  // ---- polling -------------------------------------------------------------------------------

  Plan<State, Event> onPollTick(State s) {
    Optional<Job> active = s.activeJob();
    if (active.isPresent() && JobLifecycle.onBackend(active.get()) && rt.inFlight.add(StepKey.of(Step.POLL))) {
      String jobId = active.get().jobId();
      rt.ctx.pipeToSelf(call(() -> rt.ports.batchBackend().status(jobId)), (st, error) -> error == null
          ? new StatusPolled(jobId, st, null, null)
          : new StatusPolled(jobId, null, describe(error), kindOf(error)));
    }
    return new Plan<>(s, CoordinatorEventHandler::applyEvent);
  }

  Plan<State, Event> onStatusPolled(State s, StatusPolled c) {
    rt.inFlight.remove(StepKey.of(Step.POLL));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || !JobLifecycle.onBackend(found.get())) {
      return p;
    }
    Job job = found.get();
    // One instant for the poll's events: the RUNNING entry below was stamped after the SUCCEEDED one
    // it precedes in the history (seen on a real Ray, trial t76).
    Instant now = rt.now();
    JobLifecycle.Polled polled = c.error() == null
        ? JobLifecycle.polled(job, c.status(), s.candidatesProduced(), now)
        : JobLifecycle.pollFailed(job, c.error(), c.errorKind(), now);
    if (polled.event() instanceof JobSucceeded && job.status() == JobStatus.SUBMITTED) {
      // A job that ran between two polls (shorter than poll-interval) was never seen RUNNING; it
      // did run, and the history says so rather than skipping a stage of the lifecycle (design §3.2).
      p.add(new JobStatusChanged(job.jobId(), JobStatus.RUNNING,
          "ran on the backend between two polls: it had succeeded when next polled", now));
    }
    if (polled.event() != null) {
      p.add(polled.event());
    }
    if (polled.event() instanceof JobSucceeded x && x.outputModel() != null) {
      p.after(st2 -> st2.job(job.jobId()).ifPresent(this::handOver));
    }
    if (polled.ended()) {
      maybeThreshold.accept(p);
    }
    if (polled.pollAgain()) {
      if (c.error() != null) {
        rt.log().warn("agent {}: polling job {} failed ({}); polling again in {}", rt.agentId,
            job.jobId(), c.errorKind(), rt.policy.pollInterval());
      }
      p.after(st -> {
        if (st.activeJobId() != null && st.activeJobId().equals(job.jobId())) {
          rt.timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, rt.policy.pollInterval());
        }
      });
    }
    return p;
  }

  // ---- cancellation --------------------------------------------------------------------------

  void cancelOnBackend(Job job) {
    if (!rt.inFlight.add(StepKey.of(Step.CANCEL, job.jobId()))) {
      return;
    }
    boolean proxy = job.backend() == Backend.TRINITY_PROXY;
    CompletionStage<Void> stage = proxy
        // A commit cannot be recalled: the job just ends here.
        ? CompletableFuture.completedFuture(null)
        : call(() -> rt.ports.batchBackend().cancel(job.jobId()));
    boolean beforeAck = !proxy && job.status() == JobStatus.REQUESTED;
    rt.ctx.pipeToSelf(stage, (ok, error) -> error == null
        ? new CancelFinished(job.jobId(), null, null)
        : new CancelFinished(job.jobId(), describe(error), kindOf(error), beforeAck));
  }

  Plan<State, Event> onCancelFinished(State s, CancelFinished c) {
    StepKey key = StepKey.of(Step.CANCEL, c.jobId());
    rt.inFlight.remove(key);
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || !found.get().status().isActive() || !found.get().cancelRequested()) {
      return p;
    }
    Job job = found.get();
    Instant now = rt.now();
    if (c.error() != null && c.beforeAcknowledged() && job.status() != JobStatus.REQUESTED) {
      // The stop overtook the submission: the backend did not know the job yet, and has accepted it
      // since (JobSubmitted). Its refusal says nothing about the job now running there: stop it again.
      rt.log().info("agent {}: job {} was accepted by the backend after its stop was sent; stopping it again",
          rt.agentId, job.jobId());
      cancelOnBackend(job);
      return p;
    }
    if (c.error() == null) {
      rt.failures.remove(key);
      if (job.backend() != Backend.TRINITY_PROXY && JobLifecycle.onBackend(job)) {
        // Ray's {"stopped": true} means the stop was sent to the job's supervisor, not that the job has
        // stopped: a RUNNING job turns STOPPED a moment later, and one PENDING for resources the cluster
        // lacks (entrypoint_num_gpus on a GPU-less Ray 2.58, trial t76) stays PENDING, the stop queued,
        // and may still start. Polling records CANCELLED once Ray reports STOPPED (or how it ended), and
        // the agent stays busy until then, so no second job starts beside it.
        rt.log().info("agent {}: Ray accepted the stop of job {}; polling until it reports the job stopped",
            rt.agentId, job.jobId());
        rt.timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, Duration.ofMillis(1));
        return p;
      }
      p.add(new JobCancelled(job.jobId(), job.backend() == Backend.TRINITY_PROXY
          ? "cancelled (a commit already sent cannot be recalled)" : "stopped on the backend", now));
      maybeThreshold.accept(p);
      return p;
    }
    int attempts = rt.failures.getOrDefault(key, 0) + 1;
    JobLifecycle.StopFailed failed = JobLifecycle.stopFailed(job, c.error(), c.errorKind(), attempts, now);
    if (failed.retry()) {
      Duration backoff = rt.failed(key);
      rt.log().warn("agent {}: cancelling job {} failed ({}, attempt {}); retrying", rt.agentId, job.jobId(),
          c.errorKind(), attempts);
      retryIn(job.jobId(), backoff);
    } else if (failed.event() != null) {
      rt.failures.remove(key);
      p.add(failed.event());
      maybeThreshold.accept(p);
    } else {
      // Refused (e.g. it has just finished): polling records how it really ended, at once rather than
      // after poll-interval, so the job does not show a cancel pending on a run that is over.
      rt.log().warn("agent {}: the backend refused to stop job {} ({}); polling its final status",
          rt.agentId, job.jobId(), c.error());
      rt.timers.startSingleTimer(POLL_TIMER, PollTick.INSTANCE, Duration.ofMillis(1));
    }
    return p;
  }

  // ---- hand-over -----------------------------------------------------------------------------

  private void handOver(Job job) {
    if (job.outputModel() == null || job.candidateVersion() == null
        || !rt.inFlight.add(StepKey.of(Step.HAND_OVER, job.jobId()))) {
      return;
    }
    OutputModel m = job.outputModel();
    String version = job.candidateVersion();
    rt.ctx.pipeToSelf(CandidateNames.registerUnderFreeName(version, name -> rt.ports.candidateSink().register(
            rt.agentId, name, m.checkpointUri(), m.checkpointUri(), job.jobId(), m.metrics(), trainedFrom(job))),
        (as, error) -> new HandOverFinished(job.jobId(), version, as, error == null ? null : describe(error)));
  }

  /** The version whose checkpoint the job continued, null when it started from the base model. */
  private static String trainedFrom(Job job) {
    DatasetLineage lineage = job.manifest() == null ? null : job.manifest().lineage();
    return lineage != null && lineage.startsFromCheckpoint() ? lineage.startVersion() : null;
  }

  /** The event for a candidate ModelVersion has, under its given name or the one it ended on. */
  static CandidateHandedOver handedOver(String jobId, String given, String as, Instant now) {
    return as == null || as.equals(given)
        ? new CandidateHandedOver(jobId, given, now)
        : new CandidateHandedOver(jobId, as, now, given);
  }

  Plan<State, Event> onHandOverFinished(State s, HandOverFinished c) {
    StepKey key = StepKey.of(Step.HAND_OVER, c.jobId());
    rt.inFlight.remove(key);
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty() || found.get().handedOver() || !c.version().equals(found.get().candidateVersion())) {
      return p;
    }
    if (c.error() != null) {
      Duration backoff = rt.failed(key);
      rt.log().warn("agent {}: handing over {} of job {} failed; retrying", rt.agentId, c.version(), c.jobId());
      retryIn(c.jobId(), backoff);
      return p;
    }
    rt.failures.remove(key);
    p.add(handedOver(c.jobId(), c.version(), c.handedOverAs(), rt.now()));
    return p;
  }
}
