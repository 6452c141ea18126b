package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorProtocol.CancelJob;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorProtocol.GetJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.Trigger;
import io.otl.core.coordinator.CoordinatorReplies.CancelAccepted;
import io.otl.core.coordinator.CoordinatorReplies.CancelReply;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorReplies.JobView;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorReplies.TriggerAccepted;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import io.otl.core.training.TrainingBackendException.Kind;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cancelling a job whose submission the backend never acknowledged, while the backend cannot be
 * reached: the stop is sent (an unknown outcome may have started the job), a bounded number of
 * times, and the job then ends CANCELLED with what is unknown, so the agent's next trigger runs.
 */
class CancelUnacknowledgedTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration AWAIT = Duration.ofSeconds(10);
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("CancelUnacknowledgedTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  // ---- the rule ------------------------------------------------------------------------------

  private static State requested(Event... more) {
    List<Event> events = new java.util.ArrayList<>(List.of(
        new JobRequested("job-1-a", TriggerType.MANUAL, "api", Backend.RAY_JOBS, "sft", "base", Map.of(),
            List.of(), T0),
        new JobSubmitting("job-1-a", 1, T0),
        new JobSubmitFailed("job-1-a", 1, "connection refused", T0.plusSeconds(1), T0),
        new JobCancelRequested("job-1-a", "bob", T0)));
    events.addAll(List.of(more));
    return CoordinatorEventHandler.replay(events);
  }

  @Test
  void anUnreachableBackendIsAskedABoundedNumberOfTimesForAJobItNeverAcknowledged() {
    Job job = requested().job("job-1-a").orElseThrow();
    for (int attempt = 1; attempt < CancelRetries.MAX_ATTEMPTS; attempt++) {
      JobLifecycle.StopFailed f = JobLifecycle.stopFailed(job, "connection refused", Kind.UNAVAILABLE, attempt, T0);
      assertTrue(f.retry(), "attempt " + attempt);
      assertNull(f.event());
    }
    JobLifecycle.StopFailed last =
        JobLifecycle.stopFailed(job, "connection refused", Kind.UNAVAILABLE, CancelRetries.MAX_ATTEMPTS, T0);
    assertFalse(last.retry());
    JobCancelled cancelled = assertInstanceOf(JobCancelled.class, last.event());
    assertTrue(cancelled.unconfirmed().contains("connection refused"), cancelled.unconfirmed());
    assertTrue(cancelled.unconfirmed().contains("may still run"), cancelled.unconfirmed());
    // A failure that is not the backend's (kind unknown) counts the same.
    assertInstanceOf(JobCancelled.class,
        JobLifecycle.stopFailed(job, "boom", null, CancelRetries.MAX_ATTEMPTS, T0).event());
    // A backend that does not know the job, or refuses the stop, ends it at once, confirmed.
    assertNull(assertInstanceOf(JobCancelled.class,
        JobLifecycle.stopFailed(job, "404", Kind.NOT_FOUND, 1, T0).event()).unconfirmed());
    assertEquals("cancelled; the backend refused the stop: 400", assertInstanceOf(JobCancelled.class,
        JobLifecycle.stopFailed(job, "400", Kind.REJECTED, 1, T0).event()).detail());
  }

  @Test
  void aSubmittedJobIsNotReleasedWhileItsBackendIsUnreachable() {
    Job job = requested(new JobSubmitted("job-1-a", "raysubmit_1", T0)).job("job-1-a").orElseThrow();
    JobLifecycle.StopFailed f = JobLifecycle.stopFailed(job, "connection refused", Kind.UNAVAILABLE, 100, T0);
    assertTrue(f.retry());
    assertNull(f.event());
    JobLifecycle.StopFailed refused = JobLifecycle.stopFailed(job, "400", Kind.REJECTED, 1, T0);
    assertFalse(refused.retry());
    assertNull(refused.event(), "polling records how it ended");
  }

  @Test
  void anUnconfirmedCancellationEndsTheJobWithWhatIsUnknownAsItsError() {
    State s = requested(new JobCancelled("job-1-a", "cancelled without the backend's confirmation", T0,
        "a job may still run"));
    Job job = s.job("job-1-a").orElseThrow();
    assertEquals(JobStatus.CANCELLED, job.status());
    assertEquals("a job may still run", job.lastError());
    assertNull(s.activeJobId());
    JobView view = TrainingCoordinator.jobView("a", job);
    assertEquals("a job may still run", view.error());
    assertEquals("cancelled without the backend's confirmation", view.history().get(view.history().size() - 1).detail());
    // A confirmed cancellation leaves the error as it was (journals written before the field).
    Job confirmed = requested(new JobCancelled("job-1-a", "stopped on the backend", T0)).job("job-1-a").orElseThrow();
    assertEquals("connection refused", confirmed.lastError());
  }

  // ---- through the entity --------------------------------------------------------------------

  private final ManualClock clock = new ManualClock(Instant.parse("2025-03-01T01:00:00Z"));
  private final Fakes.Exporter exporter = new Fakes.Exporter();
  private final Fakes.Backend backend = new Fakes.Backend();
  private final Fakes.Sink sink = new Fakes.Sink();
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  private void startEntity() {
    TrainingPolicy p = TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "training-runner { poll-interval = 1h, trigger { type = manual }\n"
                + " submit-retry { min-backoff = 20ms, max-backoff = 40ms } }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
    String agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-x";
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        TrainingCoordinator.create(agentId, p, TrainingCoordinator.Ports.batch(exporter, backend, sink), clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    kit.<CoordinatorView>runCommand(GetStatus::new);
  }

  private JobView job(String jobId) {
    return assertInstanceOf(JobView.class, kit.<JobReply>runCommand(r -> new GetJob(jobId, r)).reply());
  }

  private JobView awaitJob(String jobId, Predicate<JobView> condition) {
    return testKit.createTestProbe().awaitAssert(AWAIT, () -> {
      JobView v = job(jobId);
      assertTrue(condition.test(v), () -> "job not as expected yet: " + v);
      return v;
    });
  }

  private TriggerReply trigger() {
    return kit.<TriggerReply>runCommand(r -> new Trigger("alice", r)).reply();
  }

  private void offer(String sessionId) {
    kit.<TrajectoryAck>runCommand(r -> new TrajectoryAvailable(sessionId, "v0", 0.5, 0.9,
        Instant.parse("2025-03-01T00:00:00Z"), false, List.of(), r));
  }

  private void submissionsRefused() {
    for (int i = 0; i < 100; i++) {
      backend.submit.then(Fakes.failWith(new io.otl.core.training.TrainingBackendException(
          Kind.UNAVAILABLE, 0, "POST /api/jobs/ failed: ConnectException: Connection refused", null)));
    }
  }

  @Test
  void cancellingAJobTheUnreachableBackendNeverAcknowledgedEndsAndTheNextTriggerRuns() {
    startEntity();
    submissionsRefused();
    for (int i = 0; i < 100; i++) {
      backend.cancel.then(Fakes.failWith(Fakes.unavailable()));
    }
    offer("s1");
    String jobId = assertInstanceOf(TriggerAccepted.class, trigger()).jobId();
    awaitJob(jobId, v -> v.history().stream().anyMatch(h -> h.detail().contains("Connection refused")));
    CancelAccepted accepted = assertInstanceOf(CancelAccepted.class,
        kit.<CancelReply>runCommand(r -> new CancelJob(jobId, "bob", r)).reply());
    assertEquals(JobStatus.REQUESTED, accepted.status(), "the stop is still to be sent");

    JobView v = awaitJob(jobId, j -> j.status() == JobStatus.CANCELLED);
    assertEquals(CancelRetries.MAX_ATTEMPTS, backend.cancels.size(), "the stop was sent, but not forever");
    assertTrue(backend.cancels.stream().allMatch(jobId::equals));
    assertTrue(v.error().startsWith("cancelled without the backend's confirmation"), v.error());
    assertTrue(v.error().contains("check or stop submission id " + jobId), v.error());

    offer("s2");
    TriggerReply next = trigger();
    String second = assertInstanceOf(TriggerAccepted.class, next, () -> "refused: " + next).jobId();
    assertFalse(second.equals(jobId));
    // Still CANCELLED after a restart: the unconfirmed cancellation is recorded, not remembered.
    kit.restart();
    JobView replayed = job(jobId);
    assertEquals(JobStatus.CANCELLED, replayed.status());
    assertEquals(v.error(), replayed.error());
  }

  @Test
  void aRestartWhileTheStopIsPendingSendsItAgain() {
    startEntity();
    submissionsRefused();
    CompletableFuture<Void> held = new CompletableFuture<>();
    backend.cancel.then(Fakes.held(held)); // the node dies during the first stop; the next one is taken
    offer("s1");
    String jobId = assertInstanceOf(TriggerAccepted.class, trigger()).jobId();
    awaitJob(jobId, v -> v.history().stream().anyMatch(h -> h.detail().contains("Connection refused")));
    kit.<CancelReply>runCommand(r -> new CancelJob(jobId, "bob", r));
    testKit.createTestProbe().awaitAssert(AWAIT, () -> {
      assertEquals(1, backend.cancels.size());
      return null;
    });
    kit.restart();
    JobView v = awaitJob(jobId, j -> j.status() == JobStatus.CANCELLED);
    assertEquals(2, backend.cancels.size(), "the stop was sent again after the restart");
    assertEquals("stopped on the backend", v.history().get(v.history().size() - 1).detail());
    assertFalse(v.error().startsWith("cancelled without"), "the backend confirmed it this time: " + v.error());
  }
}
