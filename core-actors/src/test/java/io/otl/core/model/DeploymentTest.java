package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.RouteDecision;
import io.otl.core.model.ModelProtocol.RouteReply;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelViews.ModelsView;
import io.otl.core.model.ModelViews.VersionView;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import io.otl.core.serving.StaticServing;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deployment in the ModelVersion state machine (design §3.3): v0 from the base model, READY →
 * DEPLOYING → CANARY, DEPLOY_FAILED, retries, a crash between intent and confirmation, undeploy on
 * rollback, served names never reused. The serving backend is an in-memory model server with
 * vLLM's load/unload semantics (the HTTP backend itself is tested against the simulator in
 * cluster-config).
 */
class DeploymentTest {

  private static final BaseModel BASE = new BaseModel("openai-compatible", "http://base:9000/v1", "qwen2.5-7b-instruct");

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("DeploymentTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** A model server in memory that answers like vLLM: a second load of a name is refused. */
  static class InMemoryModelServer implements ServingBackend {
    final Map<String, String> loaded = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> acceptedLoads = new ConcurrentHashMap<>();
    final AtomicInteger loadCalls = new AtomicInteger();
    final AtomicInteger unloadCalls = new AtomicInteger();
    volatile int retryableFailures;
    volatile String refusal;
    volatile boolean loseNextReply;
    volatile boolean sameNameForSameArtifact;

    @Override
    public String name() {
      return "vllm-lora";
    }

    @Override
    public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
      String hash = Integer.toHexString(artifact.hashCode());
      return new ServingTarget("http://vllm:8000/v1",
          sameNameForSameArtifact ? "adapter-" + hash : agentId + "-" + version + "-" + hash);
    }

    @Override
    public boolean callsServer() {
      return true;
    }

    @Override
    public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
      loadCalls.incrementAndGet();
      if (refusal != null) {
        return CompletableFuture.failedFuture(new ServingException(refusal, false));
      }
      if (retryableFailures > 0) {
        retryableFailures--;
        return CompletableFuture.failedFuture(new ServingException("503 busy", true));
      }
      if (loaded.putIfAbsent(target.servedModel(), artifact) == null) {
        acceptedLoads.computeIfAbsent(target.servedModel(), k -> new AtomicInteger()).incrementAndGet();
      } // else: vLLM says "has already been loaded", which the backend takes as success
      if (loseNextReply) {
        loseNextReply = false;
        return new CompletableFuture<>(); // the node dies before the answer arrives
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> undeploy(ServingTarget target) {
      unloadCalls.incrementAndGet();
      loaded.remove(target.servedModel());
      return CompletableFuture.completedFuture(null);
    }
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;
  private String agent;

  private void startEntity(ServingBackend backend, int maxAttempts) {
    startEntity(backend, maxAttempts, "");
  }

  private void startEntity(ServingBackend backend, int maxAttempts, String modelUpdate) {
    agent = "agent-" + UUID.randomUUID().toString().substring(0, 8);
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training(modelUpdate));
    Serving serving = new Serving(backend, Optional.of(BASE), Duration.ofMillis(10), Duration.ofMillis(50), maxAttempts);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(), ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private <R> R run(Function<ActorRef<R>, Command> f) {
    return kit.<R>runCommand(f).reply();
  }

  private TransitionReply registerCandidate(String version) {
    return run(r -> new ModelVersion.RegisterCandidate(version, "file:///ckpt/" + version, "file:///ckpt/" + version,
        "job-" + version, Map.of("task-success-rate", 0.9), r));
  }

  private VersionView version(String v) {
    ModelsView view = run(ModelVersion.Get::new);
    return view.versions().stream().filter(x -> x.version().equals(v)).findFirst().orElseThrow();
  }

  private void awaitState(String v, VersionState expected) {
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(expected, version(v).state());
      return null;
    });
  }

  private long countEvents(Class<?> type) {
    return kit.persistenceTestKit().persistedInStorage(ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agent)
        .stream().filter(type::isInstance).count();
  }

  @Test
  void baseModelIsV0StableFromTheStartAndRegisteredOnce() {
    startEntity(new StaticServing(null), 3);
    ModelsView view = run(ModelVersion.Get::new);
    assertEquals("v0", view.stable());
    VersionView v0 = version("v0");
    assertEquals(VersionState.STABLE, v0.state());
    assertEquals(1.0, v0.ratio());
    assertEquals("qwen2.5-7b-instruct", v0.deployment().servedModel());
    assertEquals("http://base:9000/v1", v0.deployment().endpoint());
    RouteDecision route = assertInstanceOf(RouteDecision.class, this.<RouteReply>run(r -> new ModelVersion.Route("s-1", r)));
    assertEquals("v0", route.version());
    assertEquals("http://base:9000/v1", route.endpoint());
    assertEquals("qwen2.5-7b-instruct", route.servedModel());
    kit.restart();
    run(ModelVersion.Get::new);
    assertEquals(1, countEvents(Deployments.BaseModelRegistered.class), "v0 is registered once per agent");
  }

  /** GET /v1/models of an agent before its first version: v0 as it will be registered, nothing written. */
  @Test
  void aReadShowsV0WithoutRegisteringIt() {
    startEntity(new StaticServing(null), 3);
    ModelsView view = run(ModelVersion.Get::new);
    assertEquals("v0", view.stable());
    VersionView v0 = version("v0");
    assertEquals(VersionState.STABLE, v0.state());
    assertEquals(1.0, v0.ratio());
    assertEquals(Deployments.Status.CONFIRMED, v0.deployment().status());
    assertEquals("http://base:9000/v1", v0.deployment().endpoint());
    assertEquals(0, kit.persistenceTestKit().persistedInStorage(ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agent)
        .size(), "a read writes nothing");
    assertEquals(view.versions(), ModelVersion.baseModelView(agent, BASE, clock.instant()).versions(),
        "the view the HTTP API shows for an agent without an entity is the same");
  }

  @Test
  void firstFineTuneCanariesAgainstV0InsteadOfBecomingStable() {
    startEntity(new StaticServing(null), 3);
    VersionStatus status = assertInstanceOf(VersionStatus.class, registerCandidate("v1"));
    assertEquals(VersionState.CANARY, status.state());
    ModelsView view = run(ModelVersion.Get::new);
    assertEquals("v0", view.stable());
    assertEquals("v1", view.candidate());
  }

  @Test
  void deployingVersionServesNothingUntilTheLoadIsConfirmed() {
    InMemoryModelServer server = new InMemoryModelServer();
    server.loseNextReply = true; // the load lands, its answer does not: the version stays DEPLOYING
    startEntity(server, 3);
    VersionStatus status = assertInstanceOf(VersionStatus.class, registerCandidate("v1"));
    assertEquals(VersionState.DEPLOYING, status.state());
    assertEquals(0.0, status.ratio());
    for (int i = 0; i < 200; i++) {
      String session = "s-" + i;
      RouteDecision d = assertInstanceOf(RouteDecision.class, this.<RouteReply>run(r -> new ModelVersion.Route(session, r)));
      assertEquals("v0", d.version(), "no session goes to a version whose deployment is unconfirmed");
    }
    // A promote or rollback right after the 202 meets DEPLOYING: 409, saying when to ask again.
    for (String verb : new String[] {"promote", "roll back"}) {
      Failure f = assertInstanceOf(Failure.class, verb.equals("promote")
          ? this.<TransitionReply>run(r -> new ModelVersion.Promote("v1", r))
          : this.<TransitionReply>run(r -> new ModelVersion.Rollback("v1", "too early", r)));
      assertEquals(ErrorCode.INVALID_TRANSITION, f.code());
      assertEquals("cannot " + verb + " v1: it is DEPLOYING (the serving backend is loading it; it becomes CANARY,"
          + " or DEPLOY_FAILED, once the load is answered: ask to " + verb + " again then)", f.message());
    }
    assertEquals(VersionState.DEPLOYING, version("v1").state(), "a refused command changes nothing");
  }

  @Test
  void confirmedDeploymentStartsTheCanaryUnderItsServedName() {
    InMemoryModelServer server = new InMemoryModelServer();
    startEntity(server, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.CANARY);
    String served = version("v1").deployment().servedModel();
    assertTrue(server.loaded.containsKey(served));
    boolean sawCandidate = false;
    for (int i = 0; i < 400 && !sawCandidate; i++) {
      String session = "s-" + i;
      RouteDecision d = assertInstanceOf(RouteDecision.class, this.<RouteReply>run(r -> new ModelVersion.Route(session, r)));
      if (d.version().equals("v1")) {
        sawCandidate = true;
        assertEquals(served, d.servedModel());
        assertEquals("http://vllm:8000/v1", d.endpoint());
      }
    }
    assertTrue(sawCandidate, "about 5 % of 400 sessions go to the canary");
  }

  @Test
  void refusedDeploymentEndsInDeployFailedWithoutTraffic() {
    InMemoryModelServer server = new InMemoryModelServer();
    server.refusal = "No adapter found for /ckpt/v1";
    startEntity(server, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.DEPLOY_FAILED);
    assertEquals(1, server.loadCalls.get(), "a refusal is final: no retry");
    assertEquals(0.0, version("v1").ratio());
    assertEquals("v0", ((ModelsView) run(ModelVersion.Get::new)).stable());

    server.refusal = null; // the operator fixed the adapter path and promotes again
    VersionStatus retried = assertInstanceOf(VersionStatus.class,
        this.<TransitionReply>run(r -> new ModelVersion.Promote("v1", r)));
    assertEquals(VersionState.DEPLOYING, retried.state());
    awaitState("v1", VersionState.CANARY);
  }

  @Test
  void retryableFailuresAreRetriedWithBackoffThenGiveUp() {
    InMemoryModelServer server = new InMemoryModelServer();
    server.retryableFailures = 2;
    startEntity(server, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.CANARY);
    assertEquals(3, server.loadCalls.get());

    InMemoryModelServer down = new InMemoryModelServer();
    down.retryableFailures = 100;
    startEntity(down, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.DEPLOY_FAILED);
    assertEquals(3, down.loadCalls.get(), "max-attempts calls, then DEPLOY_FAILED");
  }

  @Test
  void crashBetweenIntentAndConfirmationResumesWithoutLoadingTwice() {
    InMemoryModelServer server = new InMemoryModelServer();
    server.loseNextReply = true;
    startEntity(server, 3);
    registerCandidate("v1");
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(1, server.loadCalls.get());
      return null;
    });
    assertEquals(VersionState.DEPLOYING, version("v1").state());
    kit.restart(); // recovery finds the intent without an outcome and calls again
    awaitState("v1", VersionState.CANARY);
    String served = version("v1").deployment().servedModel();
    assertEquals(2, server.loadCalls.get());
    assertEquals(1, server.acceptedLoads.get(served).get(), "the weights were loaded once");
    assertEquals(1, countEvents(Deployments.DeploymentRequested.class));
    assertEquals(1, countEvents(Deployments.DeploymentConfirmed.class));
  }

  @Test
  void rollbackUnloadsTheCandidate() {
    InMemoryModelServer server = new InMemoryModelServer();
    startEntity(server, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.CANARY);
    String served = version("v1").deployment().servedModel();
    this.<TransitionReply>run(r -> new ModelVersion.Rollback("v1", "test", r));
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(Deployments.Status.UNDEPLOYED, version("v1").deployment().status());
      return null;
    });
    assertTrue(!server.loaded.containsKey(served), "the adapter is unloaded");
    assertEquals(1, countEvents(Deployments.UndeployRequested.class));
    assertEquals(1, countEvents(Deployments.Undeployed.class));
  }

  @Test
  void automaticRollbackOfAWorseAdapterUnloadsItAndRoutesEverythingToV0() {
    InMemoryModelServer server = new InMemoryModelServer();
    startEntity(server, 3, "min-samples-per-step = 30, evaluation-metrics = [task-success-rate]");
    registerCandidate("v1");
    awaitState("v1", VersionState.CANARY);
    String served = version("v1").deployment().servedModel();
    // Outcomes arrive at the canary's split (19 stable per candidate at 5 %): a 1:1 feed would be a
    // sample-ratio mismatch, which pauses the rollout instead of testing it.
    for (int i = 0; i < 200 && kit.getState() instanceof ModelVersion.RollingOut; i++) {
      for (int k = 0; k < 19; k++) {
        String s0 = "stable-" + i + "-" + k;
        this.<ModelVersion.OutcomeReply>run(r -> new ModelVersion.RecordOutcome(s0, "v0", true, null, 0, 0, null, r));
      }
      String s1 = "cand-" + i;
      boolean ok = i % 2 == 0; // v1 succeeds half as often as v0
      this.<ModelVersion.OutcomeReply>run(r -> new ModelVersion.RecordOutcome(s1, "v1", ok, null, 0, 0, null, r));
    }
    assertEquals(VersionState.ROLLED_BACK, version("v1").state());
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(Deployments.Status.UNDEPLOYED, version("v1").deployment().status());
      return null;
    });
    assertTrue(!server.loaded.containsKey(served), "the worse adapter is unloaded");
    for (int i = 0; i < 100; i++) {
      String session = "after-" + i;
      assertEquals("v0", ((RouteDecision) this.<RouteReply>run(r -> new ModelVersion.Route(session, r))).version());
    }
  }

  @Test
  void servedNameIsNeverReusedForOtherWeights() {
    InMemoryModelServer server = new InMemoryModelServer();
    startEntity(server, 3);
    registerCandidate("v1");
    awaitState("v1", VersionState.CANARY);
    this.<TransitionReply>run(r -> new ModelVersion.Rollback("v1", "test", r));
    registerCandidate("v2");
    awaitState("v2", VersionState.CANARY);
    assertNotEquals(version("v1").deployment().servedModel(), version("v2").deployment().servedModel());

    // A backend that would name two versions alike: the entity refuses to load the second.
    InMemoryModelServer careless = new InMemoryModelServer();
    careless.sameNameForSameArtifact = true;
    startEntity(careless, 3);
    this.<TransitionReply>run(r -> new ModelVersion.RegisterCandidate("v1", "file:///ckpt/same", "e", "job-1", Map.of("task-success-rate", 0.9), r));
    awaitState("v1", VersionState.CANARY);
    this.<TransitionReply>run(r -> new ModelVersion.Rollback("v1", "test", r));
    this.<TransitionReply>run(r -> new ModelVersion.RegisterCandidate("v2", "file:///ckpt/same", "e", "job-2", Map.of("task-success-rate", 0.9), r));
    awaitState("v2", VersionState.DEPLOY_FAILED);
    assertEquals(1, careless.loadCalls.get(), "no load call under a name already used");
  }

  /**
   * Trial t85: v1, v2, v3 stable in turn (v1 unloaded when v3 retired v2); rolling back v3
   * restored v2, and rolling back v2 then restored v1, whose adapter was gone: v1 STABLE with an
   * UNDEPLOYED deployment, every call of the agent a 502 and nothing loading it again. A previous
   * stable that was unloaded is not restorable: the rollback is a 409 and v2 keeps serving.
   */
  @Test
  void aPreviousStableWhoseAdapterWasUnloadedIsNotRestored() {
    InMemoryModelServer server = new InMemoryModelServer();
    startEntity(server, 3);
    for (String v : new String[] {"v1", "v2", "v3"}) {
      registerCandidate(v);
      awaitState(v, VersionState.CANARY);
      assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(r -> new ModelVersion.Promote(v, r)));
      awaitState(v, VersionState.STABLE);
      clock.advance(Duration.ofMinutes(1));
    }
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(Deployments.Status.UNDEPLOYED, version("v1").deployment().status());
      return null;
    });
    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(r -> new ModelVersion.Rollback("v3", "test", r)));
    assertEquals(VersionState.STABLE, version("v2").state());
    Failure f = assertInstanceOf(Failure.class,
        this.<TransitionReply>run(r -> new ModelVersion.Rollback("v2", "test", r)));
    assertEquals(ErrorCode.INVALID_TRANSITION, f.code());
    assertEquals(VersionState.STABLE, version("v2").state());
    assertEquals(VersionState.RETIRED, version("v1").state());
    assertTrue(server.loaded.containsKey(version("v2").deployment().servedModel()), "the stable serves");
  }
}
