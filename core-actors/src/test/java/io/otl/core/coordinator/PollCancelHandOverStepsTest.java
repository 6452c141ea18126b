package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorProtocol.CancelFinished;
import io.otl.core.coordinator.CoordinatorProtocol.HandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.StatusPolled;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingBackendException.Kind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link JobSteps} once the backend has the job: polling (package-info "Jobs"), the stop on the
 * backend ("Cancel": a submitted job is asked until the backend answers, an unacknowledged one
 * {@link CancelRetries#MAX_ATTEMPTS} times) and the hand-over of the trained model ("Candidate
 * names").
 */
class PollCancelHandOverStepsTest {
  static final String JOB = JobEventsTest.JOB;
  static final OutputModel MODEL = JobEventsTest.MODEL;

  static State submitted(Event... more) {
    DatasetManifest m = ExportAndSubmitStepsTest.manifest(2, List.of());
    State s = ExportAndSubmitStepsTest.state(new DatasetExported(JOB, m, NOW), new JobSubmitting(JOB, 1, NOW),
        new JobSubmitted(JOB, "raysubmit_1", NOW));
    for (Event e : more) {
      s = CoordinatorEventHandler.applyEvent(s, e);
    }
    return s;
  }

  static BackendJobStatus status(BackendJobStatus.State st, OutputModel model) {
    return new BackendJobStatus(st, "", model);
  }

  @Test
  void aJobWhoseCancelWasRequestedAndThatRayForgotIsCancelled() {
    // Trial t76: a stop queued on a job PENDING for a GPU, then the Ray head restarted and answered 404.
    StepsHarness h = new StepsHarness("");
    Plan<State, Event> p = h.steps.onStatusPolled(submitted(new JobCancelRequested(JOB, "bob", NOW)),
        new StatusPolled(JOB, null, "Job job-1-a does not exist", Kind.NOT_FOUND));
    assertEquals(List.of(new JobCancelled(JOB, "cancelled (unknown to the backend): Job job-1-a does not exist", NOW)),
        p.events());
    assertEquals(List.of(new JobFailed(JOB, "the backend no longer knows the job: Job job-1-a does not exist", NOW)),
        h.steps.onStatusPolled(submitted(), new StatusPolled(JOB, null, "Job job-1-a does not exist", Kind.NOT_FOUND))
            .events(), "without a cancel request it failed");
  }

  @Test
  void aJobThatRanBetweenTwoPollsIsRunningNoLaterThanItSucceeded() {
    // Trial t76 (a real Ray job shorter than poll-interval): the RUNNING entry was stamped after the
    // SUCCEEDED one it precedes in the history, as each read the clock anew.
    StepsHarness h = new StepsHarness("");
    h.clock.tickOnEachRead(java.time.Duration.ofMillis(1));
    Plan<State, Event> p = persisted(h.steps.onStatusPolled(submitted(),
        new StatusPolled(JOB, status(BackendJobStatus.State.SUCCEEDED, MODEL), null, null)));
    JobStatusChanged running = (JobStatusChanged) p.events().get(0);
    JobSucceeded succeeded = (JobSucceeded) p.events().get(1);
    assertFalse(running.at().isAfter(succeeded.at()), p.events().toString());
  }

  @Test
  void aSucceededJobNamesItsCandidateAndHandsItOver() {
    StepsHarness h = new StepsHarness("");
    State s = submitted();
    s = s.withCounters(s.nextJobSeq(), 2, null); // two earlier jobs produced v1 and v2
    Plan<State, Event> p = persisted(h.steps.onStatusPolled(s,
        new StatusPolled(JOB, status(BackendJobStatus.State.SUCCEEDED, MODEL), null, null)));
    assertEquals(List.of(new JobStatusChanged(JOB, JobStatus.RUNNING,
            "ran on the backend between two polls: it had succeeded when next polled", NOW),
        new JobSucceeded(JOB, MODEL, "v3", NOW)), p.events(),
        "a job that ran between two polls still goes through RUNNING (design §3.2's lifecycle)");
    assertEquals(1, h.thresholdLooks);
    assertEquals(List.of(new Fakes.Registration("a", "v3", "s3://ckpt/1", "s3://ckpt/1", JOB, Map.of("loss", 0.1))),
        h.sink.calls);
    assertEquals(List.of(new HandOverFinished(JOB, "v3", "v3", null)), h.piped());
    assertEquals(List.of(), h.timers(), "an ended job is not polled again");
  }

  @Test
  void aCandidateIsHandedOverWithTheVersionItsJobContinued() {
    StepsHarness h = new StepsHarness("");
    DatasetLineage lineage = new DatasetLineage("stable", "v2", "s3://ckpt/v2", "from v2", 0, null, null, 0, null, null);
    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 2, "sha", List.of("s1"), List.of(), "sft-messages", 2,
        Map.of(), lineage);
    State s = ExportAndSubmitStepsTest.state(new DatasetExported(JOB, m, NOW), new JobSubmitting(JOB, 1, NOW),
        new JobSubmitted(JOB, "raysubmit_1", NOW));
    persisted(h.steps.onStatusPolled(s, new StatusPolled(JOB, status(BackendJobStatus.State.SUCCEEDED, MODEL), null, null)));
    assertEquals(Map.of("v1", "v2"), h.sink.trainedFrom, "ModelVersion holds it if v2 was rolled back meanwhile");

    StepsHarness fromBase = new StepsHarness("");
    persisted(fromBase.steps.onStatusPolled(submitted(),
        new StatusPolled(JOB, status(BackendJobStatus.State.SUCCEEDED, MODEL), null, null)));
    assertEquals(1, fromBase.sink.calls.size());
    assertEquals(Map.of(), fromBase.sink.trainedFrom, "a job from the base model continues no version");
  }

  @Test
  void aJobSeenRunningSucceedsWithoutASecondRunningLine() {
    StepsHarness h = new StepsHarness("");
    State running = submitted(new JobStatusChanged(JOB, JobStatus.RUNNING, "running on the backend", NOW));
    Plan<State, Event> p = persisted(h.steps.onStatusPolled(running,
        new StatusPolled(JOB, status(BackendJobStatus.State.SUCCEEDED, MODEL), null, null)));
    assertEquals(List.of(new JobSucceeded(JOB, MODEL, "v1", NOW)), p.events());
  }

  @Test
  void aRunningJobIsPolledAgainAtThePollInterval() {
    StepsHarness h = new StepsHarness("poll-interval = 3s");
    Plan<State, Event> p = persisted(h.steps.onStatusPolled(submitted(),
        new StatusPolled(JOB, status(BackendJobStatus.State.RUNNING, null), null, null)));
    assertEquals(List.of(new JobStatusChanged(JOB, JobStatus.RUNNING, "running on the backend", NOW)), p.events());
    assertEquals(List.of("poll after PT3S: PollTick"), h.timers());
    assertEquals(0, h.thresholdLooks);

    Plan<State, Event> down = persisted(h.steps.onStatusPolled(submitted(), new StatusPolled(JOB, null, "timeout",
        Kind.UNAVAILABLE)));
    assertTrue(down.isEmpty());
    assertEquals(List.of("poll after PT3S: PollTick"), h.timers(), "a passing failure polls again");

    Plan<State, Event> gone = persisted(h.steps.onStatusPolled(submitted(), new StatusPolled(JOB, null, "404",
        Kind.NOT_FOUND)));
    assertEquals(List.of(new JobFailed(JOB, "the backend no longer knows the job: 404", NOW)), gone.events());
    assertEquals(List.of(), h.timers());
    assertTrue(h.steps.onStatusPolled(ExportAndSubmitStepsTest.state(), new StatusPolled(JOB,
        status(BackendJobStatus.State.FAILED, null), null, null)).isEmpty(), "a job not on the backend is not polled");
  }

  @Test
  void aPollTickAsksTheBackendOnceWhileAPollIsInFlight() {
    StepsHarness h = new StepsHarness("");
    h.backend.statuses.put(JOB, status(BackendJobStatus.State.PENDING, null));
    h.steps.onPollTick(ExportAndSubmitStepsTest.state());
    assertEquals(List.of(), h.backend.polls, "no job on the backend: nothing to poll");
    assertTrue(h.steps.onPollTick(submitted()).isEmpty());
    h.steps.onPollTick(submitted());
    assertEquals(List.of(JOB), h.backend.polls);
    assertEquals(List.of(new StatusPolled(JOB, status(BackendJobStatus.State.PENDING, null), null, null)), h.piped());
    h.steps.onStatusPolled(submitted(), new StatusPolled(JOB, status(BackendJobStatus.State.PENDING, null), null, null));
    h.steps.onPollTick(submitted());
    assertEquals(2, h.backend.polls.size(), "the answer ends the poll in flight");
  }

  @Test
  void aConfirmedStopCancelsTheJob() {
    StepsHarness h = new StepsHarness("");
    State s = submitted(new JobCancelRequested(JOB, "bob", NOW));
    h.steps.cancelOnBackend(s.job(JOB).orElseThrow());
    assertEquals(List.of(JOB), h.backend.cancels);
    assertEquals(List.of(new CancelFinished(JOB, null, null)), h.piped());
    // Ray's {"stopped": true} only queues the stop (trial t76: a job PENDING for a GPU stayed PENDING):
    // nothing is recorded yet, the job is polled at once and ends CANCELLED when Ray reports STOPPED.
    Plan<State, Event> p = h.steps.onCancelFinished(s, new CancelFinished(JOB, null, null));
    assertEquals(List.of(), p.events());
    assertEquals(List.of("poll after PT0.001S: PollTick"), h.timers());
    assertEquals(0, h.thresholdLooks);
    // A job the backend never acknowledged is not polled: its confirmed stop cancels it.
    State unacked = ExportAndSubmitStepsTest.state(new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, "bob", NOW));
    assertEquals(List.of(new JobCancelled(JOB, "stopped on the backend", NOW)),
        h.steps.onCancelFinished(unacked, new CancelFinished(JOB, null, null)).events());
    assertEquals(1, h.thresholdLooks);
    assertTrue(h.steps.onCancelFinished(submitted(), new CancelFinished(JOB, null, null)).isEmpty(),
        "no cancel was requested");
  }

  @Test
  void aSubmittedJobIsAskedToStopUntilTheBackendAnswers() {
    StepsHarness h = new StepsHarness("submit-retry { min-backoff = 1s, max-backoff = 60s }");
    State s = submitted(new JobCancelRequested(JOB, "bob", NOW));
    for (int i = 1; i <= 7; i++) {
      assertTrue(h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE)).isEmpty());
    }
    assertEquals(List.of("PT1S", "PT2S", "PT4S", "PT8S", "PT16S", "PT32S", "PT1M"),
        h.timers().stream().map(t -> t.split(" ")[2].replace(":", "")).toList());
    assertTrue(h.steps.onCancelFinished(s, new CancelFinished(JOB, "busy", Kind.REJECTED)).isEmpty(),
        "a refused stop of a submitted job: polling tells how it ended");
    // At once (Ray's "stopped": false: the run has ended, maybe SUCCEEDED with a model to hand over).
    assertEquals(List.of("poll after PT0.001S: PollTick"), h.timers());
    assertTrue(h.steps.onCancelFinished(s, new CancelFinished(JOB, null, null)).isEmpty(),
        "a confirmed stop of a submitted job: polling records how it ended");
    h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE));
    h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE));
    assertEquals(List.of(new JobCancelled(JOB, "cancelled (unknown to the backend)", NOW)),
        h.steps.onCancelFinished(s, new CancelFinished(JOB, "404", Kind.NOT_FOUND)).events());
    assertEquals(1, h.thresholdLooks);
    h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE));
    assertEquals(List.of("PT0.001S", "PT1S", "PT2S", "PT1S"), h.timers().stream().map(t -> t.split(" ")[2].replace(":", "")).toList(),
        "a confirmed stop, or one the backend no longer needs, resets the back-off");
  }

  @Test
  void anUnacknowledgedSubmissionIsCancelledAfterFiveFailedStops() {
    StepsHarness h = new StepsHarness("");
    State s = ExportAndSubmitStepsTest.state(new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, null, NOW));
    for (int i = 1; i < CancelRetries.MAX_ATTEMPTS; i++) {
      assertTrue(h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE)).isEmpty(), "attempt " + i);
    }
    List<Event> last = h.steps.onCancelFinished(s, new CancelFinished(JOB, "503", Kind.UNAVAILABLE)).events();
    assertEquals(List.of(new JobCancelled(JOB, "cancelled without the backend's confirmation after 5 failed stop attempts",
        NOW, CancelRetries.unconfirmed(JOB, 5, "503"))), last);
    assertEquals(1, h.thresholdLooks);
    assertEquals(List.of(new JobCancelled(JOB, "cancelled; the backend refused the stop: bad", NOW)),
        h.steps.onCancelFinished(s, new CancelFinished(JOB, "bad", Kind.REJECTED)).events());
  }

  /**
   * A cancel while the submission is in flight: the stop reaches the backend before the job does
   * (404), the submission is accepted (JobSubmitted) before that answer is handled. The job runs
   * there, so the 404 cancels nothing here: the stop is sent again (found on a live node: the job
   * was CANCELLED "unknown to the backend" and trained on to SUCCEEDED).
   */
  @Test
  void aStopThatOvertookTheSubmissionIsSentAgainOnceTheBackendHasTheJob() {
    StepsHarness h = new StepsHarness("");
    State unacked = ExportAndSubmitStepsTest.state(new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, "bob", NOW));
    h.backend.cancel.then(Fakes.failWith(new io.otl.core.training.TrainingBackendException(
        Kind.NOT_FOUND, 404, "no such job", null)));
    h.steps.cancelOnBackend(unacked.job(JOB).orElseThrow());
    List<?> first = h.piped();
    assertEquals(1, first.size());
    CancelFinished overtaken = (CancelFinished) first.get(0);
    assertEquals(Kind.NOT_FOUND, overtaken.errorKind());
    assertTrue(overtaken.beforeAcknowledged(), "the stop was sent before the backend acknowledged the job");

    State acked = CoordinatorEventHandler.applyEvent(unacked, new JobSubmitted(JOB, JOB, NOW));
    assertTrue(h.steps.onCancelFinished(acked, overtaken).isEmpty(), "not cancelled: the job runs on the backend");
    assertEquals(List.of(JOB, JOB), h.backend.cancels, "the stop is sent again");
    CancelFinished second = (CancelFinished) h.piped().get(0);
    assertEquals(new CancelFinished(JOB, null, null), second);
    assertTrue(h.steps.onCancelFinished(acked, second).isEmpty(), "the job is polled until Ray reports it stopped");

    assertEquals(List.of(new JobCancelled(JOB, "cancelled (unknown to the backend)", NOW)),
        h.steps.onCancelFinished(unacked, overtaken).events(),
        "a submission still unacknowledged: the backend does not have the job, nothing runs");
    assertEquals(List.of(new JobCancelled(JOB, "cancelled (unknown to the backend)", NOW)),
        h.steps.onCancelFinished(acked, new CancelFinished(JOB, "404", Kind.NOT_FOUND, false)).events(),
        "a stop sent after the acknowledgement: the backend no longer knows the job");
  }

  @Test
  void aProxyCommitCannotBeRecalled() {
    StepsHarness h = new StepsHarness("backend = trinity-proxy");
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.TRINITY_PROXY),
        new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, null, NOW)));
    h.steps.cancelOnBackend(s.job(JOB).orElseThrow());
    assertEquals(List.of(new CancelFinished(JOB, null, null)), h.piped());
    assertEquals(List.of(), h.backend.cancels);
    assertEquals(List.of(new JobCancelled(JOB, "cancelled (a commit already sent cannot be recalled)", NOW)),
        h.steps.onCancelFinished(s, new CancelFinished(JOB, null, null)).events());
  }

  @Test
  void aHandOverIsRecordedUnderTheNameModelVersionHasItUnder() {
    StepsHarness h = new StepsHarness("submit-retry { min-backoff = 1s, max-backoff = 60s }");
    State s = submitted(new JobSucceeded(JOB, MODEL, "v1", NOW));
    assertEquals(List.of(new CandidateHandedOver(JOB, "v2", NOW, "v1")),
        h.steps.onHandOverFinished(s, new HandOverFinished(JOB, "v1", "v2", null)).events());
    assertEquals(List.of(new CandidateHandedOver(JOB, "v1", NOW)),
        h.steps.onHandOverFinished(s, new HandOverFinished(JOB, "v1", "v1", null)).events());
    assertTrue(h.steps.onHandOverFinished(s, new HandOverFinished(JOB, "v1", null, "down")).isEmpty());
    assertTrue(h.steps.onHandOverFinished(s, new HandOverFinished(JOB, "v1", null, "down")).isEmpty());
    assertEquals(List.of("retry-job-1-a after PT1S: RetryStep[jobId=job-1-a]",
        "retry-job-1-a after PT2S: RetryStep[jobId=job-1-a]"), h.timers());
    State handed = CoordinatorEventHandler.applyEvent(s, new CandidateHandedOver(JOB, "v1", NOW));
    assertTrue(h.steps.onHandOverFinished(handed, new HandOverFinished(JOB, "v1", "v1", null)).isEmpty());
    assertTrue(h.steps.onHandOverFinished(s, new HandOverFinished(JOB, "v9", "v9", null)).isEmpty());
    assertTrue(h.steps.onHandOverFinished(State.EMPTY, new HandOverFinished(JOB, "v1", "v1", null)).isEmpty());
  }

  @Test
  void handedOverNamesTheRenameOnlyWhenThereWasOne() {
    assertEquals(new CandidateHandedOver(JOB, "v1", NOW), JobSteps.handedOver(JOB, "v1", null, NOW));
    assertEquals(new CandidateHandedOver(JOB, "v1", NOW), JobSteps.handedOver(JOB, "v1", "v1", NOW));
    assertEquals(new CandidateHandedOver(JOB, "v4", NOW, "v1"), JobSteps.handedOver(JOB, "v1", "v4", NOW));
  }
}
