package io.otl.persistence.golden;

import io.otl.core.testing.ManualClock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.otl.core.model.Deployments;
import io.otl.core.model.ModelSettings;
import io.otl.core.model.ModelVersion;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.japi.function.Function;

/**
 * Drives a ModelVersion through deployment for the golden journal (added for v0.2.0): v0 from the
 * base model, a candidate deployed and confirmed (its canary starts), rolled back and unloaded, and
 * a candidate whose load is refused. The persistence module cannot reach cluster-config's
 * {@code vllm-lora} backend (cluster-config depends on persistence), so a small in-memory backend
 * under the same name answers the calls: the generator only needs the events the entity writes
 * around real calls, and those do not depend on how the backend serves.
 */
final class GoldenDeployments {
  static final String AGENT = GoldenJournalGenerator.AGENT + "-deploy";

  private final ActorSystem<?> system;
  private final ManualClock clock;

  GoldenDeployments(ActorSystem<?> system, ManualClock clock) {
    this.system = system;
    this.clock = clock;
  }

  /** Runs the scenario; the persistence id of the entity it wrote. */
  String run(ModelSettings settings) throws Exception {
    Serving serving = new Serving(new AdapterServer(), Optional.empty(), Duration.ofMillis(10),
        Duration.ofMillis(50), 2).withBaseModel(new BaseModel("openai", "http://base-llm:8000/v1", "qwen2.5-7b"));
    ActorRef<ModelVersion.Command> m = system.systemActorOf(ModelVersion.create(AGENT, settings, clock, serving),
        "mv-deploy", Props.empty());
    Map<String, Double> offline =
        new TreeMap<>(Map.of("task-success-rate", 0.84, "user-satisfaction", 0.71, "response-latency", 880.0));
    // the first command registers v0 first; v1 then deploys by itself (auto-deploy) and canaries against v0
    transition(m, r -> new ModelVersion.RegisterCandidate("v1", "file:///ckpt/v1", "http://llm-v1:8000/v1",
        "job-1-" + AGENT, offline, r));
    awaitDeployment(m, "v1", Deployments.Status.CONFIRMED);
    clock.advance(Duration.ofMinutes(1));
    transition(m, r -> new ModelVersion.Rollback("v1", "operator: answers too long", r));
    awaitDeployment(m, "v1", Deployments.Status.UNDEPLOYED);
    clock.advance(Duration.ofMinutes(1));
    transition(m, r -> new ModelVersion.RegisterCandidate("v2", AdapterServer.MISSING, "http://llm-v2:8000/v1",
        "job-2-" + AGENT, offline, r));
    // Since commit 1a1b6a0f a load that failed is unloaded (it may have landed on vLLM): FAILED, then UNDEPLOYED.
    awaitDeployment(m, "v2", Deployments.Status.UNDEPLOYED);
    return ModelVersion.ENTITY_TYPE_KEY.name() + "|" + AGENT;
  }

  /** Waits (the backend answers asynchronously) until the version's deployment reaches {@code status}. */
  private void awaitDeployment(ActorRef<ModelVersion.Command> m, String version, Deployments.Status status)
      throws Exception {
    Deployments.Status seen = null;
    for (int i = 0; i < 600 && seen != status; i++) {
      if (i > 0) Thread.sleep(50);
      ModelVersion.ModelsView view = ask(m, ModelVersion.Get::new);
      seen = view.versions().stream().filter(v -> v.version().equals(version)).findFirst()
          .map(v -> v.deployment() == null ? null : v.deployment().status()).orElse(null);
    }
    assertEquals(status, seen, "deployment of " + version);
  }

  private void transition(ActorRef<ModelVersion.Command> m,
      Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command> cmd) throws Exception {
    ModelVersion.TransitionReply r = ask(m, cmd);
    assertInstanceOf(ModelVersion.VersionStatus.class, r, () -> "model version refused: " + r);
  }

  private <Q, R> R ask(ActorRef<Q> to, Function<ActorRef<R>, Q> cmd) throws Exception {
    return AskPattern.ask(to, cmd, Duration.ofSeconds(20), system.scheduler())
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /**
   * A vLLM server loading LoRA adapters, as the {@code vllm-lora} backend addresses it: one shared
   * endpoint, one served name per agent and version. An adapter path that does not exist is refused
   * for good, as vLLM refuses it.
   */
  static final class AdapterServer implements ServingBackend {
    static final String MISSING = "file:///ckpt/missing-adapter";

    @Override
    public String name() {
      return "vllm-lora";
    }

    @Override
    public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
      return new ServingTarget("http://vllm:8000/v1", agentId + "-" + version);
    }

    @Override
    public boolean callsServer() {
      return true;
    }

    @Override
    public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
      if (MISSING.equals(artifact)) {
        return CompletableFuture.failedFuture(new ServingException(
            "vLLM refused to load " + target.servedModel() + ": adapter path not found", false));
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> undeploy(ServingTarget target) {
      return CompletableFuture.completedFuture(null);
    }
  }
}
