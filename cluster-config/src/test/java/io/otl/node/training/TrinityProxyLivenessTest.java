package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.node.TextNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * The Trinity proxy's liveness (design §5.2, {@code GET /health}) on the node's {@code /metrics}:
 * {@code otl_trinity_proxy_up} 1 while the proxy answers, 0 once it is stopped, 1 again after it is
 * back on the same address. Before, nothing read the proxy's /health: a stopped proxy showed only
 * as forward-retry warnings in the log (trial t77). The node stays ready meanwhile (the gateway and
 * the API do not need the proxy).
 */
class TrinityProxyLivenessTest {

  @Test
  void aStoppedProxyReadsAsDownOnMetricsAndUpAgainOnceItIsBack() throws Exception {
    ActorTestKit kit = ActorTestKit.create("proxy-liveness");
    TrinitySimulator[] simulator = {TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(Files.createTempDirectory("otl-proxy-live-")))};
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator[0].baseUrl(),
            "agentscope.training.http.metrics-sample-interval", "200ms"))
        .withFallback(TestDatabases.node(TestDatabases.postgres(), true)))) {
      Http http = new Http(node.httpPort());
      Await.until("the proxy up on /metrics", () -> TextNode.valueOf(http.get("/metrics").body()),
          m -> m.asText().contains("\notl_trinity_proxy_up 1"));

      int port = simulator[0].port();
      simulator[0].stop();
      Await.until("the stopped proxy down on /metrics", () -> TextNode.valueOf(http.get("/metrics").body()),
          m -> m.asText().contains("\notl_trinity_proxy_up 0"));
      assertEquals(200, http.get("/health/ready").status(), "the node stays ready without its proxy");

      simulator[0] = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(port)
          .withWorkDir(Files.createTempDirectory("otl-proxy-live-back-")));
      String back = Await.until("the proxy up again on /metrics", () -> TextNode.valueOf(http.get("/metrics").body()),
          m -> m.asText().contains("\notl_trinity_proxy_up 1")).asText();
      assertFalse(back.contains("\notl_trinity_proxy_up 0"), back);
    } finally {
      simulator[0].stop();
      kit.shutdownTestKit();
    }
  }
}
