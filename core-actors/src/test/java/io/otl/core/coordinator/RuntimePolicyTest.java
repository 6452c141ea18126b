package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.ErrorCode;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.GetPolicy;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorReplies.PolicyReply;
import io.otl.core.coordinator.CoordinatorReplies.Refused;
import io.otl.core.coordinator.CoordinatorProtocol.SetPolicy;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Run-time per-agent policy (PUT /v1/training/{agentId}/policy): a change is persisted, in force
 * at once (a lower min-samples fires the threshold on the pool already there), kept across a
 * restart, and a wrong key or value is refused with nothing persisted.
 */
class RuntimePolicyTest {
  private static final Config TRAINING = ConfigFactory.parseString(
          "training-runner { poll-interval = 1h, trigger { type = threshold, min-samples = 5 } }")
      .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training"));

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("RuntimePolicyTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-30T01:00:00Z"));
  private final Fakes.Exporter exporter = new Fakes.Exporter();
  private final Fakes.Backend backend = new Fakes.Backend();
  private final Fakes.Sink sink = new Fakes.Sink();
  private final String agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-p";

  private EventSourcedBehaviorTestKit<Command, Event, State> entity() {
    var kit = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        TrainingCoordinator.create(agentId, TrainingPolicy.fromConfig(TRAINING), PolicyOverrides.over(TRAINING, null),
            TrainingCoordinator.Ports.batch(exporter, backend, sink), clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    status(kit);
    return kit;
  }

  private static CoordinatorView status(EventSourcedBehaviorTestKit<Command, Event, State> kit) {
    return kit.<CoordinatorView>runCommand(GetStatus::new).reply();
  }

  private static void offer(EventSourcedBehaviorTestKit<Command, Event, State> kit, String sessionId) {
    kit.<TrajectoryAck>runCommand(r -> new TrajectoryAvailable(sessionId, "v0", 0.8, 0.9,
        Instant.parse("2026-11-30T00:00:00Z"), false, List.of(), r)).reply();
  }

  private static PolicyReply set(EventSourcedBehaviorTestKit<Command, Event, State> kit, Map<String, Object> o) {
    return kit.<PolicyReply>runCommand(r -> new SetPolicy(o, "alice", r)).reply();
  }

  private int journalSize() {
    return org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit.create(testKit.system())
        .persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).size();
  }

  @Test
  void aLowerMinSamplesFiresTheThresholdAndSurvivesARestart() {
    var kit = entity();
    offer(kit, "s1");
    offer(kit, "s2");
    assertNull(status(kit).activeJob(), "the file's min-samples is 5");

    Map<String, Object> change = new LinkedHashMap<>();
    change.put("trigger.min-samples", 2);
    change.put("hyperparams", Map.of("epochs", 1));
    PolicyView view = assertInstanceOf(PolicyView.class, set(kit, change));
    assertEquals(2, view.policy().get("trigger.min-samples"));
    assertEquals(1, view.policy().get("hyperparams.epochs"));
    assertEquals(Map.of("trigger.min-samples", 2, "hyperparams.epochs", 1), view.overrides());
    assertEquals("alice", view.changedBy());
    CoordinatorView st = status(kit);
    assertEquals(2, st.minSamples());
    assertNotNull(st.activeJob(), "the pool of 2 reaches the new min-samples at once");
    assertEquals(1, exporter.requests.size());

    kit.restart();
    assertEquals(2, status(kit).minSamples(), "the change is replayed from the journal");
    PolicyView after = assertInstanceOf(PolicyView.class, kit.<PolicyReply>runCommand(GetPolicy::new).reply());
    assertEquals(view.overrides(), after.overrides());
    assertEquals(1, after.policy().get("hyperparams.epochs"));

    PolicyView cleared = assertInstanceOf(PolicyView.class, set(kit, Map.of()));
    assertEquals(5, cleared.policy().get("trigger.min-samples"), "{} goes back to the file");
    assertEquals(Map.of(), cleared.overrides());
  }

  @Test
  void distillationWithoutATeacherFailsItsPreflightNamingTheKey() {
    var kit = entity();
    offer(kit, "s1");
    assertInstanceOf(PolicyView.class, set(kit, Map.of("algorithm", "distillation")));
    TrainingCoordinator.TriggerAccepted refused = assertInstanceOf(TrainingCoordinator.TriggerAccepted.class,
        kit.<TrainingCoordinator.TriggerReply>runCommand(r -> new TrainingCoordinator.Trigger("alice", r)).reply());
    assertEquals(TrainingCoordinator.JobStatus.FAILED, refused.status());
    assertTrue(refused.preflightFailures().stream().anyMatch(f -> f.contains("hyperparams.teacher-model")),
        refused.preflightFailures().toString());
    assertTrue(exporter.requests.isEmpty(), "nothing exported");

    assertInstanceOf(PolicyView.class, set(kit, Map.of("algorithm", "distillation",
        "hyperparams.teacher-model", "qwen2.5-72b-instruct")));
    TrainingCoordinator.TriggerAccepted ok = assertInstanceOf(TrainingCoordinator.TriggerAccepted.class,
        kit.<TrainingCoordinator.TriggerReply>runCommand(r -> new TrainingCoordinator.Trigger("alice", r)).reply());
    assertEquals(List.of(), ok.preflightFailures());
    assertEquals("distillation", exporter.requests.get(0).algorithm());
    // The default one GPU leaves none for the trainer; one session is also less than one batch.
    assertEquals(2, ok.preflightWarnings().size(), ok.preflightWarnings().toString());
    assertTrue(ok.preflightWarnings().get(0).contains("trinity.node-num x gpu-per-node = 1 x 1 = 1"),
        ok.preflightWarnings().toString());
    assertTrue(ok.preflightWarnings().get(1).startsWith("the pool holds 1 trajectory"), ok.preflightWarnings().toString());
  }

  @Test
  void anUnknownKeyOrABadValueIsRefusedAndChangesNothing() {
    var kit = entity();
    int before = journalSize();
    Refused unknown = assertInstanceOf(Refused.class, set(kit, Map.of("backend", "trinity-proxy")));
    assertEquals(ErrorCode.INVALID_INPUT, unknown.code());
    assertTrue(unknown.message().startsWith("backend cannot be set per agent; allowed: trigger.type"),
        unknown.message());
    assertTrue(unknown.message().contains("hyperparams.*"), unknown.message());

    Refused bad = assertInstanceOf(Refused.class, set(kit, Map.of("trigger.min-samples", 0)));
    assertEquals("agentscope.training.training-runner.trigger.min-samples = 0: must be an integer >= 1",
        bad.message());
    Refused algo = assertInstanceOf(Refused.class, set(kit, Map.of("algorithm", "rlhf")));
    assertTrue(algo.message().contains("algorithm = rlhf: must be one of sft, ppo, grpo, dpo, distillation"),
        algo.message());
    Map<String, Object> nullValue = new LinkedHashMap<>();
    nullValue.put("base-model", null);
    Refused nul = assertInstanceOf(Refused.class, set(kit, nullValue));
    assertTrue(nul.message().startsWith("base-model must have a value"), nul.message());

    assertEquals(before, journalSize(), "nothing persisted");
    assertEquals(5, status(kit).minSamples());
    PolicyView view = assertInstanceOf(PolicyView.class, kit.<PolicyReply>runCommand(GetPolicy::new).reply());
    assertEquals(Map.of(), view.overrides());
    assertNull(view.changedAt());
  }
}
