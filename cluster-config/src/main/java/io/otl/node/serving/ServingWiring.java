package io.otl.node.serving;

import com.typesafe.config.Config;
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
   * True when versions are served as LoRA adapters, so training jobs must train adapters:
   * {@code serving.backend = vllm-lora}, or {@code auto} with the simulator in this node.
   */
  public static boolean trainsLora(Config training) {
    return "vllm-lora".equals(backendName(training, training.getBoolean("simulator.enabled")));
  }

  /**
   * {@code serving.backend}, with {@code auto} resolved: vllm-lora on the simulator when it runs in
   * this node and jobs produce checkpoints (ray-jobs), else static (the Trinity proxy serves its
   * own weights at one URL).
   */
  static String backendName(Config training, boolean simulatorInNode) {
    String name = training.getString("serving.backend");
    if (!"auto".equals(name)) {
      return name;
    }
    boolean checkpoints = !"trinity-proxy".equals(training.getString("training-runner.backend"));
    return simulatorInNode && checkpoints ? "vllm-lora" : "static";
  }

  /**
   * @param root the node's whole configuration
   * @param simulator the simulator started with the node, if any
   */
  public static Serving serving(Config root, Optional<TrinitySimulator> simulator) {
    Config training = root.getConfig("agentscope.training");
    Config s = training.getConfig("serving");
    String backendName = backendName(training, simulator.isPresent());
    String baseModelName = training.getString("training-runner.base-model");
    ServingBackend backend;
    String vllmUrl = s.getString("vllm.url");
    if ("vllm-lora".equals(backendName)) {
      if (vllmUrl.isBlank()) {
        vllmUrl = simulator.map(TrinitySimulator::baseUrl).orElseThrow(() -> new IllegalArgumentException(
            "agentscope.training.serving.vllm.url must be set when serving.backend = vllm-lora"));
      }
      backend = new VllmLoraServing(vllmUrl, s.getString("vllm.api-key"), s.getDuration("vllm.request-timeout"));
    } else {
      backend = new StaticServing(s.getString("static.served-model"));
    }
    Optional<BaseModel> base = ModelSection.fromRoot(root)
        .map(m -> new BaseModel(m.provider(), m.baseUrl(), m.modelName()));
    if (base.isEmpty() && "vllm-lora".equals(backendName)) {
      base = Optional.of(new BaseModel("vllm", backend.target("", "", "", "").endpoint(), baseModelName));
    }
    if (base.isEmpty() && simulator.isPresent()) {
      base = Optional.of(new BaseModel("simulator", simulator.get().modelServerUrl(), simulator.get().baseModel()));
    }
    Serving serving = new Serving(backend, base, s.getDuration("retry.min-backoff"),
        s.getDuration("retry.max-backoff"), s.getInt("retry.max-attempts"));
    if (base.isPresent()) {
      log.info("serving backend={} base model v0={} at {}", backend.name(), base.get().model(), base.get().endpoint());
    } else {
      log.warn("serving backend={}: no base model (no agentscope.model section, no simulator): an agent's "
          + "first version becomes STABLE without a canary", backend.name());
    }
    return serving;
  }
}
