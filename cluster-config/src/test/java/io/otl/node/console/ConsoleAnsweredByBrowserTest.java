package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import com.typesafe.config.ConfigFactory;
import io.otl.core.model.RoutingTable;
import io.otl.node.TrainingNode;
import io.otl.node.testing.FreePorts;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial t88: a session routed to a candidate whose model server was down was answered by the stable
 * (fallback). The console's session page said "Model version v2" and showed the answer, so it read as
 * v2's; which version answered was in the API's {@code inference} only. Each answer now names it.
 */
class ConsoleAnsweredByBrowserTest {
  private static final String AGENT = "answered-agent";
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final byte[] ANSWER = ("{\"id\":\"chatcmpl-by-v1\",\"object\":\"chat.completion\",\"created\":1,"
      + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"the stable's answer\"},"
      + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3,\"total_tokens\":6}}")
      .getBytes(StandardCharsets.UTF_8);

  @TempDir static Path dir;

  @Test
  void anAnswerTheStableGaveAfterTheCandidateFailedSaysSo() throws Exception {
    HeadlessChromium.requireBrowser();
    HttpServer stable = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    stable.createContext("/v1/chat/completions", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, ANSWER.length);
      exchange.getResponseBody().write(ANSWER);
      exchange.close();
    });
    stable.start();
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(1.0)))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)))) {
      Http api = new Http(node.httpPort());
      String body = "{\"version\":\"%s\",\"artifact\":\"hf-org/%s\",\"servedModel\":\"m\",\"endpoint\":\"%s\"}";
      Http.Response v1 = api.post("/v1/models/" + AGENT + "/versions",
          body.formatted("v1", "v1", "http://127.0.0.1:" + stable.getAddress().getPort() + "/v1"));
      assertEquals(201, v1.status(), v1.body());
      Http.Response v2 = api.post("/v1/models/" + AGENT + "/versions",
          body.formatted("v2", "v2", "http://127.0.0.1:" + FreePorts.take() + "/v1"));
      assertEquals(201, v2.status(), v2.body());
      assertTrue(v2.body().contains("CANARY"), v2.body());
      String session = null;
      for (int i = 0; session == null; i++) {
        if (RoutingTable.bucket("answered-" + i) < 0.5) session = "answered-" + i;
      }
      Http.Response r = api.chat(AGENT, session, "hello", false);
      assertEquals(200, r.status(), r.body());
      assertEquals("v1", r.headers().firstValue("X-Model-Version").orElseThrow());

      try (HeadlessChromium browser = HeadlessChromium.launch(1200, 900)) {
        browser.navigate("http://127.0.0.1:" + node.httpPort() + "/console/#/sessions/" + session);
        browser.waitFor("document.querySelector('[data-field=\"answered-by\"]')", WAIT);
        String by = browser.eval("document.querySelector('[data-field=\"answered-by\"]').innerText").asText();
        assertTrue(by.contains("answered by v1 (fallback from v2)"), by);
        String routed = browser.eval("document.querySelector('[data-field=\"model-version\"]').innerText").asText();
        assertEquals("v2", routed.trim());
        browser.screenshot("session-answered-by");
        assertTrue(browser.pageErrors.isEmpty(), browser.pageErrors.toString());
      }
    } finally {
      stable.stop(0);
    }
  }
}
