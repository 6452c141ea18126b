package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.http.gateway.GatewaySettings;
import org.junit.jupiter.api.Test;

/** The gateway's configuration: per-agent keys, and the mistakes start-up refuses. */
class GatewaySettingsTest {
  private static GatewaySettings settings(String gateway) {
    Config c = ConfigFactory.parseString("agentscope.training.gateway {" + gateway + "}")
        .withFallback(ConfigFactory.defaultReference()).resolve();
    return GatewaySettings.fromConfig(c.getConfig("agentscope.training"));
  }

  @Test
  void defaultsAreOpenWithFallbackAndNoKeys() {
    GatewaySettings s = settings("");
    assertTrue(s.enabled());
    assertFalse(s.authEnabled());
    assertTrue(s.fallbackToStable());
    assertFalse(s.captureTokens());
  }

  @Test
  void perAgentKeysTurnAuthOnAndAreNeverPrinted() {
    GatewaySettings s = settings("agents { bot-1 { api-key = k-one, upstream-api-key = up-one }, bot-2 { api-key = k-two } }"
        + ", upstream-api-key = up-default");
    assertTrue(s.authEnabled());
    assertEquals("up-one", s.upstreamKeyFor("bot-1", "http://vllm:8000/v1"));
    assertEquals("up-default", s.upstreamKeyFor("bot-2", "http://vllm:8000/v1"));
    assertFalse(s.toString().contains("k-one") || s.toString().contains("up-"), s.toString());
  }

  /** The model section's key is its base URL's: no other server (a canary's vLLM) ever sees it. */
  @Test
  void theModelSectionsKeyGoesToItsBaseUrlOnly() {
    GatewaySettings s = settings("agents { bot-1 { upstream-api-key = up-one } }, upstream-api-key = up-default")
        .withEndpointKey("http://provider:9000/api", "sk-model");
    assertEquals("sk-model", s.upstreamKeyFor("bot-2", "http://provider:9000/api/"));
    assertEquals("up-default", s.upstreamKeyFor("bot-2", "http://vllm:8000/v1"));
    assertEquals("up-one", s.upstreamKeyFor("bot-1", "http://provider:9000/api"), "the agent's own key wins");
    assertFalse(s.toString().contains("sk-model"), s.toString());
    assertEquals("", settings("").withEndpointKey("http://provider:9000/api", "").upstreamKeyFor("a", "http://provider:9000/api"));
  }

  @Test
  void aSharedKeyOrAnInvalidAgentIdIsRefused() {
    IllegalArgumentException shared = assertThrows(IllegalArgumentException.class,
        () -> settings("agents { a { api-key = same }, b { api-key = same } }"));
    assertTrue(shared.getMessage().contains("same api-key"));
    assertFalse(shared.getMessage().contains("= same"));
    IllegalArgumentException invalid = assertThrows(IllegalArgumentException.class,
        () -> settings("agents { \"bad agent\" { api-key = k } }"));
    assertTrue(invalid.getMessage().contains("gateway.agents"), invalid.getMessage());
  }
}
