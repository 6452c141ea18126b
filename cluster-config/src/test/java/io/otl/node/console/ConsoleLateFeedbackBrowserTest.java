package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A canary whose users rate after the result, the usual order (the agent reports the result, the
 * user clicks thumbs later): the node counts each late rating as the session's satisfaction
 * ({@code OutcomeRevised}) and the console must chart it too. The console's chart once replayed only
 * {@code OutcomeRecorded} and said "no observations yet" beside an API answering 3 samples each; its
 * Models page listed only agents typed into this browser, not the node's {@code GET /v1/agents}.
 */
class ConsoleLateFeedbackBrowserTest {
  static final String AGENT = "late-raters";
  static final int SESSIONS = 3;
  static final Duration WAIT = Duration.ofSeconds(30);

  static ActorTestKit kit;
  static TrinitySimulator simulator;
  static TrainingNode node;
  static Http api;
  static String base;

  @BeforeAll
  static void start() throws Exception {
    HeadlessChromium.requireBrowser();
    Path dir = TestDatabases.outputDir("console-late-feedback");
    kit = ActorTestKit.create("console-late-feedback");
    simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(200), Duration.ofHours(1)));
    node = TrainingNode.start(ConfigFactory.parseMap(Map.ofEntries(
            Map.entry("agentscope.training.read-side.rescan-interval", "1s"),
            Map.entry("agentscope.training.serving.backend", "vllm-lora"),
            Map.entry("agentscope.training.serving.vllm.url", simulator.baseUrl()),
            Map.entry("agentscope.training.serving.retry.min-backoff", "100ms"),
            Map.entry("agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl()),
            // The canary stays in its first step while the browser looks.
            Map.entry("agentscope.training.model-update.min-samples-per-step", 1000),
            Map.entry("agentscope.training.model-update.evaluation-metrics",
                List.of("task-success-rate", "user-satisfaction"))))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)));
    api = new Http(node.httpPort());
    base = "http://127.0.0.1:" + node.httpPort();

    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    Http.Response reg = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
        + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    ConsoleJobsAndRolloutBrowserTest.await("v1 in CANARY", () -> version("v1"),
        v -> v.path("state").asText().equals("CANARY"));
    for (String v : List.of("v0", "v1")) {
      for (int i = 0; i < SESSIONS; i++) {
        String session = v + "-s" + i;
        Http.Response r = api.post("/v1/sessions/" + session + "/events", """
            {"agentId":"%s","events":[{"type":"start","modelVersion":"%s"},
              {"type":"message","role":"user","content":"question %d"},
              {"type":"message","role":"assistant","content":"answer %d","latencyMs":400},
              {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, v, i, i));
        assertEquals(202, r.status(), r.body());
      }
    }
    for (String v : List.of("v0", "v1")) {
      ConsoleJobsAndRolloutBrowserTest.await(v + "'s results counted", () -> version(v),
          x -> x.path("metrics").path("currentStep").path("taskSuccessSamples").asInt() == SESSIONS);
    }
    // Then the users rate: after the results, so each rating revises a counted outcome.
    for (String v : List.of("v0", "v1")) {
      for (int i = 0; i < SESSIONS; i++) {
        Http.Response r = api.post("/v1/feedback/thumbs?sessionId=" + v + "-s" + i + "&helpful=" + (i > 0), null);
        assertEquals(200, r.status(), r.body());
      }
    }
    for (String v : List.of("v0", "v1")) {
      ConsoleJobsAndRolloutBrowserTest.await(v + "'s late ratings counted", () -> version(v),
          x -> x.path("metrics").path("currentStep").path("userSatisfactionSamples").asInt() == SESSIONS);
    }
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
    if (simulator != null) simulator.stop();
    if (kit != null) kit.shutdownTestKit();
  }

  static JsonNode version(String v) {
    for (JsonNode x : api.get("/v1/models/" + AGENT).json().path("versions")) {
      if (x.path("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  @Test
  void lateRatingsAreChartedAndTheModelsPageListsTheNodesAgents() throws Exception {
    try (HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      // Models index: the node's agents, with nothing typed into this (fresh) browser profile.
      browser.navigate(base + "/console/#/models");
      browser.waitFor("document.body.dataset.ready === 'true' && document.querySelector('h1')", WAIT);
      browser.waitFor("document.querySelector('li[data-agent=\"" + AGENT + "\"] a')", WAIT);

      browser.navigate(base + "/console/#/models/" + AGENT);
      String chart = ".rollout[data-candidate=\"v1\"] figure[data-metric=\"user-satisfaction\"]";
      browser.waitFor("document.querySelector('" + chart + "')", WAIT);
      String figure = browser.eval("document.querySelector('" + chart + "').textContent").asText();
      // The last point of each series is the step's value the node answers (2 of 3 thumbs up).
      for (String v : List.of("v0", "v1")) {
        double expected = version(v).path("metrics").path("currentStep").path("userSatisfaction").asDouble();
        assertEquals(2.0 / 3, expected, 1e-9, v);
      }
      assertEquals(1, browser.eval("document.querySelectorAll('" + chart + " path.series.candidate').length").asInt(), figure);
      assertEquals(1, browser.eval("document.querySelectorAll('" + chart + " path.series.stable').length").asInt(), figure);
      assertTrue(figure.contains("candidate v1 0.667") && figure.contains("stable v0 0.667"), figure);

      // Outcomes, recorded or revised, are not transitions: the audit table lists neither.
      int transitions = 0;
      for (JsonNode e : api.get("/v1/audit/model/" + AGENT + "?limit=1000").json().path("events")) {
        if (!e.path("type").asText().startsWith("Outcome")) transitions++;
      }
      assertEquals(transitions, browser.eval("document.querySelectorAll('table.audit tbody tr').length").asInt());
      browser.screenshot("late-feedback-models");
      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }
}
