package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.SessionsForgotten;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorProtocol.GetJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorProtocol.PollTick;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoriesAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAcks;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.Trigger;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.Disposition;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorReplies.JobView;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorReplies.TriggerAccepted;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.SessionEntry;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import io.otl.core.training.BackendJobStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Used and filtered sessions are forgotten once no revision can reach them (feed time past their
 * write time + feedback window (24h) + the 1h margin), and a repeat of one is still not counted.
 */
class SessionForgettingTest {
  /** When the sessions of the tests were written (the feed's clock, recordedAt). */
  private static final Instant T0 = Instant.parse("2025-03-01T00:00:00Z");

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("SessionForgettingTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final Fakes.Backend backend = new Fakes.Backend();
  private final ManualClock clock = new ManualClock(Instant.parse("2025-03-05T00:00:00Z"));
  private String agentId;
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  private void startEntity(String overrides) {
    agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-f";
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        TrainingCoordinator.create(agentId, TrainingCoordinatorTest.policy(overrides),
            TrainingCoordinator.Ports.batch(new Fakes.Exporter(), backend, new Fakes.Sink()), clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    kit.<CoordinatorView>runCommand(GetStatus::new);
  }

  /** A completion (or revision) written at {@code written}; its fact time is a client's, a day earlier. */
  private static TrajectoryAvailable item(String sessionId, double quality, boolean revision, Instant written) {
    return new TrajectoryAvailable(sessionId, "v0", revision ? 0.9 : 0.5, quality, written.minus(Duration.ofDays(1)),
        revision, List.of(), null, written);
  }

  private EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, State, TrajectoryAcks> deliver(
      TrajectoryAvailable... items) {
    return kit.runCommand(r -> new TrajectoriesAvailable(List.of(items), r));
  }

  private TrajectoryAck ack(EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, State, TrajectoryAcks> r,
      int i) {
    return r.reply().acks().get(i);
  }

  private JobView job(String jobId) {
    return assertInstanceOf(JobView.class, kit.<JobReply>runCommand(r -> new GetJob(jobId, r)).reply());
  }

  private void awaitStatus(String jobId, JobStatus status) {
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(status, job(jobId).status());
      return null;
    });
  }

  /** u1 and u2 used by a job that ended (FAILED on the backend: they stay used), f1 filtered, p1 pooled. */
  private void historyWrittenAtT0() {
    startEntity("trigger { type = manual }");
    deliver(item("u1", 0.9, false, T0), item("u2", 0.9, false, T0), item("f1", 0.01, false, T0));
    TriggerReply t = kit.<TriggerReply>runCommand(r -> new Trigger("alice", r)).reply();
    String jobId = assertInstanceOf(TriggerAccepted.class, t).jobId();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.FAILED, "OOM", null));
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobId, JobStatus.FAILED);
    deliver(item("p1", 0.9, false, T0));
    assertEquals(SessionEntry.Kind.USED, kit.getState().sessions().get("u1").kind());
    assertEquals(4, kit.getState().sessions().size());
  }

  @Test
  void usedAndFilteredSessionsPastTheCutoffAreForgottenAndThePoolIsUntouched() {
    historyWrittenAtT0();
    // 24h59m of feed time later a revision of u1 could still be on its way: nothing is forgotten.
    var early = deliver(item("n0", 0.9, false, T0.plus(Duration.ofMinutes(24 * 60 + 59))));
    assertTrue(early.events().stream().noneMatch(SessionsForgotten.class::isInstance), early.events().toString());

    var later = deliver(item("n1", 0.9, false, T0.plus(Duration.ofHours(26))));
    assertEquals(Disposition.POOLED, ack(later, 0).disposition());
    List<SessionsForgotten> forgotten = later.events().stream().filter(SessionsForgotten.class::isInstance)
        .map(SessionsForgotten.class::cast).toList();
    assertEquals(1, forgotten.size(), later.events().toString());
    assertEquals(T0.plus(Duration.ofHours(1)), forgotten.get(0).before(), "newest 26h - window 24h - margin 1h");
    assertEquals(3, forgotten.get(0).count(), "u1, u2 and f1");
    State s = kit.getState();
    assertEquals(List.of("n0", "n1", "p1"), s.sessions().toMap().keySet().stream().toList());
    assertEquals(3, s.poolSize(), "the pool is untouched");
    assertEquals(List.of("p1", "n0", "n1"), s.poolSessionIds());
    assertEquals(T0.plus(Duration.ofHours(1)), s.forgottenBefore());

    // Recovery replays the same decision, and the static handler agrees.
    State recovered = kit.restart().state();
    assertEquals(s, recovered);
    assertEquals(s, TrainingCoordinator.replay(kit.persistenceTestKit()
        .persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).stream().map(Event.class::cast).toList()));
  }

  /** Fails without PoolRules' guard: the forgotten u1 and f1 would join the pool again. */
  @Test
  void aLateRevisionOrARepeatOfAForgottenSessionIsNotPooledAndPersistsNothing() {
    historyWrittenAtT0();
    deliver(item("n1", 0.9, false, T0.plus(Duration.ofHours(26))));
    assertNull(kit.getState().sessions().get("u1"));
    int pool = kit.getState().poolSize();

    // Redelivered from an old offset: u1's revision written 23h after it, f1's completion, and a
    // revision that raises f1 to min-quality; none of them is counted, nothing is written.
    var repeats = deliver(item("u1", 0.9, true, T0.plus(Duration.ofHours(23))), item("u2", 0.9, false, T0),
        item("f1", 0.01, false, T0), item("f1", 0.9, true, T0.plus(Duration.ofHours(20))));
    for (int i = 0; i < 4; i++) {
      assertEquals(Disposition.DUPLICATE, ack(repeats, i).disposition(), ack(repeats, i).toString());
    }
    assertTrue(ack(repeats, 0).detail().startsWith("already seen"), ack(repeats, 0).detail());
    assertTrue(repeats.events().isEmpty(), repeats.events().toString());
    assertEquals(pool, kit.getState().poolSize());

    // After a restart (the transient feed time is gone) the persisted cutoff still guards them.
    kit.restart();
    var again = deliver(item("u1", 0.9, true, T0.plus(Duration.ofHours(23))));
    assertEquals(Disposition.DUPLICATE, ack(again, 0).disposition());
    assertTrue(again.events().isEmpty());

    // Something written after the cutoff + window is new, and counts.
    var fresh = deliver(item("n2", 0.9, false, T0.plus(Duration.ofHours(25))));
    assertEquals(Disposition.POOLED, ack(fresh, 0).disposition());
  }

  @Test
  void nothingIsForgottenWhileAJobIsActive() {
    startEntity("trigger { type = manual }");
    deliver(item("u1", 0.9, false, T0), item("f1", 0.01, false, T0));
    String jobId = assertInstanceOf(TriggerAccepted.class,
        kit.<TriggerReply>runCommand(r -> new Trigger("alice", r)).reply()).jobId();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    var during = deliver(item("n1", 0.9, false, T0.plus(Duration.ofHours(30))));
    assertTrue(during.events().stream().noneMatch(SessionsForgotten.class::isInstance),
        "a pre-flight failing after the export gives the job's used sessions back: they stay");
    assertEquals(SessionEntry.Kind.USED, kit.getState().sessions().get("u1").kind());

    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.FAILED, "OOM", null));
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobId, JobStatus.FAILED);
    var after = deliver(item("n2", 0.9, false, T0.plus(Duration.ofHours(30).plusSeconds(1))));
    assertTrue(after.events().stream().anyMatch(SessionsForgotten.class::isInstance), after.events().toString());
    assertNull(kit.getState().sessions().get("u1"));
    assertNull(kit.getState().sessions().get("f1"));
  }

  @Test
  void theWindowIsTheSessionsFeedbackWindow() {
    var training = com.typesafe.config.ConfigFactory.defaultReference().getConfig("agentscope.training");
    assertEquals(Duration.ofHours(24), TrainingPolicy.fromConfig(training).feedbackWindow());
    assertEquals(Duration.ofHours(2), TrainingPolicy.fromConfig(com.typesafe.config.ConfigFactory
        .parseString("data-collector.session.feedback-window = 2h").withFallback(training)).feedbackWindow());
    assertEquals(Instant.parse("2025-03-01T21:00:00Z"),
        SessionForgetting.cutoff(Instant.parse("2025-03-02T00:00:00Z"), Duration.ofHours(2)), "newest - 2h - 1h");
  }

  /** Snapshots written before forgetting: 4-element session arrays and no forgottenBefore. */
  @Test
  void aSnapshotWrittenBeforeForgettingLoadsAndAStateThatNeverForgotWritesTheSameJson() throws Exception {
    var json = org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider.get(testKit.system())
        .getOrCreate("jackson-json", java.util.Optional.empty());
    State legacy = TrainingCoordinator.replay(List.of(
        new CoordinatorEvents.TrajectoryPooled("p1", "v0", 0.5, 0.9, T0, List.of(), T0),
        new CoordinatorEvents.TrajectoryFiltered("f1", 0.1, T0, T0)));
    String written = json.writeValueAsString(legacy);
    assertFalse(written.contains("forgottenBefore"), written);
    assertTrue(written.contains("\"p1\":[\"POOLED\",0.5,0.9,\"2025-03-01T00:00:00Z\"]"), written);
    State read = json.readValue(written, State.class);
    assertEquals(legacy, read);
    assertNull(read.forgottenBefore());
    assertNull(read.sessions().get("f1").recordedAt());
    assertEquals(T0, read.sessions().get("f1").writtenAt(), "the fact time stands in for the write time");

    State forgot = CoordinatorEventHandler.applyEvent(legacy, new SessionsForgotten(T0.plusSeconds(1), 1, T0));
    assertEquals(List.of("p1"), forgot.sessions().toMap().keySet().stream().toList());
    assertEquals(forgot, json.readValue(json.writeValueAsString(forgot), State.class));
  }

  @Test
  void theStateStaysBoundedWhileTwelveThousandSessionsFlowThrough() {
    startEntity("trigger { type = manual }");
    int n = 12_000;
    int biggest = 0;
    List<TrajectoryAvailable> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      // one session a minute (200 hours of feed time); every 100th is pooled, the rest filtered
      batch.add(item("s" + i, i % 100 == 0 ? 0.9 : 0.01, false, T0.plus(Duration.ofMinutes(i))));
      if (batch.size() == 200) {
        deliver(batch.toArray(TrajectoryAvailable[]::new));
        batch.clear();
        biggest = Math.max(biggest, kit.getState().sessions().size());
      }
    }
    State s = kit.getState();
    assertEquals(n / 100, s.poolSize(), "every pooled session stays");
    // 24h + 1h margin + up to 1h between checks + one batch, at one session a minute, plus the pool
    assertTrue(biggest <= 26 * 60 + 200 + n / 100, "at most " + biggest + " entries at once");
    assertTrue(s.sessions().size() < n / 4, s.sessions().size() + " entries after " + n + " sessions");
    assertFalse(kit.snapshotTestKit().orElseThrow()
        .persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).isEmpty(), "a snapshot was taken");
    assertEquals(s, kit.restart().state(), "recovered from the snapshot and the events after it");
    // a repeat of a session forgotten long ago is still not counted
    assertEquals(Disposition.DUPLICATE, ack(deliver(item("s1", 0.9, true, T0.plus(Duration.ofMinutes(5)))), 0)
        .disposition());
  }
}
