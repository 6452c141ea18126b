package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.DatasetExportFailed;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorProtocol.ExportFinished;
import io.otl.core.coordinator.CoordinatorProtocol.SubmitFinished;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import io.otl.core.training.TrainingJobSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link JobSteps} from export to submission (package-info "Jobs": intent before effect, export
 * and submission failures retried with capped back-off, an export that outlives its retries or an
 * unusable dataset fails the job, a non-retryable submission fails it).
 */
class ExportAndSubmitStepsTest {
  static final String JOB = JobEventsTest.JOB;
  static final String BACKOFF = "submit-retry { min-backoff = 2s, max-backoff = 30s }";

  static State state(Event... events) {
    List<Event> all = new ArrayList<>(List.of(PoolEventsTest.pooled("s1", 1, 1, NOW), PoolEventsTest.pooled("s2", 1, 1, NOW),
        JobEventsTest.requested(JOB, Backend.RAY_JOBS, "s1", "s2")));
    all.addAll(Arrays.asList(events));
    return CoordinatorEventHandler.replay(all);
  }

  static DatasetManifest manifest(int count, List<String> pii) {
    return new DatasetManifest("/d/job-1-a.jsonl", count, "sha", List.of("s1", "s2"), pii, "sft-messages", 2,
        Map.of("below-sft-min-reward", 2 - count));
  }

  @Test
  void aFailedExportIsRetriedAfterTheBackoff() {
    StepsHarness h = new StepsHarness(BACKOFF);
    Plan<State, Event> p = persisted(h.steps.onExportFinished(state(), new ExportFinished(JOB, null, "disk full")));
    assertEquals(List.of(new DatasetExportFailed(JOB, 1, "disk full", NOW.plusSeconds(2), NOW)), p.events());
    assertEquals(List.of("retry-job-1-a after PT2S: RetryStep[jobId=job-1-a]"), h.timers());

    State third = state(new DatasetExportFailed(JOB, 1, "x", NOW, NOW), new DatasetExportFailed(JOB, 2, "x", NOW, NOW));
    Plan<State, Event> p3 = h.steps.onExportFinished(third, new ExportFinished(JOB, null, "disk full"));
    assertEquals(new DatasetExportFailed(JOB, 3, "disk full", NOW.plusSeconds(8), NOW), p3.events().get(0));
    assertEquals(1, p3.events().size());
  }

  @Test
  void theFifthFailedExportFailsTheJobAndGivesItsTrajectoriesBack() {
    StepsHarness h = new StepsHarness(BACKOFF + ", trigger.min-samples = 20");
    State s = state(new DatasetExportFailed(JOB, 4, "x", NOW, NOW));
    Plan<State, Event> p = persisted(h.steps.onExportFinished(s, new ExportFinished(JOB, null, "disk full")));
    assertEquals(List.of(new DatasetExportFailed(JOB, 5, "disk full", NOW.plusSeconds(30), NOW),
        new PreflightFailed(JOB, List.of("the dataset export failed 5 times; last error: disk full"), true, 4, NOW)),
        p.events()); // re-arm: the 2 returned trajectories + a tenth of min-samples 20
    assertEquals(2, p.state().poolSize());
    assertEquals(List.of(), h.timers(), "no retry after the last attempt");
  }

  @Test
  void anExportResultForAJobThatMovedOnIsIgnored() {
    StepsHarness h = new StepsHarness("");
    ExportFinished ok = new ExportFinished(JOB, manifest(2, List.of()), null);
    assertTrue(h.steps.onExportFinished(State.EMPTY, ok).isEmpty(), "unknown job");
    assertTrue(h.steps.onExportFinished(state(new DatasetExported(JOB, manifest(2, List.of()), NOW)), ok).isEmpty(),
        "already exported");
    assertTrue(h.steps.onExportFinished(state(new JobCancelRequested(JOB, null, NOW)), ok).isEmpty(), "being cancelled");
    assertTrue(h.steps.onExportFinished(state(new JobFailed(JOB, "x", NOW)), ok).isEmpty(), "ended");
  }

  @Test
  void piiInTheExportedFileFailsTheJobAndKeepsItsTrajectories() {
    StepsHarness h = new StepsHarness("");
    DatasetManifest m = manifest(2, List.of("phone", "email"));
    Plan<State, Event> p = h.steps.onExportFinished(state(), new ExportFinished(JOB, m, null));
    assertEquals(List.of(new DatasetExported(JOB, m, NOW), new PreflightFailed(JOB, List.of(
        "the final PII scan found phone, email in the exported dataset /d/job-1-a.jsonl"), false, null, NOW)),
        p.events());
    assertEquals(0, p.state().poolSize());
    assertEquals(1, h.thresholdLooks, "the pool may already hold a new batch");
  }

  @Test
  void anEmptyDatasetFailsThePreflightAndReturnsThePool() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 10");
    DatasetManifest m = manifest(0, List.of());
    Plan<State, Event> p = h.steps.onExportFinished(state(), new ExportFinished(JOB, m, null));
    assertEquals(new PreflightFailed(JOB, List.of("the exported dataset is empty (no sft example could be built from 2 "
        + "trajectories; 2 seen: 2 below-sft-min-reward)"), true, 3, NOW), p.events().get(1));
    assertEquals(2, p.state().poolSize());
  }

  /** A first manual trigger on one session: it is held out, and the reason says what to change (trial t89). */
  @Test
  void aDatasetEmptiedByTheEvalSetSaysWhatToChange() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 10");
    DatasetManifest m = new DatasetManifest("/d/job-1-a.jsonl", 0, "sha", List.of(), List.of(), "sft-messages", 2,
        Map.of("held-out-for-eval", 2));
    Plan<State, Event> p = h.steps.onExportFinished(state(), new ExportFinished(JOB, m, null));
    assertEquals(new PreflightFailed(JOB, List.of("the exported dataset is empty (no sft example could be built from 2 "
        + "trajectories; 2 seen: 2 held-out-for-eval): every trajectory fell into the held-out evaluation set "
        + "(training-runner.eval-fraction); record more sessions and trigger again, or lower eval-fraction (0 holds "
        + "none out)"), true, 3, NOW), p.events().get(1));
    assertEquals(2, p.state().poolSize());
  }

  @Test
  void aCleanDatasetIsSubmittedWithTheJobIdAsSubmissionId() {
    StepsHarness h = new StepsHarness("checkpoint-root-dir = /ckpt");
    DatasetManifest m = manifest(2, List.of());
    Plan<State, Event> p = persisted(h.steps.onExportFinished(state(), new ExportFinished(JOB, m, null)));
    assertEquals(List.of(new DatasetExported(JOB, m, NOW), new JobSubmitting(JOB, 1, NOW)), p.events());
    TrainingJobSpec spec = h.backend.submissions.get(0);
    assertEquals(JOB, spec.jobId());
    assertEquals("base", spec.baseModel());
    assertEquals("/d/job-1-a.jsonl", spec.datasetPath());
    assertEquals("/ckpt", spec.checkpointRootDir());
    assertEquals(Map.of("agentId", "a", "trigger", "manual", "datasetSha256", "sha", "datasetCount", "2"),
        spec.metadata());
    assertEquals(List.of(new SubmitFinished(JOB, 1, "raysubmit_job-1-a", null, false)), h.piped());
  }

  @Test
  void continualTrainingStartsFromTheStableCheckpoint() {
    StepsHarness h = new StepsHarness("");
    DatasetLineage lineage = new DatasetLineage("stable", "v3", "s3://ckpt/v3", "from v3", 0, null, null, 0, null, null);
    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 2, "sha", List.of("s1"), List.of(), "sft-messages", 2,
        Map.of(), lineage);
    persisted(h.steps.onExportFinished(state(), new ExportFinished(JOB, m, null)));
    TrainingJobSpec spec = h.backend.submissions.get(0);
    assertEquals("s3://ckpt/v3", spec.startCheckpoint());
    assertEquals("s3://ckpt/v3", spec.startModel(), "full weights start from the checkpoint");
    assertEquals("base", spec.baseModel(), "kept apart: LoRA jobs train on the base model");
    assertEquals("stable", spec.metadata().get("startFrom"));
  }

  @Test
  void theSubmissionsAnswerSubmitsRetriesOrFailsTheJob() {
    StepsHarness h = new StepsHarness(BACKOFF + ", poll-interval = 7s");
    State sending = state(new DatasetExported(JOB, manifest(2, List.of()), NOW), new JobSubmitting(JOB, 2, NOW));
    assertTrue(h.steps.onSubmitFinished(sending, new SubmitFinished(JOB, 1, "old", null, false)).isEmpty(),
        "an earlier attempt's answer is stale");

    Plan<State, Event> ok = persisted(h.steps.onSubmitFinished(sending, new SubmitFinished(JOB, 2, "raysubmit_1", null, false)));
    assertEquals(List.of(new JobSubmitted(JOB, "raysubmit_1", NOW)), ok.events());
    assertEquals(List.of("poll after PT7S: PollTick"), h.timers());

    Plan<State, Event> retry = persisted(h.steps.onSubmitFinished(sending, new SubmitFinished(JOB, 2, null, "503", true)));
    assertEquals(List.of(new JobSubmitFailed(JOB, 2, "503", NOW.plusSeconds(4), NOW)), retry.events());
    assertEquals(List.of("retry-job-1-a after PT4S: RetryStep[jobId=job-1-a]"), h.timers());
    assertEquals(0, h.thresholdLooks);

    Plan<State, Event> refused = h.steps.onSubmitFinished(sending, new SubmitFinished(JOB, 2, null, "bad spec", false));
    assertEquals(List.of(new JobFailed(JOB, "submission refused by the backend: bad spec", NOW)), refused.events());
    assertEquals(1, h.thresholdLooks, "the job ended: the threshold may fire");
    assertTrue(h.steps.onSubmitFinished(State.EMPTY, new SubmitFinished(JOB, 2, "x", null, false)).isEmpty());
    State submitted = CoordinatorEventHandler.applyEvent(sending, new JobSubmitted(JOB, "r", NOW));
    assertTrue(h.steps.onSubmitFinished(submitted, new SubmitFinished(JOB, 2, "r", null, false)).isEmpty());
  }

  @Test
  void aSubmissionAcceptedAfterItsCancellationIsStoppedAgain() {
    StepsHarness h = new StepsHarness("");
    State cancelled = state(new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, null, NOW),
        new JobCancelled(JOB, "x", NOW));
    assertTrue(h.steps.onSubmitFinished(cancelled, new SubmitFinished(JOB, 1, "raysubmit_1", null, false)).isEmpty());
    assertEquals(List.of(JOB), h.backend.cancels);
    h.steps.onSubmitFinished(cancelled, new SubmitFinished(JOB, 1, null, "503", true));
    assertEquals(1, h.backend.cancels.size(), "a submission that was not accepted has nothing to stop");
  }

  @Test
  void aProxyCommitEndsTheJobWhenTheTrainerTookIt() {
    StepsHarness h = new StepsHarness("backend = trinity-proxy");
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.TRINITY_PROXY),
        new JobSubmitting(JOB, 1, NOW)));
    Plan<State, Event> p = h.steps.onSubmitFinished(s, new SubmitFinished(JOB, 1, "commit", null, false));
    assertEquals(List.of(new JobSucceeded(JOB, null, null, NOW)), p.events());
    assertEquals(1, h.thresholdLooks);
    Plan<State, Event> refused = h.steps.onSubmitFinished(s, new SubmitFinished(JOB, 1, null, "no", false));
    assertEquals(List.of(new JobFailed(JOB, "commit refused by the backend: no", NOW)), refused.events());
  }
}
