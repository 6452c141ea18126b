package io.otl.node.cluster;

import static io.otl.node.cluster.CrashWitness.await;
import static io.otl.node.cluster.CrashWitness.count;
import static io.otl.node.cluster.CrashWitness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A canary step's timer survives a crash: a node JVM holds v2 in CANARY with enough equal outcomes
 * for both versions, so the step may advance once its (short) step-duration has passed. The node
 * is killed with {@code kill -9} before that deadline and started again; afterwards no request
 * touches the agent's models and no new outcome arrives, so only the step timer that the restarted
 * entity re-arms from the journal can decide. The journal (PostgreSQL, read directly) is the
 * witness: the {@code model.step-advanced} event appears, and the outcome count is what it was at
 * the kill. Without the re-armed timer (ModelVersion's RecoveryCompleted not scheduling the step
 * tick) it fails: the redelivered outcomes are duplicates and wake the entity without deciding.
 */
class CanaryStepAfterCrashTest {
  private static final String AGENT = "canary-bot";
  private static final String PID = "ModelVersion|" + AGENT;
  /** Long enough that the kill always comes before the deadline; short enough to wait for. */
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final int MIN_SAMPLES = 30;

  @Test
  void aCanaryStepAdvancesAtItsDeadlineAfterKillMinus9WithoutAnyRequest() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "canary-crash-" + System.nanoTime()).toAbsolutePath());
    int clusterPort = NodeProcess.freePort();
    Map<String, String> env = NodeProcess.clusterEnv("pekko://otl@127.0.0.1:" + clusterPort, url,
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    try (NodeProcess node = new NodeProcess("canary", clusterPort, NodeProcess.freePort(), NodeProcess.freePort(),
        env, dir).withConfig("""
            agentscope.training {
              read-side.rescan-interval = 1s
              model-update {
                canary-ratio = 0.5
                steps = [0.75, 1.0]
                step-duration = %ds
                min-samples-per-step = %d
                evaluation-metrics = [task-success-rate]
              }
            }
            """.formatted(STEP.toSeconds(), MIN_SAMPLES))) {
      node.start();
      Http http = new Http(node.httpPort);
      await("node ready", () -> ready(http), node);
      // v1 is the first version (no base model here): STABLE. v2 canaries against it at 50 %.
      String body = "{\"version\":\"%s\",\"artifact\":\"s3://models/%s\",\"endpoint\":\"http://infer:8000/%s\"}";
      for (String v : new String[] {"v1", "v2"}) {
        Http.Response r = http.post("/v1/models/" + AGENT + "/versions", body.formatted(v, v, v));
        assertEquals(201, r.status(), r.body());
      }
      await("v2 in CANARY", () -> "CANARY".equals(state(http, "v2")), node);

      // Equal sessions on both versions until each has the step's samples: the step may advance
      // as soon as its deadline has passed.
      int[] perVersion = new int[2];
      int sessions = 0;
      while (perVersion[0] < MIN_SAMPLES || perVersion[1] < MIN_SAMPLES) {
        String session = "s-" + sessions++;
        String version = http.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json().path("version").asText();
        perVersion[version.equals("v2") ? 1 : 0]++;
        Http.Response r = http.post("/v1/sessions/" + session + "/events", """
            {"agentId":"%s","events":[{"type":"start","modelVersion":"%s"},
              {"type":"message","role":"user","content":"q"},
              {"type":"message","role":"assistant","content":"a","latencyMs":300},
              {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, version));
        assertEquals(202, r.status(), r.body());
      }
      int posted = sessions;
      await("every outcome recorded by the model entity",
          () -> count(url, PID, "model.outcome-recorded") == posted, node);
      node.kill();

      // Dead node: every outcome is in, the step has not advanced yet.
      assertEquals(0, count(url, PID, "model.step-advanced"),
          "the step advanced before the kill: the test proves nothing");
      long outcomes = count(url, PID, "model.outcome-recorded");
      assertEquals(posted, outcomes);

      node.start();
      await("node ready again", () -> ready(http), node);
      // Nothing names the agent's models from here on: only the re-armed step timer can decide.
      await("the step's advance in the journal", () -> count(url, PID, "model.step-advanced") == 1, node);
      assertEquals(outcomes, count(url, PID, "model.outcome-recorded"),
          "an outcome arrived after the restart: the advance may not be the timer's");

      JsonNode v2 = version(http, "v2");
      assertEquals("RAMP", v2.path("state").asText(), v2.toString());
      assertEquals(0.75, v2.path("ratio").asDouble(), 1e-9, v2.toString());
      JsonNode history = v2.path("history");
      Instant canaryAt = null;
      Instant rampAt = null;
      for (JsonNode h : history) {
        if (h.path("state").asText().equals("CANARY")) canaryAt = Instant.parse(h.path("at").asText());
        if (h.path("state").asText().equals("RAMP")) rampAt = Instant.parse(h.path("at").asText());
      }
      assertTrue(canaryAt != null && rampAt != null, history.toString());
      assertTrue(!rampAt.isBefore(canaryAt.plus(STEP)), "advanced at its deadline, not before: " + history);
    }
  }

  private static JsonNode version(Http http, String v) {
    for (JsonNode x : http.get("/v1/models/" + AGENT).json().path("versions")) {
      if (x.path("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  private static String state(Http http, String v) {
    return version(http, v).path("state").asText();
  }
}
