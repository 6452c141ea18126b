package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code PUT /v1/training/{agentId}/policy} with {@code model-update.*} keys over real HTTP (H2): the
 * rollout settings are shown by GET, used by the next rollout, kept by a restart of the node on the
 * same journal and in the model audit; a bad key or value in either part is a 400 and changes
 * neither part.
 */
class RolloutPolicyRoutesTest {
  private static final String AGENT = "rollout-agent";

  private static Config settings(Config db) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.model-update.steps", java.util.List.of(0.5, 1.0)))
        .withFallback(TestDatabases.node(db, true));
  }

  private static Http.Response put(Http http, String body) {
    return http.send("PUT", "/v1/training/" + AGENT + "/policy", body);
  }

  private static JsonNode policy(Http http) {
    Http.Response r = http.get("/v1/training/" + AGENT + "/policy");
    assertEquals(200, r.status(), r.body());
    return r.json();
  }

  private static void register(Http http, String v) {
    Http.Response r = http.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"file:///models/" + v + "\",\"endpoint\":\"http://infer/" + v + "\"}");
    assertEquals(201, r.status(), r.body());
  }

  private static JsonNode version(Http http, String v) {
    for (JsonNode x : http.get("/v1/models/" + AGENT).json().get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  /** A PUT refused with 400 whose message starts with {@code start}; nothing changed. */
  private static void refused(Http http, String body, String start) {
    JsonNode before = policy(http);
    Http.Response r = put(http, body);
    assertEquals(400, r.status(), r.body());
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith(start), message);
    assertFalse(message.contains("agentscope.training"), message);
    assertEquals(before, policy(http), "nothing changed: " + body);
  }

  @Test
  void rolloutSettingsAreSetShownUsedByTheNextRolloutAndKeptByARestart() throws Exception {
    Path work = TestDatabases.outputDir("rollout-policy");
    Config db = TestDatabases.h2(work);
    try (TrainingNode node = TrainingNode.start(settings(db))) {
      Http http = new Http(node.httpPort());
      Http.Response r = put(http, "{\"model-update.canary-ratio\": 0.2, \"trigger\": {\"min-samples\": 500}}");
      assertEquals(200, r.status(), r.body());
      JsonNode got = policy(http);
      assertEquals(0.2, got.get("policy").get("model-update.canary-ratio").asDouble());
      assertEquals(500, got.get("policy").get("trigger.min-samples").asInt(), "both parts in one PUT");
      assertEquals(0.2, got.get("overrides").get("model-update.canary-ratio").asDouble());
      assertEquals("[0.5,1.0]", got.get("policy").get("model-update.steps").toString(), "the file's steps");
      assertEquals(r.json(), got);

      // The next rollout starts at the run-time canary ratio.
      register(http, "v1");
      assertEquals("STABLE", version(http, "v1").get("state").asText());
      register(http, "v2");
      JsonNode v2 = version(http, "v2");
      assertEquals("CANARY", v2.get("state").asText());
      assertEquals(0.2, v2.get("ratio").asDouble(), 1e-9);

      String audit = http.get("/v1/audit/model/" + AGENT).body();
      assertTrue(audit.contains("RolloutPolicyChanged") && audit.contains("model-update.canary-ratio"), audit);
      String timeline = http.get("/v1/audit/model/" + AGENT + "/timeline").body();
      assertTrue(timeline.contains("rollout settings changed by http: run-time overrides {model-update.canary-ratio=0.2}"),
          timeline);

      // A bad value, an unknown key or a combination the file would refuse: 400, neither part changed.
      refused(http, "{\"trigger.min-samples\": 5, \"model-update.canary-ratio\": 1.5}",
          "model-update.canary-ratio: must be a number in (0, 1)");
      refused(http, "{\"model-update\": {\"canary-ratio\": 0.6}}", "model-update.steps: must be ratios above");
      refused(http, "{\"model-update.canary-wratio\": 0.1}", "model-update.canary-wratio is not a model-update key");
      refused(http, "{\"model-update.min-samples-per-step\": 2}", "model-update.min-samples-per-step: must be at least");
      refused(http, "{\"model-update.canary-ratio\": 0.1, \"trigger.min-samples\": 0}",
          "trigger.min-samples: must be an integer >= 1");

      // A step longer than a Pekko timer can wait was once stored, and v2's rollout stopped its
      // ModelVersion for good (503 on every read, at every restart): now a 400 like any bad value.
      refused(http, "{\"model-update.canary-ratio\": 0.2, \"trigger.min-samples\": 500,"
          + " \"model-update.step-duration\": \"999999999d\"}",
          "model-update.step-duration: must be a duration > 0 and at most 248d");
      refused(http, "{\"model-update.canary-ratio\": 0.2, \"trigger.min-samples\": 500,"
          + " \"model-update.retain-previous\": \"99999999999d\"}",
          "model-update.retain-previous: must be a duration > 0 and at most 3650d");
      // Lists too (steps, trigger types): they came back from the journal as Scala lists and were
      // dropped at the restart below.
      Http.Response longest = put(http, "{\"model-update.canary-ratio\": 0.2, \"trigger.min-samples\": 500,"
          + " \"model-update.step-duration\": \"248d\", \"model-update.retain-previous\": \"3650d\","
          + " \"model-update.steps\": [0.6, 1.0], \"trigger.type\": [\"threshold\", \"manual\"]}");
      assertEquals(200, longest.status(), longest.body());
      Http.Response models = http.get("/v1/models/" + AGENT);
      assertEquals(200, models.status(), models.body());
      assertEquals(Instant.parse(version(http, "v2").get("stepStartedAt").asText()).plus(Duration.ofDays(248)),
          Instant.parse(version(http, "v2").get("stepDeadline").asText()), "the running step takes the new duration");
    }
    try (TrainingNode node = TrainingNode.start(settings(db))) {
      Http http = new Http(node.httpPort());
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      JsonNode got = null;
      while (System.nanoTime() < deadline) {
        Http.Response r = http.get("/v1/training/" + AGENT + "/policy");
        if (r.status() == 200) {
          got = r.json();
          break;
        }
        Thread.sleep(200);
      }
      assertTrue(got != null, "the policy after the restart");
      assertEquals(0.2, got.get("policy").get("model-update.canary-ratio").asDouble(), "replayed after a restart");
      assertEquals(500, got.get("policy").get("trigger.min-samples").asInt());
      assertEquals("[0.6,1.0]", got.get("policy").get("model-update.steps").toString(), "a list replayed: " + got);
      assertEquals("[\"threshold\",\"manual\"]", got.get("policy").get("trigger.type").toString(), got.toString());
      assertEquals("[0.6,1.0]", got.get("overrides").get("model-update.steps").toString(), got.toString());
      String audit = http.get("/v1/audit/model/" + AGENT).body() + http.get("/v1/audit/coordinator/" + AGENT).body();
      assertFalse(audit.contains("traversableAgain"), audit);

      // {} clears both parts: the file's settings again.
      Http.Response cleared = put(http, "{}");
      assertEquals(200, cleared.status(), cleared.body());
      assertEquals(0, cleared.json().get("overrides").size(), cleared.body());
      assertEquals(0.05, cleared.json().get("policy").get("model-update.canary-ratio").asDouble());
      assertEquals(1000, cleared.json().get("policy").get("trigger.min-samples").asInt());
    }
  }
}
