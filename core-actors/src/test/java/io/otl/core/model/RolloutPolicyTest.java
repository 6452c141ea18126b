package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.SettingsOverlay;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.RolloutPolicyReply;
import io.otl.core.model.ModelProtocol.RolloutPolicyView;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelState.State;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Run-time rollout settings ({@link RolloutPolicy}) through the entity, with every command, event
 * and snapshot serialized: a change is persisted, in force for the next rollout, replayed after a
 * restart, refused with nothing persisted when invalid; a rollout in progress keeps its plan.
 */
class RolloutPolicyTest {
  private static ActorTestKit testKit;
  private static final Map<String, Double> GOOD =
      Map.of("task-success-rate", 0.85, "user-satisfaction", 0.80, "response-latency", 900.0);

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("RolloutPolicyTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @BeforeEach
  void entity() {
    SettingsOverlay.Resolver<ModelSettings> file =
        RolloutPolicy.over(EntityTestKits.training("min-samples-per-step = 20"), null);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        ModelVersion.create("agent-" + UUID.randomUUID(), file, clock, io.otl.core.serving.Serving.registeredEndpoints()),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private CommandResultWithReply<Command, Event, State, RolloutPolicyReply> set(Map<String, Object> overrides) {
    return kit.runCommand(r -> new ModelProtocol.SetRolloutPolicy(overrides, "http", r));
  }

  private RolloutPolicyView get() {
    return (RolloutPolicyView) kit.<RolloutPolicyReply>runCommand(ModelProtocol.GetRolloutPolicy::new).reply();
  }

  private CommandResultWithReply<Command, Event, State, TransitionReply> register(String version) {
    return kit.runCommand(r -> new ModelProtocol.RegisterCandidate(version, "s3://ckpt/" + version,
        "http://" + version + ":8000", "job-" + version, GOOD, r));
  }

  private static RolloutStarted started(CommandResultWithReply<Command, Event, State, TransitionReply> r) {
    return r.events().stream().filter(RolloutStarted.class::isInstance).map(RolloutStarted.class::cast)
        .findFirst().orElseThrow(() -> new AssertionError("no rollout started: " + r.events()));
  }

  @Test
  void aChangeIsPersistedShownAndUsedByTheNextRolloutAndSurvivesARestart() {
    assertEquals(0.05, get().policy().get("model-update.canary-ratio"), "the file's value");
    var r = set(Map.of("model-update", Map.of("canary-ratio", 0.2)));
    RolloutPolicyView v = assertInstanceOf(RolloutPolicyView.class, r.reply());
    assertEquals(0.2, v.policy().get("model-update.canary-ratio"));
    assertEquals(Map.of("model-update.canary-ratio", 0.2), v.overrides());
    assertEquals("http", v.changedBy());
    assertEquals(List.of(new RolloutPolicy.RolloutPolicyChanged(Map.of("model-update.canary-ratio", 0.2), "http", clock.instant())),
        r.events());

    register("v1"); // first version: STABLE directly
    assertEquals(List.of(0.2, 0.5, 1.0), started(register("v2")).plan(), "the next rollout's plan starts at 0.2");

    kit.restart();
    assertEquals(0.2, get().policy().get("model-update.canary-ratio"), "replayed");
    assertEquals(Map.of("model-update.canary-ratio", 0.2), get().overrides());
  }

  @Test
  void theSameSetAgainPersistsNothingAndEmptyClearsIt() {
    set(Map.of("model-update.steps", List.of(0.5, 1.0)));
    assertTrue(set(Map.of("model-update.steps", List.of(0.5, 1.0))).events().isEmpty());
    var cleared = set(Map.of());
    assertEquals(1, cleared.events().size());
    RolloutPolicyView v = get();
    assertEquals(Map.of(), v.overrides());
    assertEquals(List.of(0.2, 0.5, 1.0), v.policy().get("model-update.steps"), "the file's steps again");
    assertTrue(set(Map.of()).events().isEmpty(), "nothing to clear");
  }

  @Test
  void aBadKeyOrValueIsRefusedAndPersistsNothing() {
    for (Map<String, Object> bad : List.of(
        Map.<String, Object>of("model-update.canary-ratio", 1.5),
        Map.<String, Object>of("model-update.canary-wratio", 0.1),
        Map.<String, Object>of("model-update.min-samples-per-step", 1),
        Map.<String, Object>of("model-update.steps", List.of(0.5, 0.9)))) {
      var r = set(bad);
      Failure f = assertInstanceOf(Failure.class, r.reply(), bad.toString());
      assertEquals(ModelProtocol.ErrorCode.INVALID_INPUT, f.code());
      assertTrue(f.message().contains("model-update."), f.message());
      assertTrue(r.events().isEmpty());
    }
    assertEquals(Map.of(), get().overrides());
    assertNull(get().changedBy());
  }

  @Test
  void aRolloutInProgressKeepsItsPlanAndTurningAutoDeployOnStartsAWaitingCandidate() {
    set(Map.of("model-update.auto-deploy", false));
    register("v1");
    kit.<TransitionReply>runCommand(r -> new ModelProtocol.Promote("v1", r));
    var waiting = register("v2");
    assertTrue(waiting.events().stream().noneMatch(RolloutStarted.class::isInstance), "auto-deploy off: v2 waits");
    var on = set(Map.of("model-update.auto-deploy", true, "model-update.canary-ratio", 0.1));
    RolloutStarted s = on.events().stream().filter(RolloutStarted.class::isInstance)
        .map(RolloutStarted.class::cast).findFirst().orElseThrow();
    assertEquals(List.of(0.1, 0.2, 0.5, 1.0), s.plan());
    set(Map.of("model-update.canary-ratio", 0.3));
    State st = kit.getState();
    assertEquals(List.of(0.1, 0.2, 0.5, 1.0), ((ModelState.RollingOut) st).rollout().plan(), "the plan in progress stays");
  }

  /**
   * Trial t30: a PUT that shortens step-duration below the time the step has run is a step check; before,
   * the step waited for the next outcome (or the old deadline, an hour on) although its samples were in.
   */
  @Test
  void aStepDurationShortenedBelowTheElapsedTimeMovesTheStepOnAtOnce() {
    set(Map.of("model-update.canary-ratio", 0.5, "model-update.steps", List.of(1.0)));
    register("v1");
    started(register("v2"));
    for (int i = 0; i < 20; i++) {
      for (String v : List.of("v1", "v2")) {
        String session = v + "-s" + i;
        kit.<ModelProtocol.OutcomeReply>runCommand(r -> new ModelProtocol.RecordOutcome(session, v, true, null, 0, 0, 100.0, r));
      }
    }
    clock.advance(java.time.Duration.ofMinutes(10));
    assertInstanceOf(ModelState.RollingOut.class, kit.getState(), "step-duration (1h) not over yet");
    var r = set(Map.of("model-update.canary-ratio", 0.5, "model-update.steps", List.of(1.0),
        "model-update.step-duration", "5m"));
    assertTrue(r.events().stream().anyMatch(ModelEvents.VersionPromoted.class::isInstance),
        "the last step passed at the change: " + r.events());
    assertEquals("v2", kit.getState().models().stable());
  }

  @Test
  void anEntityWithFixedSettingsRefusesRunTimeChanges() {
    assertThrows(IllegalArgumentException.class,
        () -> RolloutPolicy.fixed(ModelSettings.defaults()).resolve(Map.of("model-update.canary-ratio", 0.2)));
  }
}
