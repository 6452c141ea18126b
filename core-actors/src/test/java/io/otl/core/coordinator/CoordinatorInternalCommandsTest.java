package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorProtocol.CancelFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ExportFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ForwardRetryTick;
import io.otl.core.coordinator.CoordinatorProtocol.HandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.PollTick;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverRetry;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsPolled;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsTick;
import io.otl.core.coordinator.CoordinatorProtocol.Recovered;
import io.otl.core.coordinator.CoordinatorProtocol.RetryStep;
import io.otl.core.coordinator.CoordinatorProtocol.RewardForwardFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ScheduleTick;
import io.otl.core.coordinator.CoordinatorProtocol.StatusPolled;
import io.otl.core.coordinator.CoordinatorProtocol.SubmitFinished;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.ProxyMetrics;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The entity's internal commands reach their handlers ({@link JobSteps}, {@link ProxyLoop},
 * {@link ScheduleTrigger}) and what those decide is persisted; and what a recovered entity does
 * first (package-info "Scheduled": a slot missed while no node ran fires once; "Jobs": the active
 * job resumes).
 */
class CoordinatorInternalCommandsTest {
  static final String JOB = "job-1-a";

  @Test
  void theJobStepsResultsArePersisted() {
    StepsHarness h = new StepsHarness("");
    State requested = ExportAndSubmitStepsTest.state();
    DatasetManifest m = ExportAndSubmitStepsTest.manifest(2, List.of());
    Handled exported = Handled.handle(h.coordinator, requested, new ExportFinished(JOB, m, null));
    assertEquals(List.of(new DatasetExported(JOB, m, NOW), new JobSubmitting(JOB, 1, NOW)), exported.events());
    assertEquals(1, h.backend.submissions.size(), "submitted once the intent is stored");

    Handled failed = Handled.handle(h.coordinator, exported.state(), new SubmitFinished(JOB, 1, null, "503", true));
    assertEquals(JobSubmitFailed.class, failed.events().get(0).getClass());
    Handled retried = Handled.handle(h.coordinator, failed.state(), new RetryStep(JOB));
    assertEquals(List.of(new JobSubmitting(JOB, 2, NOW)), retried.events());
    Handled submitted = Handled.handle(h.coordinator, retried.state(), new SubmitFinished(JOB, 2, "r-2", null, false));
    assertEquals(List.of(new JobSubmitted(JOB, "r-2", NOW)), submitted.events());

    h.backend.statuses.put(JOB, new BackendJobStatus(BackendJobStatus.State.RUNNING, "", null));
    assertEquals(List.of(), Handled.handle(h.coordinator, submitted.state(), PollTick.INSTANCE).events());
    assertEquals(List.of(JOB), h.backend.polls);
    Handled done = Handled.handle(h.coordinator, submitted.state(), new StatusPolled(JOB,
        new BackendJobStatus(BackendJobStatus.State.SUCCEEDED, "", JobEventsTest.MODEL), null, null));
    assertEquals(List.of(new JobStatusChanged(JOB, JobStatus.RUNNING,
            "ran on the backend between two polls: it had succeeded when next polled", NOW),
        new JobSucceeded(JOB, JobEventsTest.MODEL, "v1", NOW)), done.events());
    assertEquals(1, h.sink.calls.size(), "handed over once the success is stored");
    assertEquals(1, Handled.handle(h.coordinator, done.state(), new HandOverFinished(JOB, "v1", "v1", null))
        .events().size());
  }

  @Test
  void aStopOnTheBackendIsPersisted() {
    StepsHarness h = new StepsHarness("");
    State s = ExportAndSubmitStepsTest.state(new JobSubmitting(JOB, 1, NOW), new JobCancelRequested(JOB, null, NOW));
    assertEquals(List.of(new JobCancelled(JOB, "stopped on the backend", NOW)),
        Handled.handle(h.coordinator, s, new CancelFinished(JOB, null, null)).events());
  }

  @Test
  void theProxyLoopsResultsArePersisted() {
    StepsHarness h = new StepsHarness(ProxyLoopStepsTest.PROXY);
    State s = ProxyLoopStepsTest.pool("s1");
    assertEquals(List.of(new RewardForwarded("s1", NOW)),
        Handled.handle(h.coordinator, s, new RewardForwardFinished("s1", null)).events());
    Handled.handle(h.coordinator, s, ForwardRetryTick.INSTANCE);
    assertEquals(1, h.online.forwards.size(), "the pending reward is forwarded again");

    h.online.metrics = new ProxyMetrics(Map.of(0, 1), 0, 0, 0);
    Handled.handle(h.coordinator, s, ProxyMetricsTick.INSTANCE);
    Handled observed = Handled.handle(h.coordinator, s, new ProxyMetricsPolled(h.online.metrics, null));
    assertEquals(ProxyModelObserved.class, observed.events().get(0).getClass());
    assertEquals(1, h.sink.calls.size());
    Handled.handle(h.coordinator, observed.state(), ProxyHandOverRetry.INSTANCE);
    assertEquals(1, Handled.handle(h.coordinator, observed.state(),
        new ProxyHandOverFinished("proxy-1", "proxy-1", null)).events().size());
  }

  @Test
  void aScheduleTickFiresTheDueSlot() {
    StepsHarness h = new StepsHarness(ScheduleTriggerStepsTest.SCHEDULED);
    State s = ScheduleTriggerStepsTest.armed(NOW.minusSeconds(1800), 1);
    Handled fired = Handled.handle(h.coordinator, s, ScheduleTick.INSTANCE);
    assertEquals(new ScheduledSlotFired(NOW, false, JOB, NOW), fired.events().get(0));
    assertEquals("schedule", ((CoordinatorEvents.JobRequested) fired.events().get(1)).requestedBy());
  }

  @Test
  void aRecoveredEntityArmsItsScheduleHandlesMissedSlotsAndResumesItsJob() {
    StepsHarness h = new StepsHarness(ScheduleTriggerStepsTest.SCHEDULED);
    Handled first = Handled.handle(h.coordinator, State.EMPTY, Recovered.INSTANCE);
    assertEquals(List.of(new ScheduleArmed(ScheduleTriggerStepsTest.HOURLY, "UTC", NOW, NOW)), first.events());

    State missed = ScheduleTriggerStepsTest.armed(NOW.minusSeconds(2 * 3600 + 60), 1);
    Handled late = Handled.handle(h.coordinator, missed, Recovered.INSTANCE);
    assertEquals(new ScheduledSlotFired(NOW, true, JOB, NOW), late.events().get(0));

    StepsHarness batch = new StepsHarness("");
    Handled resumed = Handled.handle(batch.coordinator, ExportAndSubmitStepsTest.state(), Recovered.INSTANCE);
    assertTrue(resumed.events().isEmpty());
    assertEquals(1, batch.exporter.requests.size(), "the requested job's export is sent again");

    StepsHarness proxy = new StepsHarness(ProxyLoopStepsTest.PROXY);
    Handled.handle(proxy.coordinator, ProxyLoopStepsTest.pool("s1"), Recovered.INSTANCE);
    assertEquals(1, proxy.online.forwards.size(), "a reward not yet forwarded is forwarded again");
  }
}
