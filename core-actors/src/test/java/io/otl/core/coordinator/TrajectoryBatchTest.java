package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.Disposition;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoriesAvailable;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAcks;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Many trajectories of one agent in one command (what the read-side feed sends under load). */
class TrajectoryBatchTest {
  private static final Instant T0 = Instant.parse("2025-03-01T00:00:00Z");

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("TrajectoryBatchTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private String agentId;

  private EventSourcedBehaviorTestKit<Command, Event, State> kit(String trigger) {
    agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-b";
    TrainingPolicy p = TrainingCoordinatorTest.policy(trigger);
    var kit = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        TrainingCoordinator.create(agentId, p,
            TrainingCoordinator.Ports.batch(new Fakes.Exporter(), new Fakes.Backend(), new Fakes.Sink()),
            new ManualClock(Instant.parse("2025-03-01T01:00:00Z"))),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    kit.<CoordinatorView>runCommand(GetStatus::new);
    return kit;
  }

  private static TrajectoryAvailable item(String sessionId, double quality) {
    return new TrajectoryAvailable(sessionId, "v0", 0.5, quality, T0, false, List.of(), null);
  }

  private static CommandResultWithReply<Command, Event, State, TrajectoryAcks> offer(
      EventSourcedBehaviorTestKit<Command, Event, State> kit, List<TrajectoryAvailable> items) {
    return kit.runCommand(r -> new TrajectoriesAvailable(items, r));
  }

  @Test
  void thousandsOfTrajectoriesInBatchesWithRepeatsAreEachCountedOnceAndSurviveARestart() {
    var kit = kit("trigger { type = manual }");
    int n = 3000;
    int events = 0;
    for (int from = 0; from < n; from += 250) {
      List<TrajectoryAvailable> batch = new ArrayList<>();
      // each batch also repeats its first session, and (after the first) the previous batch's last:
      // at-least-once delivery across batches and inside one
      for (int i = from; i < from + 250; i++) batch.add(item("s" + i, 0.9));
      batch.add(item("s" + from, 0.9));
      if (from > 0) batch.add(item("s" + (from - 1), 0.9));
      var result = offer(kit, batch);
      List<TrajectoryAck> acks = result.reply().acks();
      assertEquals(batch.size(), acks.size(), "one ack per item, in order");
      for (int i = 0; i < 250; i++) assertEquals(Disposition.POOLED, acks.get(i).disposition());
      assertEquals(Disposition.DUPLICATE, acks.get(250).disposition());
      if (from > 0) assertEquals(Disposition.DUPLICATE, acks.get(251).disposition());
      assertEquals(250, result.events().size(), "one write holding the pooled trajectories only");
      events += result.events().size();
    }
    assertEquals(n, events);
    assertEquals(n, kit.getState().poolSize());
    assertEquals(n, kit.persistenceTestKit().persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).stream()
        .filter(TrajectoryPooled.class::isInstance).count());

    State recovered = kit.restart().state();
    assertEquals(n, recovered.poolSize(), "replay counts each trajectory once");
    assertEquals(kit.getState(), recovered);
    var again = offer(kit, List.of(item("s0", 0.9), item("s2999", 0.9), item("new", 0.9)));
    assertEquals(List.of(Disposition.DUPLICATE, Disposition.DUPLICATE, Disposition.POOLED),
        again.reply().acks().stream().map(TrajectoryAck::disposition).toList());
    assertEquals(n + 1, kit.getState().poolSize());
  }

  @Test
  void aBatchIsJudgedInOrderAndStartsTheThresholdJobOnceWithTheWholeBatch() {
    var kit = kit("trigger { type = threshold, min-samples = 3 }");
    List<TrajectoryAvailable> batch = List.of(item("a", 0.9), item("low", 0.01), item("b", 0.9),
        item("a", 0.9), item("c", 0.9), item("d", 0.9), new TrajectoryAvailable("", "v0", 0.5, 0.9, T0, false,
            List.of(), null));
    var result = offer(kit, batch);
    assertEquals(List.of(Disposition.POOLED, Disposition.FILTERED, Disposition.POOLED, Disposition.DUPLICATE,
            Disposition.POOLED, Disposition.POOLED, Disposition.INVALID),
        result.reply().acks().stream().map(TrajectoryAck::disposition).toList());
    List<JobRequested> jobs = result.events().stream().filter(JobRequested.class::isInstance)
        .map(JobRequested.class::cast).toList();
    assertEquals(1, jobs.size(), "one threshold job for the batch");
    assertEquals(List.of("a", "b", "c", "d"), jobs.get(0).sessionIds().stream().sorted().toList());
    assertTrue(kit.getState().activeJobId() != null);
  }
}
