package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelViews.ModelsView;
import io.otl.core.model.ModelViews.VersionView;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the node unloads without an operator: an adapter whose load failed ambiguously (it may have
 * landed), and a retired stable once its retention ends, also when nothing else happens to the agent
 * and after a restart; and what the view promises about restoring a retired version.
 */
class DeploymentCleanupTest {

  private static final BaseModel BASE = new BaseModel("openai-compatible", "http://base:9000/v1", "qwen2.5-7b-instruct");

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("DeploymentCleanupTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** vLLM whose loads land but whose answers never arrive in time (a load slower than the timeout). */
  static final class SlowToAnswerServer extends DeploymentTest.InMemoryModelServer {
    volatile boolean answerLate;
    /** Unloads that never answer: the node dies before they do. */
    volatile boolean hangUnloads;

    @Override
    public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
      CompletionStage<Void> landed = super.deploy(target, artifact);
      return answerLate
          ? CompletableFuture.failedFuture(new ServingException("request timed out", true))
          : landed;
    }

    @Override
    public CompletionStage<Void> undeploy(ServingTarget target) {
      return hangUnloads ? new CompletableFuture<>() : super.undeploy(target);
    }
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  private void startEntity(DeploymentTest.InMemoryModelServer server, String modelUpdate) {
    String agent = "agent-" + UUID.randomUUID().toString().substring(0, 8);
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training(modelUpdate));
    Serving serving = new Serving(server, Optional.of(BASE), Duration.ofMillis(10), Duration.ofMillis(50), 2);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(), ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private <R> R run(Function<ActorRef<R>, Command> f) {
    return kit.<R>runCommand(f).reply();
  }

  private void registerCandidate(String version) {
    this.<TransitionReply>run(r -> new ModelVersion.RegisterCandidate(version, "file:///ckpt/" + version,
        "file:///ckpt/" + version, "job-" + version, Map.of("task-success-rate", 0.9), r));
  }

  private VersionView version(String v) {
    ModelsView view = run(ModelVersion.Get::new);
    return view.versions().stream().filter(x -> x.version().equals(v)).findFirst().orElseThrow();
  }

  private void awaitDeployment(String v, Deployments.Status expected) {
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(expected, version(v).deployment().status());
      return null;
    });
  }

  private void awaitState(String v, VersionState expected) {
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(expected, version(v).state());
      return null;
    });
  }

  /** Defect: the load timed out on every attempt, landed anyway, and stayed loaded forever. */
  @Test
  void aLoadThatTimedOutButLandedIsUnloaded() {
    SlowToAnswerServer server = new SlowToAnswerServer();
    server.answerLate = true;
    startEntity(server, "");
    registerCandidate("v1");
    awaitState("v1", VersionState.DEPLOY_FAILED);
    String served = version("v1").deployment().servedModel();
    awaitDeployment("v1", Deployments.Status.UNDEPLOYED);
    assertFalse(server.loaded.containsKey(served), "the adapter that landed is unloaded");
    assertEquals(VersionState.DEPLOY_FAILED, version("v1").state());

    // The operator promotes again once the server answers in time: it loads and canaries.
    server.answerLate = false;
    VersionStatus again = assertInstanceOf(VersionStatus.class,
        this.<TransitionReply>run(r -> new ModelVersion.Promote("v1", r)));
    assertEquals(VersionState.DEPLOYING, again.state());
    awaitState("v1", VersionState.CANARY);
    assertTrue(server.loaded.containsKey(served));
  }

  /** Defect: the unload intent of a failed load is resumed after a restart like any other. */
  @Test
  void theUnloadOfAFailedLoadResumesAfterARestart() {
    SlowToAnswerServer server = new SlowToAnswerServer();
    server.answerLate = true;
    server.hangUnloads = true;
    startEntity(server, "");
    registerCandidate("v1");
    awaitState("v1", VersionState.DEPLOY_FAILED);
    String served = version("v1").deployment().servedModel();
    assertEquals(Deployments.Status.UNDEPLOYING, version("v1").deployment().status());
    server.hangUnloads = false;
    kit.restart();
    awaitDeployment("v1", Deployments.Status.UNDEPLOYED);
    assertFalse(server.loaded.containsKey(served));
  }

  /** Defect: a retired stable stayed loaded past its retention until the agent's next transition. */
  @Test
  void aRetiredStableIsUnloadedWhenItsRetentionEnds() {
    DeploymentTest.InMemoryModelServer server = new DeploymentTest.InMemoryModelServer();
    startEntity(server, "retain-previous = 2s");
    promoteToStable("v1");
    promoteToStable("v2");
    String served = version("v1").deployment().servedModel();
    assertEquals(VersionState.RETIRED, version("v1").state());
    assertTrue(server.loaded.containsKey(served), "restorable: still loaded");
    clock.advance(Duration.ofSeconds(3)); // nothing else happens to the agent
    awaitDeployment("v1", Deployments.Status.UNDEPLOYED);
    assertFalse(server.loaded.containsKey(served));
    assertNull(version("v1").retainedUntil(), "no restore promised once it cannot be restored");
  }

  /** Defect: a retention that ended while the node was down unloaded nothing after the restart. */
  @Test
  void aRetentionThatEndedWhileDownIsUnloadedAfterTheRestart() {
    DeploymentTest.InMemoryModelServer server = new DeploymentTest.InMemoryModelServer();
    startEntity(server, "retain-previous = 1h");
    promoteToStable("v1");
    promoteToStable("v2");
    String served = version("v1").deployment().servedModel();
    assertNotNull(version("v1").retainedUntil());
    clock.advance(Duration.ofHours(2));
    kit.restart();
    awaitDeployment("v1", Deployments.Status.UNDEPLOYED);
    assertFalse(server.loaded.containsKey(served));
  }

  /** Defect: retainedUntil was shown on a RETIRED version a rollback would refuse to restore. */
  @Test
  void retainedUntilIsShownOnlyForTheVersionARollbackWouldRestore() {
    DeploymentTest.InMemoryModelServer server = new DeploymentTest.InMemoryModelServer();
    startEntity(server, "");
    promoteToStable("v1");
    promoteToStable("v2");
    promoteToStable("v3");
    awaitDeployment("v1", Deployments.Status.UNDEPLOYED);
    assertNull(version("v1").retainedUntil(), "v1's adapter is gone: a rollback would not restore it");
    assertNotNull(version("v2").retainedUntil(), "v2 is what a rollback of v3 restores");
    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(r -> new ModelVersion.Rollback("v3", "t", r)));
    assertEquals(VersionState.RETIRED, version("v1").state());
    assertNull(version("v1").retainedUntil());
    assertInstanceOf(Failure.class, this.<TransitionReply>run(r -> new ModelVersion.Rollback("v2", "t", r)),
        "the rollback the view no longer promises is refused");
  }

  private void promoteToStable(String v) {
    registerCandidate(v);
    awaitState(v, VersionState.CANARY);
    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(r -> new ModelVersion.Promote(v, r)));
    awaitState(v, VersionState.STABLE);
    clock.advance(Duration.ofSeconds(1));
  }
}
