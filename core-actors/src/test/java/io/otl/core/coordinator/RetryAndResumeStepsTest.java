package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.DatasetExportFailed;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorProtocol.CancelFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ExportFinished;
import io.otl.core.coordinator.CoordinatorProtocol.HandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.RetryStep;
import io.otl.core.coordinator.CoordinatorProtocol.SubmitFinished;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a job resumes after a retry timer or a restart (package-info "Jobs": intent before effect,
 * so a resumed step repeats an idempotent call; "trinity-proxy": a commit waits until the job's
 * rewards are forwarded).
 */
class RetryAndResumeStepsTest {
  static final String JOB = JobEventsTest.JOB;

  static State requested(Event... more) {
    return ExportAndSubmitStepsTest.state(more);
  }

  static DatasetExported exported() {
    return new DatasetExported(JOB, ExportAndSubmitStepsTest.manifest(2, List.of()), NOW);
  }

  @Test
  void aRetryExportsAJobWithoutDatasetAndSubmitsTheNextAttemptOfOneWithIt() {
    StepsHarness h = new StepsHarness("");
    assertTrue(h.steps.onRetryStep(requested(), new RetryStep(JOB)).isEmpty());
    assertEquals(1, h.exporter.requests.size());
    assertEquals(new ExportRequest(JOB, "a", "sft", List.of("s1", "s2")), h.exporter.requests.get(0));
    assertEquals(ExportFinished.class, h.piped().get(0).getClass());
    h.steps.export(requested().job(JOB).orElseThrow());
    assertEquals(1, h.exporter.requests.size(), "one export in flight per job");

    State failedOnce = requested(exported(), new JobSubmitting(JOB, 1, NOW),
        new JobSubmitFailed(JOB, 1, "503", NOW, NOW));
    Plan<State, Event> p = persisted(h.steps.onRetryStep(failedOnce, new RetryStep(JOB)));
    assertEquals(List.of(new JobSubmitting(JOB, 2, NOW)), p.events());
    assertEquals(List.of(new SubmitFinished(JOB, 2, "raysubmit_job-1-a", null, false)), h.piped());

    State stillSending = requested(exported(), new JobSubmitting(JOB, 3, NOW));
    assertTrue(h.steps.onRetryStep(stillSending, new RetryStep(JOB)).isEmpty(), "the same attempt is re-sent");
    assertEquals(List.of(new SubmitFinished(JOB, 3, "raysubmit_job-1-a", null, false)), h.piped());
  }

  @Test
  void aRetryOfAnEndedOrUnknownJobDoesNothingButAPendingHandOverOrCancel() {
    StepsHarness h = new StepsHarness("");
    assertTrue(h.steps.onRetryStep(State.EMPTY, new RetryStep(JOB)).isEmpty());
    assertTrue(h.steps.onRetryStep(requested(new JobFailed(JOB, "x", NOW)), new RetryStep(JOB)).isEmpty());
    assertTrue(h.steps.onRetryStep(PollCancelHandOverStepsTest.submitted(), new RetryStep(JOB)).isEmpty());
    assertEquals(List.of(), h.piped());

    h.steps.onRetryStep(requested(new JobCancelRequested(JOB, null, NOW)), new RetryStep(JOB));
    assertEquals(List.of(JOB), h.backend.cancels);
    assertEquals(List.of(new CancelFinished(JOB, null, null)), h.piped());

    h.steps.onRetryStep(PollCancelHandOverStepsTest.submitted(new JobSucceeded(JOB, JobEventsTest.MODEL, "v1", NOW)),
        new RetryStep(JOB));
    assertEquals(List.of(new HandOverFinished(JOB, "v1", "v1", null)), h.piped());
  }

  @Test
  void aProxyCommitWaitsUntilTheJobsRewardsAreForwarded() {
    StepsHarness h = new StepsHarness("backend = trinity-proxy");
    TrajectoryPooled withMsgs = PoolEventsTest.pooled("s1", 0.5, 1, NOW, "m1");
    State s = CoordinatorEventHandler.replay(List.of(withMsgs,
        JobEventsTest.requested(JOB, Backend.TRINITY_PROXY, "s1"), new JobSubmitting(JOB, 1, NOW)));
    h.steps.sendSubmission(s, s.job(JOB).orElseThrow());
    assertEquals(List.of(), h.online.commits, "s1's reward is still to be forwarded");
    assertEquals(List.of(new Fakes.Forward(List.of("m1"), 0.5, "s1", 0)), h.online.forwards);
    assertEquals(List.of("commit-wait:job-1-a after PT0.25S: RetryStep[jobId=job-1-a]"), h.timers());

    State forwarded = CoordinatorEventHandler.applyEvent(s, new CoordinatorEvents.RewardForwarded("s1", NOW));
    h.steps.sendSubmission(forwarded, forwarded.job(JOB).orElseThrow());
    assertEquals(List.of(1), h.online.commits);
  }

  @Test
  void aRecoveredJobResumesWhereItsEventsLeftIt() {
    StepsHarness h = new StepsHarness("");
    h.steps.resume(requested(new DatasetExportFailed(JOB, 1, "x", NOW.plusSeconds(42), NOW)));
    assertEquals(List.of("retry-job-1-a after PT42S: RetryStep[jobId=job-1-a]"), h.timers());
    h.steps.resume(requested(new DatasetExportFailed(JOB, 1, "x", NOW.minusSeconds(5), NOW)));
    assertEquals(List.of("retry-job-1-a after PT0.001S: RetryStep[jobId=job-1-a]"), h.timers(), "overdue: at once");
    assertEquals(List.of(), h.exporter.requests);

    h.steps.resume(requested());
    assertEquals(1, h.exporter.requests.size(), "no dataset yet: export again");
    h.piped();

    h.steps.resume(requested(exported()));
    assertEquals(List.of(new RetryStep(JOB)), h.piped(), "exported, not yet submitting: the retry step decides");

    h.steps.resume(requested(exported(), new JobSubmitting(JOB, 1, NOW)));
    assertEquals(List.of(new SubmitFinished(JOB, 1, "raysubmit_job-1-a", null, false)), h.piped(),
        "the same submission id is sent again");

    h.steps.resume(PollCancelHandOverStepsTest.submitted());
    assertEquals(List.of("poll after PT0.001S: PollTick"), h.timers());
    h.steps.resume(PollCancelHandOverStepsTest.submitted(new JobCancelRequested(JOB, null, NOW)));
    assertEquals(List.of(JOB), h.backend.cancels);

    h.steps.resume(PollCancelHandOverStepsTest.submitted(new JobSucceeded(JOB, JobEventsTest.MODEL, "v1", NOW)));
    assertEquals(1, h.sink.calls.size(), "a model not yet handed over is handed over");
  }

  @Test
  void withTrainingDisabledARecoveredRequestedJobWaits() {
    StepsHarness h = new StepsHarness("");
    h.rt.policy = TrainingPolicy.fromConfig(com.typesafe.config.ConfigFactory.parseString("enabled = false")
        .withFallback(com.typesafe.config.ConfigFactory.defaultReference().getConfig("agentscope.training")));
    h.steps.resume(requested());
    assertEquals(List.of(), h.exporter.requests);
    assertEquals(List.of(), h.piped());
    h.steps.resume(requested(new JobCancelRequested(JOB, null, NOW)));
    assertEquals(List.of(JOB), h.backend.cancels, "a cancel is carried out even while training is off");
  }
}
