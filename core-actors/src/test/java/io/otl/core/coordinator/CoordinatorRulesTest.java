package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingBackendException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The coordinator's pure rules on their own (the entity tests cover them through commands). */
class CoordinatorRulesTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static TrainingPolicy policy() {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString("training-runner { trigger.min-samples = 40 }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private static BackendJobStatus status(BackendJobStatus.State state, String message, OutputModel model) {
    return new BackendJobStatus(state, message, model);
  }

  /** A submitted ray-jobs job, made by the event handler as the entity makes it. */
  private static Job submittedJob() {
    State s = CoordinatorEventHandler.replay(List.of(
        new JobRequested("job-1-a", TriggerType.MANUAL, "api", Backend.RAY_JOBS, "sft", "base", Map.of(),
            List.of(), T0),
        new JobSubmitted("job-1-a", "raysubmit_1", T0)));
    return s.job("job-1-a").orElseThrow();
  }

  @Test
  void aPollMapsTheBackendStateToAtMostOneEvent() {
    Job job = submittedJob();
    assertTrue(JobLifecycle.onBackend(job));

    JobLifecycle.Polled running = JobLifecycle.polled(job, status(BackendJobStatus.State.RUNNING, "", null), 0, T0);
    JobStatusChanged changed = assertInstanceOf(JobStatusChanged.class, running.event());
    assertEquals(JobStatus.RUNNING, changed.status());
    assertEquals("running on the backend", changed.message());
    assertTrue(running.pollAgain());
    assertFalse(running.ended());

    OutputModel model = new OutputModel("s3://ckpt/1", Map.of("loss", 0.1));
    JobLifecycle.Polled done = JobLifecycle.polled(job, status(BackendJobStatus.State.SUCCEEDED, "", model), 2, T0);
    JobSucceeded succeeded = assertInstanceOf(JobSucceeded.class, done.event());
    assertEquals("v3", succeeded.candidateVersion());
    assertTrue(done.ended());
    assertFalse(done.pollAgain());

    JobLifecycle.Polled noModel = JobLifecycle.polled(job, status(BackendJobStatus.State.SUCCEEDED, "", null), 0, T0);
    assertEquals("the backend reported SUCCEEDED without an output model",
        assertInstanceOf(JobFailed.class, noModel.event()).error());

    JobLifecycle.Polled stopped = JobLifecycle.polled(job, status(BackendJobStatus.State.STOPPED, "oom", null), 0, T0);
    assertEquals("stopped on the backend without a cancel request here: oom",
        assertInstanceOf(JobCancelled.class, stopped.event()).detail());
  }

  @Test
  void aFailedPollFailsTheJobOnlyWhenTheBackendNoLongerKnowsIt() {
    Job job = submittedJob();
    JobLifecycle.Polled gone = JobLifecycle.pollFailed(job, "404", TrainingBackendException.Kind.NOT_FOUND, T0);
    assertEquals("the backend no longer knows the job: 404", assertInstanceOf(JobFailed.class, gone.event()).error());
    assertTrue(gone.ended());

    JobLifecycle.Polled down = JobLifecycle.pollFailed(job, "timeout", TrainingBackendException.Kind.UNAVAILABLE, T0);
    assertNull(down.event());
    assertTrue(down.pollAgain());
    assertNull(JobLifecycle.pollFailed(job, "boom", null, T0).event());
  }

  @Test
  void thresholdAndReArmPoint() {
    TrainingPolicy policy = policy();
    assertEquals(54, Preflight.rearmAt(50, policy, 0)); // a tenth of min-samples 40
    assertFalse(Preflight.thresholdDue(State.EMPTY, policy));
    assertTrue(Preflight.check(State.EMPTY, TriggerType.MANUAL, policy).get(0).startsWith("not enough samples"));
  }

  @Test
  void scheduleTimerDelaysAreClamped() {
    assertEquals(ScheduleSlots.MAX_TIMER_DELAY, ScheduleSlots.timerDelay(T0, T0.plus(Duration.ofDays(3))));
    assertEquals(Duration.ofMillis(1), ScheduleSlots.timerDelay(T0, T0.minusSeconds(5)));
    assertEquals(Duration.ofMinutes(5), ScheduleSlots.timerDelay(T0, T0.plus(Duration.ofMinutes(5))));
  }

  @Test
  void aPortThatThrowsFailsItsStageAndItsKindIsRead() {
    IllegalStateException thrown = new IllegalStateException("no connection");
    Throwable failure = PortCalls.call(() -> {
      throw thrown;
    }).toCompletableFuture().handle((ok, error) -> error).join();
    assertSame(thrown, PortCalls.unwrap(failure));
    assertEquals("no connection", PortCalls.describe(failure));
    TrainingBackendException refused =
        new TrainingBackendException(TrainingBackendException.Kind.NOT_FOUND, 404, "gone", null);
    assertEquals(TrainingBackendException.Kind.NOT_FOUND, PortCalls.kindOf(new CompletionException(refused)));
    assertNull(PortCalls.kindOf(thrown));
    assertFalse(PortCalls.isRetryable(new IllegalArgumentException("bad spec")));
  }

  @Test
  void stepKeysAreValues() {
    assertEquals(StepKey.submit("job-1-a", 2), StepKey.submit("job-1-a", 2));
    assertFalse(StepKey.submit("job-1-a", 2).equals(StepKey.submit("job-1-a", 3)));
    assertEquals(StepKey.of(StepKey.Step.POLL), StepKey.of(StepKey.Step.POLL));
  }
}
