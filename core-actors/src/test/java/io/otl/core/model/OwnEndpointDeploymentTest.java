package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.DeploymentTest.InMemoryModelServer;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
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
import io.otl.core.serving.StaticServing;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A version registered by hand with its own endpoint, under a backend that loads adapters
 * (docs/serving.md "Versions registered by hand"): it is served at that endpoint with no load call,
 * its deployment confirmed in the write that registers it, and no unload call when it is rolled
 * back. A local adapter directory registered by hand is still loaded, as a job's checkpoint is,
 * unless the registration names its {@code servedModel}.
 */
class OwnEndpointDeploymentTest {

  private static final BaseModel BASE = new BaseModel("openai-compatible", "http://base:9000/v1", "qwen2.5-7b-instruct");
  private static final String OWN = "http://127.0.0.1:8265/v1";

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("OwnEndpointDeploymentTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private final InMemoryModelServer server = new InMemoryModelServer();
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  private void startEntity(StaticServing ownEndpoints) {
    String agent = "agent-" + UUID.randomUUID().toString().substring(0, 8);
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training("canary-ratio = 0.5"));
    Serving serving = new Serving(server, Optional.of(BASE), Duration.ofMillis(10), Duration.ofMillis(50), 3,
        ownEndpoints);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(), ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private <R> R run(Function<ActorRef<R>, Command> f) {
    return kit.<R>runCommand(f).reply();
  }

  private VersionView version(String v) {
    ModelsView view = run(ModelVersion.Get::new);
    return view.versions().stream().filter(x -> x.version().equals(v)).findFirst().orElseThrow();
  }

  private VersionStatus registerByHand(String artifact) {
    return assertInstanceOf(VersionStatus.class,
        this.<TransitionReply>run(r -> new ModelVersion.RegisterManual("v1", artifact, OWN, r)));
  }

  /** A session the candidate serves (the canary has half of them). */
  private RouteDecision candidateRoute() {
    for (int i = 0; i < 100; i++) {
      String session = "s-" + i;
      RouteDecision d = assertInstanceOf(RouteDecision.class,
          this.<RouteReply>run(r -> new ModelVersion.Route(session, r)));
      if (d.version().equals("v1")) return d;
    }
    throw new AssertionError("no session of 100 went to the canary at 50 %");
  }

  @Test
  void aHandRegisteredModelIdIsServedAtItsOwnEndpointWithoutALoadCall() {
    startEntity(StaticServing.INSTANCE);
    VersionStatus status = registerByHand("my-org/my-lora");
    assertEquals(VersionState.CANARY, status.state(), "confirmed in the write that registers it");
    VersionView v1 = version("v1");
    assertEquals("static", v1.deployment().backend());
    assertEquals(Deployments.Status.CONFIRMED, v1.deployment().status());
    assertEquals(OWN, v1.deployment().endpoint());
    assertNull(v1.deployment().servedModel(), "the agent's own model name goes upstream");
    assertTrue(v1.history().stream().anyMatch(h -> h.state() == VersionState.DEPLOYING
        && h.reason().contains("deploying to static as the agent's own model name")), v1.history().toString());
    assertEquals(0, server.loadCalls.get(), "nothing is loaded");

    RouteDecision d = candidateRoute();
    assertEquals(OWN, d.endpoint());
    assertNull(d.servedModel());

    // A restarted entity routes the same way and calls nothing (no reload of a static version).
    kit.restart();
    assertEquals(OWN, candidateRoute().endpoint());
    assertEquals(0, server.loadCalls.get());

    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(r -> new ModelVersion.Rollback("v1", "test", r)));
    assertEquals(VersionState.ROLLED_BACK, version("v1").state());
    assertEquals(0, server.unloadCalls.get(), "nothing to unload");
    assertEquals("v0", assertInstanceOf(RouteDecision.class,
        this.<RouteReply>run(r -> new ModelVersion.Route("s-1", r))).version());
  }

  @Test
  void theStaticServedModelNameIsSentUpstreamWhenConfigured() {
    startEntity(new StaticServing("served-by-hand"));
    registerByHand("my-org/my-lora");
    assertEquals("served-by-hand", version("v1").deployment().servedModel());
    assertEquals("served-by-hand", candidateRoute().servedModel());
  }

  @Test
  void aServedModelNamedAtRegistrationIsSentUpstreamAndServesEvenALocalDirectoryAtItsEndpoint() {
    startEntity(new StaticServing("served-by-config"));
    VersionStatus status = assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(
        r -> new ModelVersion.RegisterManual("v1", "file:///ckpt/v1", OWN, "my-org/my-lora", r)));
    assertEquals(VersionState.CANARY, status.state(), "a named model is served where it is, not loaded");
    assertEquals("my-org/my-lora", version("v1").deployment().servedModel());
    assertEquals("static", version("v1").deployment().backend());
    assertEquals("my-org/my-lora", candidateRoute().servedModel());
    assertEquals(0, server.loadCalls.get());
    kit.restart();
    assertEquals("my-org/my-lora", candidateRoute().servedModel(), "replayed from the registration");
  }

  @Test
  void anInvalidServedModelIsRefusedAndNothingIsWritten() {
    startEntity(StaticServing.INSTANCE);
    for (String bad : new String[] {"", "two words", "x".repeat(257), "tab\there"}) {
      ModelProtocol.Failure f = assertInstanceOf(ModelProtocol.Failure.class, this.<TransitionReply>run(
          r -> new ModelVersion.RegisterManual("v1", "my-org/my-lora", OWN, bad, r)));
      assertEquals(ModelProtocol.ErrorCode.INVALID_INPUT, f.code());
      assertTrue(f.message().startsWith("servedModel: "), f.message());
    }
    assertTrue(version("v0") != null);
    assertTrue(((ModelsView) run(ModelVersion.Get::new)).versions().stream().noneMatch(v -> v.version().equals("v1")));
  }

  /** Under the static backend (no deployment records) a route still sends the name the version was given. */
  @Test
  void theStaticBackendSendsTheNamedServedModelToo() {
    String agent = "agent-" + UUID.randomUUID().toString().substring(0, 8);
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training("canary-ratio = 0.5"));
    Serving serving = new Serving(new StaticServing("served-by-config"), Optional.of(BASE), Duration.ofMillis(10),
        Duration.ofMillis(50), 3);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(), ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(
        r -> new ModelVersion.RegisterManual("v1", "my-org/my-lora", OWN, "my-org/my-lora", r)));
    assertEquals("my-org/my-lora", candidateRoute().servedModel());
    assertEquals(OWN, candidateRoute().endpoint());
  }

  @Test
  void aHandRegisteredLocalAdapterDirectoryIsStillLoaded() {
    startEntity(StaticServing.INSTANCE);
    VersionStatus status = registerByHand("file:///ckpt/v1/huggingface");
    assertEquals(VersionState.DEPLOYING, status.state());
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(VersionState.CANARY, version("v1").state());
      return null;
    });
    assertEquals("vllm-lora", version("v1").deployment().backend());
    assertEquals(1, server.loadCalls.get());
    assertEquals("http://vllm:8000/v1", candidateRoute().endpoint());
  }

  /**
   * Trial t85: {@code file:} alone was registered (201 DEPLOYING) and loaded with an empty
   * {@code lora_path}, which vLLM refuses (400 "Both 'lora_name' and 'lora_path' must be provided."):
   * the version ended DEPLOY_FAILED on input the registration should have refused. A relative path
   * and a host in the URI were sent as relative paths the same way.
   */
  @Test
  void anAdapterDirectoryThatIsNotAnAbsolutePathIsRefusedAndNothingIsLoaded() {
    startEntity(StaticServing.INSTANCE);
    for (String bad : new String[] {"file:", "file:ckpt/v1", "file://host/ckpt/v1", "file:////ckpt", "file:///", "/"}) {
      ModelProtocol.Failure f = assertInstanceOf(ModelProtocol.Failure.class, this.<TransitionReply>run(
          r -> new ModelVersion.RegisterManual("v1", bad, OWN, r)));
      assertEquals(ModelProtocol.ErrorCode.INVALID_INPUT, f.code(), bad);
      assertTrue(f.message().startsWith("artifact: "), f.message());
    }
    assertTrue(((ModelsView) run(ModelVersion.Get::new)).versions().stream().noneMatch(v -> v.version().equals("v1")));
    assertEquals(0, server.loadCalls.get());
    // the same text with a served model name is a model another server serves: nothing is loaded
    assertInstanceOf(VersionStatus.class, this.<TransitionReply>run(
        r -> new ModelVersion.RegisterManual("v1", "file:", OWN, "my-org/my-lora", r)));
    registerByHandAs("v2", "file:/ckpt/v2");
  }

  private VersionStatus registerByHandAs(String version, String artifact) {
    return assertInstanceOf(VersionStatus.class,
        this.<TransitionReply>run(r -> new ModelVersion.RegisterManual(version, artifact, OWN, r)));
  }
}
