package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The agents overview of an agent that has only served gateway calls (a v0, no training coordinator yet).
 * The console asked {@code GET /v1/training/{agentId}} of it on every refresh and got 404, an error in the
 * browser's console each time (trial t111); {@code GET /v1/agents} now says what each agent has, and the
 * console asks only for that.
 */
class ConsoleAgentWithoutTrainingBrowserTest {
  private static final String AGENT = "gw-only";
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void theOverviewAsksNoTrainingStatusOfAnAgentWithoutACoordinator() throws Exception {
    HeadlessChromium.requireBrowser();
    Path dir = TestDatabases.outputDir("console-agent-without-training");
    var config = ConfigFactory.parseMap(Map.of(
            "agentscope.training.simulator.enabled", true,
            "agentscope.training.simulator.port", 0,
            "agentscope.training.simulator.work-dir", dir.resolve("sim").toString()))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true));
    try (TrainingNode node = TrainingNode.start(config);
        HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      Http http = new Http(node.httpPort());
      Http.Response chat = http.chat(AGENT, "gw-only-1", "Hi", false);
      assertEquals(200, chat.status(), chat.body());

      browser.navigate("http://127.0.0.1:" + node.httpPort() + "/console/#/agents");
      String card = "document.querySelector('[data-agent=\"" + AGENT + "\"]')";
      browser.waitFor(card + " && " + card + ".querySelector('[data-field=\"stable\"]')", WAIT);
      String text = browser.eval(card + ".innerText").asText();
      assertTrue(text.contains("No training status") && text.contains("v0"), text);
      String askedForTraining = browser.eval("JSON.stringify(performance.getEntriesByType('resource')"
          + ".map(e => e.name).filter(n => n.includes('/v1/training/')))").asText();
      assertEquals("[]", askedForTraining, "the console asked for a training status the agent list said is absent");
      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }
}
