package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExportFailed;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorReplies.HistoryEntry;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.OutputModel;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The job half of {@link CoordinatorEventHandler}: each lifecycle event's effect on the job, its
 * history (what GET /v1/jobs/{id} shows), the active job and the candidate counter (package-info
 * "Jobs", "Candidate names", "Cancel", "trinity-proxy").
 */
class JobEventsTest {
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final String JOB = "job-1-a";
  static final OutputModel MODEL = new OutputModel("s3://ckpt/1", Map.of("loss", 0.1));

  static JobRequested requested(String jobId, Backend backend, String... sessions) {
    return new JobRequested(jobId, TriggerType.MANUAL, "alice", backend, "sft", "base", Map.of("epochs", 1),
        List.of(sessions), T0);
  }

  static State replay(Event... events) {
    return CoordinatorEventHandler.replay(Arrays.asList(events));
  }

  static Job job(State s, String jobId) {
    return s.job(jobId).orElseThrow();
  }

  static List<String> details(Job j) {
    List<String> out = new ArrayList<>();
    for (HistoryEntry h : j.history()) {
      out.add(h.status() + " " + h.detail());
    }
    return out;
  }

  @Test
  void aRequestedJobCarriesItsConfigurationAndIsTheActiveOne() {
    State s = replay(PoolEventsTest.pooled("s1", 1, 1, T0), requested(JOB, Backend.RAY_JOBS, "s1"));
    Job j = job(s, JOB);
    assertEquals(JobStatus.REQUESTED, j.status());
    assertEquals(List.of("s1"), j.sessionIds());
    assertEquals(Map.of("epochs", 1), j.hyperparams());
    assertEquals("alice", j.requestedBy());
    assertEquals(List.of(new HistoryEntry(JobStatus.REQUESTED, T0,
        "manual trigger (alice): 1 trajectories taken from the pool")), j.history());
    assertEquals(JOB, s.activeJobId());
    assertEquals(j, s.activeJob().orElseThrow());
    assertEquals(2, s.nextJobSeq());
    State threshold = replay(new JobRequested("job-1-b", TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "sft",
        "base", null, null, T0));
    assertEquals("threshold trigger: 0 trajectories taken from the pool",
        job(threshold, "job-1-b").history().get(0).detail());
    // the coordinator records its own triggers as the requester: not "threshold trigger (threshold)"
    State byItself = replay(new JobRequested("job-1-c", TriggerType.THRESHOLD, "threshold", Backend.RAY_JOBS, "sft",
        "base", null, null, T0));
    assertEquals("threshold trigger: 0 trajectories taken from the pool",
        job(byItself, "job-1-c").history().get(0).detail());
  }

  @Test
  void theNextJobSequenceNeverGoesBackwards() {
    State s = replay(requested("job-7-a", Backend.RAY_JOBS), new JobFailed("job-7-a", "x", T0),
        requested("job-3-a", Backend.RAY_JOBS));
    assertEquals(8, s.nextJobSeq());
    assertEquals(List.of("job-7-a", "job-3-a"), s.jobs().stream().map(Job::jobId).toList(), "oldest first");
  }

  @Test
  void exportThenSubmissionThenRunningThenSuccessWithACandidate() {
    DatasetManifest m = new DatasetManifest("/d/job-1-a.jsonl", 2, "abc", List.of("s1", "s2"), List.of(), "sft-messages",
        5, Map.of("below-sft-min-reward", 3));
    Instant next = T0.plusSeconds(10);
    State s = replay(requested(JOB, Backend.RAY_JOBS, "s1", "s2"),
        new DatasetExportFailed(JOB, 1, "disk full", next, T0));
    Job failedOnce = job(s, JOB);
    assertEquals(1, failedOnce.exportAttempts());
    assertEquals("dataset export failed: disk full", failedOnce.lastError());
    assertEquals(next, failedOnce.nextAttemptAt());
    assertEquals(JobStatus.REQUESTED, failedOnce.status());

    s = CoordinatorEventHandler.applyEvent(s, new DatasetExported(JOB, m, T0));
    assertEquals(m, job(s, JOB).manifest());
    assertNull(job(s, JOB).lastError());
    assertNull(job(s, JOB).nextAttemptAt());

    s = CoordinatorEventHandler.applyEvent(s, new JobSubmitting(JOB, 1, T0));
    assertTrue(job(s, JOB).submitting());
    assertEquals(1, job(s, JOB).submitAttempts());
    s = CoordinatorEventHandler.applyEvent(s, new JobSubmitted(JOB, "raysubmit_1", T0));
    Job submitted = job(s, JOB);
    assertEquals(JobStatus.SUBMITTED, submitted.status());
    assertFalse(submitted.submitting());
    assertEquals("raysubmit_1", submitted.externalId());
    s = CoordinatorEventHandler.applyEvent(s, new JobStatusChanged(JOB, JobStatus.RUNNING, "epoch 1", T0));
    assertEquals(JobStatus.RUNNING, job(s, JOB).status());
    assertEquals(JOB, s.activeJobId());

    s = CoordinatorEventHandler.applyEvent(s, new JobSucceeded(JOB, MODEL, "v1", T0));
    Job done = job(s, JOB);
    assertEquals(JobStatus.SUCCEEDED, done.status());
    assertEquals(MODEL, done.outputModel());
    assertEquals("v1", done.candidateVersion());
    assertFalse(done.handedOver());
    assertNull(s.activeJobId());
    assertEquals(1, s.candidatesProduced());
    assertEquals(List.of(
        "REQUESTED manual trigger (alice): 2 trajectories taken from the pool",
        "REQUESTED export attempt 1 failed: disk full; next attempt at 2026-01-01T00:00:10Z",
        "REQUESTED dataset exported: 2 lines, sha256 abc (5 seen: 3 below-sft-min-reward)",
        "REQUESTED submission attempt 1",
        "SUBMITTED accepted by the backend as raysubmit_1",
        "RUNNING epoch 1",
        "SUCCEEDED output model s3://ckpt/1 (candidate v1)"), details(done));
  }

  @Test
  void aManifestWithoutSelectionCountsSaysNothingOfThem() {
    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 1, "abc", List.of("s1"), List.of(), "sft-messages");
    State s = replay(requested(JOB, Backend.RAY_JOBS, "s1"), new DatasetExported(JOB, m, T0));
    assertEquals("dataset exported: 1 lines, sha256 abc", job(s, JOB).history().get(1).detail());
  }

  @Test
  void aRetryableSubmissionFailureKeepsTheJobRequestedWithItsNextAttempt() {
    Instant next = T0.plusSeconds(4);
    State s = replay(requested(JOB, Backend.RAY_JOBS), new JobSubmitting(JOB, 2, T0),
        new JobSubmitFailed(JOB, 1, "503", next, T0));
    Job j = job(s, JOB);
    assertEquals(JobStatus.REQUESTED, j.status());
    assertFalse(j.submitting());
    assertEquals(2, j.submitAttempts(), "a late failure of an earlier attempt does not lower the count");
    assertEquals("503", j.lastError());
    assertEquals(next, j.nextAttemptAt());
    assertEquals("attempt 1 failed: 503; next attempt at 2026-01-01T00:00:04Z", j.history().get(2).detail());
    assertEquals(3, job(replay(requested(JOB, Backend.RAY_JOBS), new JobSubmitFailed(JOB, 3, "503", next, T0)),
        JOB).submitAttempts());
    s = CoordinatorEventHandler.applyEvent(s, new JobSubmitting(JOB, 3, T0));
    assertNull(job(s, JOB).nextAttemptAt(), "the attempt is under way");
  }

  @Test
  void aProxyCommitSucceedsWithoutAModelAndCountsNoCandidate() {
    State s = replay(requested(JOB, Backend.TRINITY_PROXY), new JobSubmitting(JOB, 1, T0),
        new JobSucceeded(JOB, null, null, T0));
    Job j = job(s, JOB);
    assertEquals(List.of("REQUESTED manual trigger (alice): 0 trajectories taken from the pool",
        "REQUESTED commit attempt 1", "SUCCEEDED committed to the trainer"), details(j));
    assertEquals(0, s.candidatesProduced());
    assertFalse(j.submitting());
    assertNull(s.activeJobId());
  }

  @Test
  void aFailedJobEndsWithItsError() {
    State s = replay(requested(JOB, Backend.RAY_JOBS), new JobSubmitting(JOB, 1, T0),
        new JobSubmitFailed(JOB, 1, "503", T0.plusSeconds(1), T0), new JobFailed(JOB, "refused", T0));
    Job j = job(s, JOB);
    assertEquals(JobStatus.FAILED, j.status());
    assertEquals("refused", j.lastError());
    assertNull(j.nextAttemptAt());
    assertFalse(j.submitting());
    assertNull(s.activeJobId());
    assertFalse(j.status().isActive());
  }

  @Test
  void aPreflightFailureNamesEveryReason() {
    State s = replay(requested(JOB, Backend.RAY_JOBS),
        new PreflightFailed(JOB, List.of("a", "b"), true, null, T0));
    Job j = job(s, JOB);
    assertEquals(List.of("a", "b"), j.preflightFailures());
    assertEquals("pre-flight failed: a; b", j.lastError());
    assertEquals("FAILED pre-flight failed: a; b (trajectories returned to the pool)", details(j).get(1));
    State kept = replay(requested(JOB, Backend.RAY_JOBS), new PreflightFailed(JOB, List.of("pii"), false, null, T0));
    assertEquals("FAILED pre-flight failed: pii (trajectories kept with this job)", details(job(kept, JOB)).get(1));
  }

  @Test
  void aCancelIsRequestedThenRecordedWithWhatIsUnknown() {
    State s = replay(requested(JOB, Backend.RAY_JOBS), new JobSubmitting(JOB, 1, T0),
        new JobCancelRequested(JOB, "bob", T0));
    assertTrue(job(s, JOB).cancelRequested());
    assertEquals(JobStatus.REQUESTED, job(s, JOB).status());
    assertEquals(JOB, s.activeJobId(), "still active until the backend took the stop");
    s = CoordinatorEventHandler.applyEvent(s, new JobCancelled(JOB, "cancelled without confirmation", T0, "may run"));
    Job j = job(s, JOB);
    assertEquals(JobStatus.CANCELLED, j.status());
    assertEquals("may run", j.lastError());
    assertFalse(j.submitting());
    assertNull(s.activeJobId());
    assertEquals(List.of("REQUESTED manual trigger (alice): 0 trajectories taken from the pool",
        "REQUESTED submission attempt 1", "REQUESTED cancel requested by bob",
        "CANCELLED cancelled without confirmation"), details(j));

    State confirmed = replay(requested(JOB, Backend.RAY_JOBS), new DatasetExportFailed(JOB, 1, "x", T0, T0),
        new JobCancelRequested(JOB, null, T0), new JobCancelled(JOB, "cancelled before submission", T0));
    assertEquals("dataset export failed: x", job(confirmed, JOB).lastError(), "a confirmed stop adds no error");
    assertNull(job(confirmed, JOB).nextAttemptAt());
    assertEquals("REQUESTED cancel requested", details(job(confirmed, JOB)).get(2));
  }

  @Test
  void anEndedJobThatIsNotTheActiveOneLeavesTheActiveJob() {
    State s = replay(requested("job-1-a", Backend.RAY_JOBS), requested("job-2-a", Backend.RAY_JOBS),
        new JobFailed("job-1-a", "late", T0));
    assertEquals("job-2-a", s.activeJobId());
  }

  @Test
  void aHandOverUnderAnotherNameBecomesTheJobsCandidate() {
    State s = replay(requested(JOB, Backend.RAY_JOBS), new JobSucceeded(JOB, MODEL, "v1", T0),
        new CandidateHandedOver(JOB, "v2", T0, "v1"));
    Job j = job(s, JOB);
    assertTrue(j.handedOver());
    assertEquals("v2", j.candidateVersion());
    assertEquals("SUCCEEDED handed over to ModelVersion as v2 (v1 is another version's name)", details(j).get(2));

    State plain = replay(requested(JOB, Backend.RAY_JOBS), new JobSucceeded(JOB, MODEL, "v1", T0),
        new CandidateHandedOver(JOB, "v1", T0));
    assertEquals("SUCCEEDED handed over to ModelVersion as v1", details(job(plain, JOB)).get(2));

    State stale = CoordinatorEventHandler.applyEvent(plain, new CandidateHandedOver(JOB, "v9", T0));
    assertEquals(job(plain, JOB), job(stale, JOB), "a hand-over of another name is not this job's");
  }

  @Test
  void theProxyCandidateIsPendingUntilHandedOverAndVersionsOnlyGrow() {
    ProxyModelObserved v3 = new ProxyModelObserved(null, 3, "proxy-3", Map.of("model_version", 3.0), T0);
    State s = replay(v3, new ProxyModelObserved(null, 2, "proxy-2", null, T0));
    assertEquals(3, s.proxyModelVersion());
    assertEquals("proxy-2", s.pendingProxyCandidate().version());
    s = replay(v3);
    State other = CoordinatorEventHandler.applyEvent(s, new CandidateHandedOver(null, "proxy-9", T0));
    assertEquals(v3, other.pendingProxyCandidate());
    State handed = CoordinatorEventHandler.applyEvent(s, new CandidateHandedOver(null, "proxy-3", T0));
    assertNull(handed.pendingProxyCandidate());
    assertEquals(3, handed.proxyModelVersion());

    // A restart starts the count again, a pending candidate of the first run keeps waiting; within
    // the new run, versions only grow.
    State restarted = replay(v3, new CoordinatorEvents.ProxyRestarted(1, 0, T0));
    assertEquals(0, restarted.proxyModelVersion());
    assertEquals(1, restarted.proxyRestarts());
    assertEquals(v3, restarted.pendingProxyCandidate());
    restarted = replay(v3, new CoordinatorEvents.ProxyRestarted(1, 0, T0),
        new ProxyModelObserved(null, 2, "proxy-r1-2", null, T0, 1), new ProxyModelObserved(null, 1, "proxy-r1-1", null, T0, 1));
    assertEquals(2, restarted.proxyModelVersion());
    assertEquals(1, restarted.proxyRestarts());
    assertEquals(null, new ProxyModelObserved(null, 1, "proxy-1", null, T0, 0).restarts(), "0 is written as before: absent");
  }

  @Test
  void aProxyCandidateBecomesItsCommitJobsCandidateInTheViewAndLineage() {
    ProxyModelObserved seen = new ProxyModelObserved(JOB, 1, "proxy-1", Map.of("model_version", 1.0), T0);
    State s = replay(requested(JOB, Backend.TRINITY_PROXY), new JobSubmitting(JOB, 1, T0),
        new JobSucceeded(JOB, null, null, T0), seen, new CandidateHandedOver(JOB, "proxy-1", T0));
    Job j = job(s, JOB);
    assertEquals("proxy-1", j.proxyCandidate(), "the job names the model it led to");
    assertNull(j.candidateVersion(), "journals written before replay to the state they had");
    assertEquals(3, j.history().size(), "so does the history");
    assertEquals(0, s.candidatesProduced(), "proxy versions do not use the v<n> names");
    assertEquals(new CoordinatorReplies.OutputModelView(null, Map.of(), "proxy-1"),
        TrainingCoordinator.jobView("a", j).outputModel());

    State later = replay(requested(JOB, Backend.TRINITY_PROXY), new JobSucceeded(JOB, null, null, T0), seen,
        new CandidateHandedOver(JOB, "proxy-1", T0), new ProxyModelObserved(JOB, 3, "proxy-3", null, T0),
        new CandidateHandedOver(JOB, "proxy-3", T0));
    assertEquals("proxy-3", job(later, JOB).proxyCandidate(), "the newest version the job led to");
  }

  @Test
  void theJobViewShowsTheJobAsDesignSection71Says() {
    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 2, "abc", List.of("s1"), List.of(), "sft-messages",
        3, Map.of("pii", 1));
    State s = replay(requested(JOB, Backend.RAY_JOBS, "s1"), new DatasetExported(JOB, m, T0),
        new JobSubmitted(JOB, "raysubmit_1", T0), new JobSucceeded(JOB, MODEL, "v1", T0));
    CoordinatorReplies.JobView v = TrainingCoordinator.jobView("a", job(s, JOB));
    assertEquals(JOB, v.jobId());
    assertEquals("a", v.agentId());
    assertEquals("manual", v.trigger());
    assertEquals(new CoordinatorReplies.DatasetView(2, "abc", "/d/x.jsonl", Map.of("pii", 1), null), v.dataset());
    assertEquals(new CoordinatorReplies.BackendView("ray-jobs", "raysubmit_1"), v.backend());
    assertEquals(new CoordinatorReplies.OutputModelView("s3://ckpt/1", Map.of("loss", 0.1), "v1"), v.outputModel());
    CoordinatorReplies.JobView fresh = TrainingCoordinator.jobView("a", job(replay(requested(JOB, Backend.TRINITY_PROXY)), JOB));
    assertNull(fresh.dataset());
    assertNull(fresh.outputModel());
    assertEquals(new CoordinatorReplies.BackendView("trinity-proxy", null), fresh.backend());
  }
}
