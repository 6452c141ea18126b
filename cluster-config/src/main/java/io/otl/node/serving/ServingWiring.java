package io.otl.node.serving;

import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.StaticServing;
import io.otl.node.config.ModelSection;
import io.otl.node.simulator.TrinitySimulator;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds what ModelVersion deploys with from {@code agentscope.training.serving} and the
 * AgentScope {@code model} section. The base model (v0) is, in this order: the {@code model}
 * section; the vLLM server's base model ({@code training-runner.base-model}) with
 * {@code vllm-lora}; the simulator's model face on the embedded default; else none (an agent's
 * first version then becomes stable directly, and a WARN says so).
 */
public final class ServingWiring {

  private static final Logger log = LoggerFactory.getLogger(ServingWiring.class);

  private ServingWiring() {}

  /**
   * @param settings {@code agentscope.training.serving}, read at start-up
   * @param model the AgentScope {@code model} section, if the file has one
   * @param simulator the simulator started with the node, if any
   */
  public static Serving serving(ServingSettings settings, Optional<ModelSection> model,
      Optional<TrinitySimulator> simulator) {
    String backendName = settings.backendName(simulator.isPresent());
    String baseModelName = settings.baseModel();
    ServingBackend backend;
    // A version registered by hand at its own endpoint is served as the static backend serves it.
    StaticServing ownEndpoints = new StaticServing(settings.staticServedModel());
    String vllmUrl = settings.vllmUrl();
    if ("vllm-lora".equals(backendName)) {
      if (vllmUrl.isBlank()) {
        vllmUrl = simulator.map(TrinitySimulator::baseUrl).orElseThrow(() -> new IllegalArgumentException(
            "agentscope.training.serving.vllm.url must be set when serving.backend = vllm-lora"));
      }
      backend = new VllmLoraServing(vllmUrl, settings.vllmApiKey(), settings.vllmRequestTimeout());
    } else {
      backend = ownEndpoints;
    }
    Optional<BaseModel> base = model
        .map(m -> new BaseModel(m.provider(), m.baseUrl(), m.modelName()));
    if (base.isEmpty() && "vllm-lora".equals(backendName)) {
      base = Optional.of(new BaseModel("vllm", backend.target("", "", "", "").endpoint(), baseModelName));
    }
    if (base.isEmpty() && simulator.isPresent()) {
      base = Optional.of(new BaseModel("simulator", simulator.get().modelServerUrl(), simulator.get().baseModel()));
    }
    Serving serving = new Serving(backend, base, settings.retryMinBackoff(), settings.retryMaxBackoff(),
        settings.retryMaxAttempts(), ownEndpoints);
    if (base.isPresent()) {
      log.info("serving backend={} base model v0={} at {}", backend.name(), base.get().model(), base.get().endpoint());
    } else {
      log.warn("serving backend={}: no base model (no agentscope.model section, no simulator): an agent's "
          + "first version becomes STABLE without a canary", backend.name());
    }
    return serving;
  }

  /**
   * An agent whose {@code agents.<agentId>.base-model} differs from the node's base model trains its
   * jobs from its own, but its v0 (what its first fine-tune canaries against) is the node's, one
   * base model for every agent; with {@code vllm-lora} its adapters load onto the vLLM server's base
   * model, where adapters of another base do not fit. Said once at start (trial t39 found v0 serving
   * the 7b while the agent's jobs trained the 1.5b, with no word of it).
   */
  public static void warnOfOtherBaseModels(Serving serving, io.otl.node.config.TrainingSettings training) {
    // An agent section without base-model inherits the node's training-runner.base-model: not the agent's own.
    String nodes = training.defaults().policy().baseModel();
    serving.baseModel().ifPresent(base -> training.agents().forEach((agentId, agent) -> {
      String own = agent.policy().baseModel();
      if (own == null || own.equals(nodes) || own.equals(base.model())) return;
      log.warn("agent {}: agents.{}.base-model is {}, but its v0 (the base model its first fine-tune canaries "
          + "against) is the node's {} at {}{}", agentId, agentId, own, base.model(), base.endpoint(),
          serving.backend().name().equals("vllm-lora")
              ? "; serving.backend = vllm-lora loads its adapters onto that server's base model, so they must be "
                  + "trained from it" : "");
    }));
  }
}
