package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.serving.Serving;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which backend and which base model (v0) a configuration gives, without starting a node. */
class ServingWiringTest {

  private static Config root(String hocon) {
    return ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve();
  }

  @Test
  void autoIsVllmLoraOnlyWithTheSimulatorInTheNodeAndCheckpointJobs() {
    Config t = root("").getConfig("agentscope.training");
    assertEquals("vllm-lora", ServingWiring.backendName(t, true));
    assertEquals("static", ServingWiring.backendName(t, false));
    Config proxy = root("agentscope.training.training-runner.backend = trinity-proxy").getConfig("agentscope.training");
    assertEquals("static", ServingWiring.backendName(proxy, true), "the Trinity proxy serves its own weights");
    Config explicit = root("agentscope.training.serving.backend = static").getConfig("agentscope.training");
    assertEquals("static", ServingWiring.backendName(explicit, true));
    assertFalse(ServingWiring.trainsLora(explicit));
    assertTrue(ServingWiring.trainsLora(root("agentscope.training.serving.backend = vllm-lora").getConfig("agentscope.training")));
  }

  @Test
  void theModelSectionIsV0AndItsKeyStaysOutOfServing() {
    Serving s = ServingWiring.serving(root("""
        agentscope.model { base-url = "http://127.0.0.1:9000/api", model-name = "gpt-4o-mini", api-key = "sk-secret" }
        agentscope.training.serving.backend = static
        """), Optional.empty());
    assertEquals("static", s.backend().name());
    assertEquals("http://127.0.0.1:9000/api", s.baseModel().orElseThrow().endpoint());
    assertEquals("gpt-4o-mini", s.baseModel().orElseThrow().model());
    assertFalse(s.toString().contains("sk-secret"));
  }

  @Test
  void vllmLoraWithoutModelSectionServesTheBaseModelOfTheVllmServer() {
    Serving s = ServingWiring.serving(root("""
        agentscope.training.serving { backend = vllm-lora, vllm.url = "http://gpu-1:8000" }
        agentscope.training.training-runner.base-model = "Qwen/Qwen2.5-7B-Instruct"
        """), Optional.empty());
    assertEquals("vllm-lora", s.backend().name());
    assertEquals("http://gpu-1:8000/v1", s.baseModel().orElseThrow().endpoint());
    assertEquals("Qwen/Qwen2.5-7B-Instruct", s.baseModel().orElseThrow().model());
  }

  @Test
  void noModelSectionNoSimulatorNoBaseModel() {
    assertTrue(ServingWiring.serving(root("agentscope.training.serving.backend = static"), Optional.empty())
        .baseModel().isEmpty());
  }
}
