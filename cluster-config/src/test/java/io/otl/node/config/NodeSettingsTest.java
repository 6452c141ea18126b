package io.otl.node.config;

import static io.otl.node.config.TestFiles.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.model.Metric;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The node's settings tree, parsed once from the stack the node builds, holds what the files say. */
class NodeSettingsTest {

  @Test
  void theAgentScopeJsonSampleParsesIntoTheTree() {
    NodeSettings s = NodeSettings.from(NodeConfig.resolve(Optional.of(sample("settings.json")),
        ConfigFactory.empty(), Map.of()));
    assertEquals(200, s.training().defaults().policy().minSamples());
    assertEquals("gpt-4o-mini", s.training().defaults().policy().baseModel());
    assertEquals("gpt-4o-mini", s.serving().baseModel());
    assertFalse(s.models().autoDeploy());
    assertEquals(List.of(Metric.TASK_SUCCESS_RATE, Metric.RESPONSE_LATENCY), s.models().evaluationMetrics());
    assertTrue(s.training().store().local());
    assertEquals("gpt-4o-mini", s.model().orElseThrow().modelName());
    // What the file leaves out takes reference.conf's defaults.
    assertEquals(Duration.ofSeconds(5), s.http().askTimeout());
    assertEquals(-1, s.http().otlp().port());
    assertTrue(s.gateway().orElseThrow().enabled());
  }

  @Test
  void perAgentSectionsBecomeTheirOwnPolicyAndModelSettings() {
    NodeSettings s = NodeSettings.from(NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString("""
        agentscope.training.agents.support-bot { trigger.min-samples = 50, model-update.canary-ratio = 0.1 }
        agentscope.training.http.enabled = false
        """), Map.of()));
    assertEquals(50, s.training().forAgent("support-bot").policy().minSamples());
    assertEquals(1000, s.training().forAgent("other-bot").policy().minSamples());
    assertEquals(0.1, s.modelsFor("support-bot").canaryRatio());
    assertEquals(0.05, s.modelsFor("other-bot").canaryRatio());
    assertTrue(s.gateway().isEmpty(), "the gateway is served on the API's port: not parsed when HTTP is off");
  }

  @Test
  void secretsStayOutOfTheTreesText() {
    NodeSettings s = NodeSettings.from(NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString("""
        agentscope.training.auth { token = "api-secret-1", metrics-token = "metrics-secret-2" }
        agentscope.training.serving.vllm.api-key = "vllm-secret-3"
        """), Map.of()));
    String text = s.http() + " " + s.serving();
    for (String secret : List.of("api-secret-1", "metrics-secret-2", "vllm-secret-3")) {
      assertFalse(text.contains(secret), secret);
    }
    assertEquals("api-secret-1", s.http().auth().token());
  }
}
