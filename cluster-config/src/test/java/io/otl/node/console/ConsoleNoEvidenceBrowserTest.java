package io.otl.node.console;

import static io.otl.node.console.ConsoleJobsAndRolloutBrowserTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.HeldOut;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A job's candidate without offline evidence (NO_EVIDENCE: its held-out set was empty) while
 * another version is in rollout. The console's models page told the operator to
 * {@code POST …/promote} it, which the API refuses with 409 as long as one candidate rolls out
 * (trial t74): the page now names what the promote waits for, and shows the command once the API
 * takes it.
 */
class ConsoleNoEvidenceBrowserTest {
  static final String AGENT = "no-evidence";
  static final double EVAL_FRACTION = 0.1;
  static final Duration WAIT = Duration.ofSeconds(30);
  static final String HINT = "document.querySelector('[data-field=\"no-evidence\"]')";

  static ActorTestKit kit;
  static TrinitySimulator simulator;
  static TrainingNode node;
  static Http api;
  static String base;
  static String candidate;

  @BeforeAll
  static void start() throws Exception {
    HeadlessChromium.requireBrowser();
    Path dir = TestDatabases.outputDir("console-no-evidence");
    kit = ActorTestKit.create("console-no-evidence");
    // The job runs for an hour unless finished on cue, so the hand-registered canary starts first.
    simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(200), Duration.ofHours(1)));
    node = TrainingNode.start(ConfigFactory.parseMap(Map.ofEntries(
            Map.entry("agentscope.training.read-side.rescan-interval", "1s"),
            Map.entry("agentscope.training.serving.backend", "vllm-lora"),
            Map.entry("agentscope.training.serving.vllm.url", simulator.baseUrl()),
            Map.entry("agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl()),
            Map.entry("agentscope.training.training-runner.trigger.type", "manual"),
            Map.entry("agentscope.training.training-runner.poll-interval", "200ms"),
            Map.entry("agentscope.training.training-runner.eval-fraction", EVAL_FRACTION),
            Map.entry("agentscope.training.training-runner.dataset-dir", dir.resolve("datasets").toString()),
            Map.entry("agentscope.training.training-runner.checkpoint-root-dir", dir.resolve("checkpoints").toString())))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)));
    api = new Http(node.httpPort());
    base = "http://127.0.0.1:" + node.httpPort();

    // Sessions none of which is held out: the job's bench has nothing to score, so no evidence.
    int sent = 0;
    for (int i = 0; sent < 6; i++) {
      String id = "ne-" + i;
      if (HeldOut.isHeldOut(id, EVAL_FRACTION)) continue;
      sent++;
      Http.Response r = api.post("/v1/sessions/" + id + "/events", """
          {"agentId":"%s","events":[
            {"type":"message","role":"user","content":"question %s"},
            {"type":"message","role":"assistant","content":"answer to %s","latencyMs":500},
            {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%s"},
            {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, id, id, id));
      assertEquals(202, r.status(), r.body());
    }
    await("the pool", () -> api.get("/v1/training/" + AGENT), r -> r.status() == 200 && r.json().path("poolSize").asInt() == 6);
    Http.Response trigger = api.post("/v1/training/" + AGENT + "/trigger", null);
    assertEquals(202, trigger.status(), trigger.body());
    String job = trigger.json().path("jobId").asText();
    await(job + " RUNNING", () -> api.get("/v1/jobs/" + job).json(), j -> j.path("status").asText().equals("RUNNING"));

    // Meanwhile a version registered by hand (served where it is, confirmed at once) starts its canary.
    Http.Response reg = api.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"hand-1\",\"artifact\":\"s3://models/hand-1\",\"endpoint\":\"http://infer:8000/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    assertEquals("CANARY", reg.json().path("state").asText(), reg.body());

    String externalId = api.get("/v1/jobs/" + job).json().path("backend").path("externalId").asText();
    Http sim = new Http(simulator.port());
    assertTrue(sim.post("/simulator/jobs/" + externalId + "/finish", null).json().path("finished").asBoolean());
    JsonNode done = await(job + " SUCCEEDED", () -> api.get("/v1/jobs/" + job).json(),
        j -> j.path("status").asText().equals("SUCCEEDED") && j.path("outputModel").hasNonNull("version"));
    candidate = done.path("outputModel").path("version").asText();
    await(candidate + " NO_EVIDENCE", () -> api.get("/v1/models/" + AGENT).json(),
        m -> state(m, candidate).equals("NO_EVIDENCE"));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
    if (simulator != null) simulator.stop();
    if (kit != null) kit.shutdownTestKit();
  }

  static String state(JsonNode models, String version) {
    for (JsonNode v : models.path("versions")) {
      if (v.path("version").asText().equals(version)) return v.path("state").asText();
    }
    return "";
  }

  @Test
  void theModelsPageOffersAPromoteOnlyWhenTheApiTakesIt() throws Exception {
    try (HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      browser.navigate(base + "/console/#/models/" + AGENT);
      browser.waitFor(HINT, WAIT);
      String hint = browser.eval(HINT + ".innerText").asText();
      // What the API answers a promote now: 409, one candidate at a time. The page must not offer it.
      Http.Response refused = api.post("/v1/models/" + AGENT + "/versions/" + candidate + "/promote", null);
      assertEquals(409, refused.status(), refused.body());
      assertFalse(hint.contains("POST /v1/models/"), hint);
      assertTrue(hint.contains("hand-1 is CANARY") && hint.contains("once hand-1 is promoted or rolled back"), hint);
      browser.screenshot("no-evidence-while-another-rolls-out");

      // The rollout ends: the next refresh offers the promote, and the API takes it.
      Http.Response rollback = api.post("/v1/models/" + AGENT + "/versions/hand-1/rollback", null);
      assertEquals(202, rollback.status(), rollback.body());
      browser.waitFor(HINT + ".innerText.includes('POST /v1/models/" + AGENT + "/versions/" + candidate + "/promote')", WAIT);
      Http.Response promoted = api.post("/v1/models/" + AGENT + "/versions/" + candidate + "/promote", null);
      assertEquals(202, promoted.status(), promoted.body());
      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }
}
