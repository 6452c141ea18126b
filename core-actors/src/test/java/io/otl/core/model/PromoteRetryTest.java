package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelViews.ModelsView;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.StaticServing;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A promote sent again (a client that timed out and retried) is the same promote: it does not make
 * the canary it started STABLE. Only a promote that is not a repeat of the one that started the
 * rollout skips the remaining steps.
 */
class PromoteRetryTest {

  private static final BaseModel BASE = new BaseModel("openai-compatible", "http://base:9000/v1", "qwen2.5-7b-instruct");
  private static final String OWN = "http://127.0.0.1:8265/v1";

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("PromoteRetryTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  private void startEntity(DeploymentTest.InMemoryModelServer server) {
    String agent = "agent-" + UUID.randomUUID().toString().substring(0, 8);
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training("auto-deploy = false"));
    Serving serving = new Serving(server, Optional.of(BASE), Duration.ofMillis(10), Duration.ofMillis(50), 3,
        StaticServing.INSTANCE);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(), ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private CommandResultWithReply<Command, Event, State, TransitionReply> promote(String actor) {
    return kit.runCommand(r -> new ModelVersion.Promote("v1", actor, r));
  }

  private VersionState state() {
    ModelsView view = kit.<ModelsView>runCommand(ModelVersion.Get::new).reply();
    return view.versions().stream().filter(v -> v.version().equals("v1")).findFirst().orElseThrow().state();
  }

  /** Defect: the retried promote of a READY static version made its fresh canary STABLE. */
  @Test
  void aRetriedPromoteOfAStaticVersionLeavesItsCanaryRunning() {
    startEntity(new DeploymentTest.InMemoryModelServer());
    kit.<TransitionReply>runCommand(r -> new ModelVersion.RegisterManual("v1", "my-org/my-lora", OWN, r));
    assertEquals(VersionState.READY, state());
    VersionStatus first = assertInstanceOf(VersionStatus.class, promote("alice").reply());
    assertEquals(VersionState.CANARY, first.state());

    var retry = promote("alice");
    assertTrue(retry.events().isEmpty(), "a retry writes nothing: " + retry.events());
    VersionStatus again = assertInstanceOf(VersionStatus.class, retry.reply());
    assertEquals(VersionState.CANARY, again.state());
    assertEquals(first.ratio(), again.ratio());
    assertEquals(List.of("already promoted: its canary runs (a promote that started this rollout; promote it again"
        + " once the canary has measured a session to skip the remaining steps)"), again.reasons());
    assertEquals(VersionState.CANARY, state());

    // Another operator's promote is a decision of its own: it skips the steps, as documented.
    VersionStatus skipped = assertInstanceOf(VersionStatus.class, promote("bob").reply());
    assertEquals(VersionState.STABLE, skipped.state());
  }

  /** The same operator promoting again after the canary measured something skips the steps. */
  @Test
  void aPromoteAfterTheCanaryMeasuredASessionSkipsTheRemainingSteps() {
    startEntity(new DeploymentTest.InMemoryModelServer());
    kit.<TransitionReply>runCommand(r -> new ModelVersion.RegisterManual("v1", "my-org/my-lora", OWN, r));
    promote("alice");
    kit.<ModelProtocol.OutcomeReply>runCommand(r -> new ModelVersion.RecordOutcome("s-1", "v1", true, null, 0, 0, null, r));
    assertEquals(VersionState.STABLE, assertInstanceOf(VersionStatus.class, promote("alice").reply()).state());
  }

  /** Under vllm-lora the retry that comes once the load is confirmed is the same promote too. */
  @Test
  void aRetriedPromoteAfterTheLoadIsConfirmedLeavesTheCanaryRunning() {
    startEntity(new DeploymentTest.InMemoryModelServer());
    kit.<TransitionReply>runCommand(r -> new ModelVersion.RegisterCandidate("v1", "file:///ckpt/v1",
        "file:///ckpt/v1", "job-1", java.util.Map.of("task-success-rate", 0.9), r));
    assertEquals(VersionState.DEPLOYING, assertInstanceOf(VersionStatus.class, promote(null).reply()).state());
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(VersionState.CANARY, state());
      return null;
    });
    var retry = promote(null);
    assertTrue(retry.events().isEmpty(), "a retry writes nothing: " + retry.events());
    assertEquals(VersionState.CANARY, assertInstanceOf(VersionStatus.class, retry.reply()).state());
  }
}
