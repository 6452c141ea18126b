package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The keys the node sends in an Authorization header must be sendable there; refused at start otherwise. */
class HeaderSecretsTest {

  private static String refusal(Config config) {
    return assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.empty(), config, Map.of())).getMessage();
  }

  /**
   * Trial t61: an upstream key with a newline inside was accepted, and would have made every call's
   * Authorization header invalid. Refused at start naming key and variable, the value never shown.
   */
  @Test
  void aKeyTheNodeSendsWithAControlCharacterInsideIsRefusedWithoutShowingIt() {
    String secret = "sk-upstream\nsecond-line";
    String m = refusal(ConfigFactory.parseMap(Map.of("agentscope.training.gateway.upstream-api-key", secret,
        "agentscope.training.serving.vllm.api-key", "vllm\tkey",
        "agentscope.training.training-runner.trinity.auth-token", "ray\u0000token"), EnvironmentVariables.SUBSTITUTED));
    assertTrue(m.contains("agentscope.training.gateway.upstream-api-key = " + Secrets.MASK + " (from environment variable "
        + "OTL_GATEWAY_UPSTREAM_API_KEY): must be a key without a control character"), m);
    assertTrue(m.contains("agentscope.training.serving.vllm.api-key = " + Secrets.MASK + " (from environment variable OTL_VLLM_API_KEY)"), m);
    assertTrue(m.contains("agentscope.training.training-runner.trinity.auth-token = " + Secrets.MASK + " (from environment variable "
        + "OTL_TRINITY_TOKEN)"), m);
    assertTrue(!m.contains("sk-upstream") && !m.contains("second-line") && !m.contains("vllm\tkey"), m);

    String perAgent = refusal(ConfigFactory.parseString(
        "agentscope.training.gateway.agents.bot-1.upstream-api-key = \"sk-a\\r\\nX-Injected: 1\""));
    assertTrue(perAgent.contains("agentscope.training.gateway.agents.bot-1.upstream-api-key = " + Secrets.MASK + ": must be a key "
        + "without a control character"), perAgent);
    assertTrue(!perAgent.contains("Injected"), perAgent);

    String model = refusal(ConfigFactory.parseString("agentscope.model { base-url = \"http://127.0.0.1:8000/v1\"\n"
        + "model-name = m\napi-key = \"sk-m\\u0007odel\" }"));
    assertTrue(model.contains("agentscope.model.api-key: must be a key without a control character"), model);
    assertTrue(!model.contains("sk-m"), model);
  }

  @Test
  void ordinaryKeysStillStart() {
    NodeConfig.resolve(Optional.empty(), ConfigFactory.parseMap(Map.of(
        "agentscope.training.gateway.upstream-api-key", "sk-proj-AbC_123-xyz.456",
        "agentscope.training.serving.vllm.api-key", "token-abc")), Map.of());
  }
}
