package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * pekko-http closes a connection on which nothing moved for idle-timeout, also while the gateway waits
 * for a model writing a whole answer: the node keeps it above the gateway's longest wait, whatever
 * gateway.timeout says.
 */
class SlowAnswersTest {

  private static Config node(String overrides) {
    Config base = NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString(overrides), Map.of());
    return SlowAnswers.idleTimeoutAboveAnswers(base, NodeSettings.from(base).gateway());
  }

  @Test
  void theIdleTimeoutFollowsTheGatewaysLongestWait() {
    assertEquals(Duration.ofSeconds(150), node("").getDuration(SlowAnswers.IDLE_TIMEOUT),
        "defaults: 2 x 60 s (fallback) + 10 s + 20 s, above pekko-http's 60 s");
    assertEquals(Duration.ofSeconds(330), node("agentscope.training.gateway.timeout = 150s")
        .getDuration(SlowAnswers.IDLE_TIMEOUT));
    assertEquals(Duration.ofSeconds(180), node("""
        agentscope.training.gateway { timeout = 150s, fallback-to-stable = false }""")
        .getDuration(SlowAnswers.IDLE_TIMEOUT));
    assertEquals(Duration.ofMinutes(10), node("pekko.http.server.idle-timeout = 10m")
        .getDuration(SlowAnswers.IDLE_TIMEOUT), "a longer setting stays");
    assertEquals("infinite", node("pekko.http.server.idle-timeout = infinite").getString(SlowAnswers.IDLE_TIMEOUT));
  }
}
