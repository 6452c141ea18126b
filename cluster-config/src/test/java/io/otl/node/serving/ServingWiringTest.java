package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.serving.Serving;
import io.otl.node.config.ModelSection;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which backend and which base model (v0) a configuration gives, without starting a node. */
class ServingWiringTest {

  private static Config root(String hocon) {
    return ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve();
  }

  /** Serving as the node builds it from a root configuration, without a simulator. */
  private static Serving serving(Config root) {
    return ServingWiring.serving(ServingSettings.fromConfig(root.getConfig("agentscope.training")),
        ModelSection.fromRoot(root), Optional.empty());
  }

  @Test
  void autoIsVllmLoraOnlyWithTheSimulatorInTheNodeAndCheckpointJobs() {
    Config t = root("").getConfig("agentscope.training");
    assertEquals("vllm-lora", ServingSettings.fromConfig(t).backendName(true));
    assertEquals("static", ServingSettings.fromConfig(t).backendName(false));
    Config proxy = root("agentscope.training.training-runner.backend = trinity-proxy").getConfig("agentscope.training");
    assertEquals("static", ServingSettings.fromConfig(proxy).backendName(true), "the Trinity proxy serves its own weights");
    Config explicit = root("agentscope.training.serving.backend = static").getConfig("agentscope.training");
    assertEquals("static", ServingSettings.fromConfig(explicit).backendName(true));
    assertFalse(ServingSettings.fromConfig(explicit).trainsLora());
    assertTrue(ServingSettings.fromConfig(root("agentscope.training.serving.backend = vllm-lora")
        .getConfig("agentscope.training")).trainsLora());
  }

  @Test
  void theModelSectionIsV0AndItsKeyStaysOutOfServing() {
    Serving s = serving(root("""
        agentscope.model { base-url = "http://127.0.0.1:9000/api", model-name = "gpt-4o-mini", api-key = "sk-secret" }
        agentscope.training.serving.backend = static
        """));
    assertEquals("static", s.backend().name());
    assertEquals("http://127.0.0.1:9000/api", s.baseModel().orElseThrow().endpoint());
    assertEquals("gpt-4o-mini", s.baseModel().orElseThrow().model());
    assertFalse(s.toString().contains("sk-secret"));
  }

  @Test
  void vllmLoraWithoutModelSectionServesTheBaseModelOfTheVllmServer() {
    Serving s = serving(root("""
        agentscope.training.serving { backend = vllm-lora, vllm.url = "http://gpu-1:8000" }
        agentscope.training.training-runner.base-model = "Qwen/Qwen2.5-7B-Instruct"
        """));
    assertEquals("vllm-lora", s.backend().name());
    assertEquals("http://gpu-1:8000/v1", s.baseModel().orElseThrow().endpoint());
    assertEquals("Qwen/Qwen2.5-7B-Instruct", s.baseModel().orElseThrow().model());
  }

  @Test
  void noModelSectionNoSimulatorNoBaseModel() {
    assertTrue(serving(root("agentscope.training.serving.backend = static"))
        .baseModel().isEmpty());
  }
}
