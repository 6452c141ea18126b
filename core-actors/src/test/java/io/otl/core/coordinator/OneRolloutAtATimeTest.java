package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.Trigger;
import io.otl.core.coordinator.CoordinatorReplies.TriggerAccepted;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One rollout at a time: with a version DEPLOYING/CANARY/RAMP/PAUSED at ModelVersion (the probe),
 * a manual job fails its pre-flight with the reason and the threshold waits without a job; once
 * the rollout is over, the next trajectory starts the threshold job.
 */
class OneRolloutAtATimeTest {
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("OneRolloutAtATimeTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final AtomicReference<Optional<String>> rollout = new AtomicReference<>(Optional.of("v3 is CANARY"));
  private final AtomicReference<RuntimeException> probeFailure = new AtomicReference<>();
  private final AtomicInteger asked = new AtomicInteger();

  private ActorRef<Command> coordinator(String minSamples) {
    return coordinator(minSamples, "");
  }

  /** @param more further training-runner keys, after the trigger (a later key wins) */
  private ActorRef<Command> coordinator(String minSamples, String more) {
    RolloutProbe probe = agentId -> {
      asked.incrementAndGet();
      RuntimeException e = probeFailure.get();
      return e != null ? CompletableFuture.failedFuture(e) : CompletableFuture.completedFuture(rollout.get());
    };
    TrainingCoordinator.Ports ports = TrainingCoordinator.Ports
        .batch(new Fakes.Exporter(), new Fakes.Backend(), new Fakes.Sink()).withRolloutProbe(probe);
    String agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-r";
    return testKit.spawn(TrainingCoordinator.create(agentId,
        TrainingCoordinatorTest.policy("trigger { type = \"threshold\", min-samples = " + minSamples + " }\n" + more),
        ports, new ManualClock(Instant.parse("2025-03-01T01:00:00Z"))));
  }

  private static void offer(ActorRef<Command> c, String sessionId) {
    TestProbe<TrajectoryAck> acks = testKit.createTestProbe();
    c.tell(new TrajectoryAvailable(sessionId, "v0", 1.0, 1.0, Instant.parse("2025-03-01T00:00:00Z"), false,
        List.of(), acks.getRef()));
    acks.receiveMessage(Duration.ofSeconds(10));
  }

  private static CoordinatorView status(ActorRef<Command> c) {
    TestProbe<CoordinatorView> p = testKit.createTestProbe();
    c.tell(new GetStatus(p.getRef()));
    return p.receiveMessage(Duration.ofSeconds(10));
  }

  private static TriggerAccepted trigger(ActorRef<Command> c) {
    TestProbe<TriggerReply> p = testKit.createTestProbe();
    c.tell(new Trigger("alice", p.getRef()));
    return assertInstanceOf(TriggerAccepted.class, p.receiveMessage(Duration.ofSeconds(10)));
  }

  @Test
  void aManualTriggerDuringACanaryIsAConflictNamingTheVersion() {
    ActorRef<Command> c = coordinator("1000");
    offer(c, "s1");
    TestProbe<TriggerReply> p = testKit.createTestProbe();
    c.tell(new Trigger("alice", p.getRef()));
    TrainingCoordinator.Refused refused = assertInstanceOf(TrainingCoordinator.Refused.class,
        p.receiveMessage(Duration.ofSeconds(10)));
    assertEquals(TrainingCoordinator.ErrorCode.CONFLICT, refused.code());
    assertTrue(refused.message().startsWith("a rollout is in progress: v3 is CANARY"), refused.message());
    assertEquals(1, status(c).poolSize(), "no job was recorded; the pool is untouched");

    rollout.set(Optional.empty());
    offer(c, "s2");
    TriggerAccepted accepted = trigger(c);
    assertEquals(List.of(), accepted.preflightFailures());
    assertTrue(accepted.status() != JobStatus.FAILED, accepted.toString());
  }

  @Test
  void aProbeThatDoesNotAnswerStartsNoJob() {
    probeFailure.set(new IllegalStateException("ask timed out"));
    ActorRef<Command> c = coordinator("1000");
    offer(c, "s1");
    TriggerAccepted refused = trigger(c);
    assertEquals(JobStatus.FAILED, refused.status());
    assertTrue(refused.preflightFailures().stream().anyMatch(r -> r.contains("cannot tell") && r.contains("ask timed out")),
        refused.preflightFailures().toString());
  }

  @Test
  void theThresholdWaitsWhileARolloutIsInProgressAndStartsAfterIt() {
    ActorRef<Command> c = coordinator("2");
    offer(c, "s1");
    offer(c, "s2");
    offer(c, "s3");
    // Each status reply comes after the probe's answers queued before it, so no job means "waited".
    TestProbe<Object> wait = testKit.createTestProbe();
    wait.awaitAssert(Duration.ofSeconds(10), () -> {
      assertTrue(asked.get() >= 1, "the threshold asked ModelVersion");
      return null;
    });
    CoordinatorView waiting = status(c);
    assertNull(waiting.activeJob(), waiting.toString());
    assertEquals(3, waiting.poolSize());
    // The view says why (it was only logged): a pool over min-samples and no job looked stuck.
    assertEquals("rollout of v3 is CANARY", waiting.waitingFor(), waiting.toString());

    rollout.set(Optional.empty());
    offer(c, "s4");
    CoordinatorView started = wait.awaitAssert(Duration.ofSeconds(10), () -> {
      CoordinatorView v = status(c);
      assertNotNull(v.activeJob(), v.toString());
      return v;
    });
    assertTrue(started.activeJob().jobId().startsWith("job-1-"), started.toString());
    assertNull(started.waitingFor(), started.toString());
  }

  @Test
  void aWaitingThresholdStartsAfterTheRolloutEndsWithoutAnotherTrajectory() {
    // After a rollback no canary traffic follows: before, the job waited for a trajectory that might never
    // come, and the view kept saying "rollout of v3 is CANARY" (trial t91).
    ActorRef<Command> c = coordinator("2", "poll-interval = 300ms");
    offer(c, "s1");
    offer(c, "s2");
    offer(c, "s3");
    TestProbe<Object> wait = testKit.createTestProbe();
    wait.awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals("rollout of v3 is CANARY", status(c).waitingFor());
      return null;
    });
    int askedWhileWaiting = asked.get();
    wait.awaitAssert(Duration.ofSeconds(10), () -> {
      assertTrue(asked.get() > askedWhileWaiting, "the waiting threshold asks again by itself");
      return null;
    });
    assertNull(status(c).activeJob(), "still no job while the rollout runs");

    rollout.set(Optional.empty());
    CoordinatorView started = wait.awaitAssert(Duration.ofSeconds(10), () -> {
      CoordinatorView v = status(c);
      assertNotNull(v.activeJob(), v.toString());
      return v;
    });
    assertNull(started.waitingFor(), started.toString());
    assertEquals(0, started.poolSize(), "the job took the pool: " + started);
  }

  @Test
  void aScheduledSlotDuringACanaryIsSkippedWithTheReasonAndTheNextSlotFires() {
    RolloutProbe probe = agentId -> {
      asked.incrementAndGet();
      return CompletableFuture.completedFuture(rollout.get());
    };
    ManualClock clock = new ManualClock(Instant.parse("2025-03-01T01:59:59Z"));
    String agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-s";
    ActorRef<Command> c = testKit.spawn(TrainingCoordinator.create(agentId,
        TrainingCoordinatorTest.policy("trigger { type = \"scheduled\", cron = \"0 0 2 * * ?\" }"),
        TrainingCoordinator.Ports.batch(new Fakes.Exporter(), new Fakes.Backend(), new Fakes.Sink())
            .withRolloutProbe(probe), clock));
    offer(c, "s1");
    String pid = TrainingCoordinator.persistenceId(agentId).id();
    var journal = org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit.create(testKit.system());
    TestProbe<Object> wait = testKit.createTestProbe();
    // The schedule is armed after recovery, which may come after the offer's ack: armed only once the
    // clock had moved on, the 02:00 slot would not be due for it and nothing would be skipped.
    wait.awaitAssert(Duration.ofSeconds(10), () -> journal.persistedInStorage(pid).stream()
        .filter(e -> e instanceof io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed).findFirst().orElseThrow());
    clock.advance(Duration.ofSeconds(1)); // the 02:00 slot is due
    c.tell(TrainingCoordinator.ScheduleTick.INSTANCE);
    TrainingCoordinator.ScheduledSlotSkipped skipped = wait.awaitAssert(Duration.ofSeconds(10), () ->
        journal.persistedInStorage(pid).stream()
            .filter(e -> e instanceof TrainingCoordinator.ScheduledSlotSkipped)
            .map(e -> (TrainingCoordinator.ScheduledSlotSkipped) e).findFirst().orElseThrow());
    assertEquals(Instant.parse("2025-03-01T02:00:00Z"), skipped.slot());
    assertTrue(skipped.reason().startsWith("a rollout is in progress: v3 is CANARY"), skipped.reason());
    CoordinatorView waiting = status(c);
    assertNull(waiting.activeJob(), waiting.toString());
    assertEquals(1, waiting.poolSize(), "the pool waits for the next slot");
    assertEquals(Instant.parse("2025-03-02T02:00:00Z"), waiting.nextScheduledRun());

    rollout.set(Optional.empty());
    clock.advance(Duration.ofDays(1));
    c.tell(TrainingCoordinator.ScheduleTick.INSTANCE);
    CoordinatorView started = wait.awaitAssert(Duration.ofSeconds(10), () -> {
      CoordinatorView v = status(c);
      assertNotNull(v.activeJob(), v.toString());
      return v;
    });
    assertTrue(started.activeJob().jobId().startsWith("job-1-"), started.toString());
  }
}
