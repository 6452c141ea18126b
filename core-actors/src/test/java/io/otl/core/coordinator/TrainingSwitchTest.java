package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.ErrorCode;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.GetJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorReplies.JobView;
import io.otl.core.coordinator.CoordinatorReplies.Refused;
import io.otl.core.coordinator.CoordinatorState.State;
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
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code agentscope.training.enabled = false} in the coordinator: trajectories are still pooled, no
 * trigger starts a job, the view says {@code disabled}, and a job requested before the switch was
 * turned off is not submitted when the coordinator recovers with it off.
 */
class TrainingSwitchTest {

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("TrainingSwitchTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-30T01:59:59Z"));
  private final Fakes.Exporter exporter = new Fakes.Exporter();
  private final Fakes.Backend backend = new Fakes.Backend();
  private final Fakes.Sink sink = new Fakes.Sink();
  private final String agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-x";

  private EventSourcedBehaviorTestKit<Command, Event, State> entity(boolean enabled) {
    TrainingPolicy policy = TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "enabled = " + enabled + "\n training-runner { poll-interval = 1h\n"
                + " trigger { type = \"threshold,scheduled\", min-samples = 1, cron = \"0 0 2 * * ?\" } }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
    EventSourcedBehaviorTestKit<Command, Event, State> kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        TrainingCoordinator.create(agentId, policy, TrainingCoordinator.Ports.batch(exporter, backend, sink), clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    status(kit); // recovery (and its resume step) is done before the test's next command
    return kit;
  }

  private static CoordinatorView status(EventSourcedBehaviorTestKit<Command, Event, State> kit) {
    return kit.<CoordinatorView>runCommand(GetStatus::new).reply();
  }

  private static TrajectoryAck offer(EventSourcedBehaviorTestKit<Command, Event, State> kit, String sessionId) {
    return kit.<TrajectoryAck>runCommand(r -> new TrajectoryAvailable(sessionId, "v0", 0.5, 0.9,
        Instant.parse("2026-11-30T00:00:00Z"), false, List.of(), r)).reply();
  }

  @Test
  void disabledPoolsButNeverStartsAJob() {
    var kit = entity(false);
    offer(kit, "s1");
    offer(kit, "s2");
    CoordinatorView view = status(kit);
    assertEquals("disabled", view.status());
    assertEquals(2, view.poolSize(), "trajectories are still pooled");
    assertEquals(null, view.activeJob(), "min-samples = 1 would have started a job");
    assertEquals(null, view.nextScheduledRun());
    clock.advance(Duration.ofSeconds(1)); // the 02:00 slot is due
    kit.runCommand(TrainingCoordinator.ScheduleTick.INSTANCE);
    Refused refused = assertInstanceOf(Refused.class,
        kit.<TriggerReply>runCommand(r -> new Trigger("alice", r)).reply());
    assertEquals(ErrorCode.CONFLICT, refused.code());
    assertTrue(refused.message().contains("agentscope.training.enabled = false"), refused.message());
    assertTrue(exporter.requests.isEmpty() && backend.submissions.isEmpty());
    assertEquals(List.of(), kit.persistenceTestKit()
        .persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).stream()
        .filter(e -> e instanceof TrainingCoordinator.JobRequested || e instanceof TrainingCoordinator.ScheduledSlotFired)
        .toList());
  }

  @Test
  void aRequestedJobIsNotSubmittedWhileDisabled() {
    var on = entity(true);
    exporter.script.then(Fakes.hang()); // the node stops while the dataset is being exported
    offer(on, "s1");
    String jobId = status(on).activeJob().jobId();
    assertEquals(1, exporter.requests.size());

    String pid = TrainingCoordinator.persistenceId(agentId).id();
    List<Object> journal = on.persistenceTestKit().persistedInStorage(pid);
    // The next start, with training switched off, recovers the same journal.
    var off = entity(false);
    off.persistenceTestKit().clearByPersistenceId(pid);
    off.persistenceTestKit().persistForRecovery(pid, journal);
    off.restart();
    status(off);
    JobView job = assertInstanceOf(JobView.class, off.<JobReply>runCommand(r -> new GetJob(jobId, r)).reply());
    assertEquals(JobStatus.REQUESTED, job.status());
    assertEquals("disabled", status(off).status());
    assertEquals(1, exporter.requests.size(), "recovery did not export again");
    assertFalse(backend.submissions.stream().anyMatch(s -> s.jobId().equals(jobId)), "nothing submitted");
  }
}
