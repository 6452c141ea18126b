package io.otl.node.serving;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How ModelVersion deploys versions ({@code agentscope.training.serving}), with the two
 * training-runner keys that decide what {@code serving.backend = auto} means. Read once at
 * start-up; defaults and a comment per key in the node's reference.conf.
 *
 * @param backend {@code auto}, {@code vllm-lora} or {@code static}, as configured
 * @param runnerBackend {@code training-runner.backend}: the Trinity proxy serves its own weights
 * @param baseModel {@code training-runner.base-model}: the vLLM server's base model
 * @param simulatorEnabled {@code simulator.enabled}: whether a simulator runs in this node
 * @param vllmApiKey a secret; {@link #toString()} never prints it
 */
public record ServingSettings(
    String backend,
    String runnerBackend,
    String baseModel,
    boolean simulatorEnabled,
    String vllmUrl,
    String vllmApiKey,
    Duration vllmRequestTimeout,
    String staticServedModel,
    Duration retryMinBackoff,
    Duration retryMaxBackoff,
    int retryMaxAttempts) {

  /** Reads {@code serving} and what it depends on under {@code agentscope.training}. */
  public static ServingSettings fromConfig(Config training) {
    Config s = training.getConfig("serving");
    return new ServingSettings(s.getString("backend"), training.getString("training-runner.backend"),
        training.getString("training-runner.base-model"), training.getBoolean("simulator.enabled"),
        s.getString("vllm.url"), s.getString("vllm.api-key"), s.getDuration("vllm.request-timeout"),
        s.getString("static.served-model"), s.getDuration("retry.min-backoff"), s.getDuration("retry.max-backoff"),
        s.getInt("retry.max-attempts"));
  }

  /**
   * True when versions are served as LoRA adapters, so training jobs must train adapters:
   * {@code serving.backend = vllm-lora}, or {@code auto} with the simulator in this node.
   */
  public boolean trainsLora() {
    return "vllm-lora".equals(backendName(simulatorEnabled));
  }

  /**
   * {@code serving.backend}, with {@code auto} resolved: vllm-lora on the simulator when it runs in
   * this node and jobs produce checkpoints (ray-jobs), else static (the Trinity proxy serves its
   * own weights at one URL).
   */
  public String backendName(boolean simulatorInNode) {
    if (!"auto".equals(backend)) {
      return backend;
    }
    boolean checkpoints = !"trinity-proxy".equals(runnerBackend);
    return simulatorInNode && checkpoints ? "vllm-lora" : "static";
  }

  @Override
  public String toString() {
    return "ServingSettings[backend=" + backend + ", vllmUrl=" + vllmUrl + ", vllmApiKey="
        + (vllmApiKey.isEmpty() ? "none" : "***") + ", staticServedModel=" + staticServedModel + "]";
  }
}
