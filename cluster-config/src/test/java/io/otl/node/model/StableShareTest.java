package io.otl.node.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The stable's share while a candidate rolls out is the rest of 100 % in decimal: at a 70 % canary
 * GET /v1/models answered the stable's {@code ratio} as 0.30000000000000004 (1.0 - 0.7 in binary),
 * and so did the audit's state as of a time, built by the same view.
 */
class StableShareTest {
  private static final String AGENT = "share-agent";

  @Test
  void theStablesRatioBesideA70PercentCanaryIsExactly0point3() throws Exception {
    Config db = TestDatabases.h2(TestDatabases.outputDir("stable-share"));
    Config config = ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.canary-ratio", 0.7,
            "agentscope.training.model-update.steps", List.of(1.0),
            "agentscope.training.model-update.step-duration", "1h",
            "agentscope.training.model-update.min-samples-per-step", 400,
            "agentscope.training.model-update.evaluation-metrics", List.of("task-success-rate")))
        .withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      register(http, "v1");
      JsonNode canary = register(http, "v2");
      assertEquals("CANARY", canary.get("state").asText(), canary.toString());
      assertEquals(0.7, canary.get("ratio").asDouble(), 0.0, canary.toString());

      Http.Response models = http.get("/v1/models/" + AGENT);
      assertEquals(200, models.status(), models.body());
      assertShares(models.json(), models.body());

      Http.Response audit = http.get("/v1/audit/model/" + AGENT + "?asOf=2999-01-01T00:00:00Z");
      assertEquals(200, audit.status(), audit.body());
      assertShares(audit.json().get("stateAsOf"), audit.body());
    }
  }

  private static void assertShares(JsonNode models, String body) {
    assertEquals("v1", models.get("stable").asText(), body);
    assertEquals(0.3, version(models, "v1").get("ratio").asDouble(), 0.0, body);
    assertEquals(0.7, version(models, "v2").get("ratio").asDouble(), 0.0, body);
    assertFalse(body.contains("0.30000000000000004"), body);
  }

  private static JsonNode register(Http http, String v) {
    Http.Response r = http.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"hf:org/" + v + "\",\"endpoint\":\"http://infer/" + v + "\"}");
    assertEquals(201, r.status(), r.body());
    return r.json();
  }

  private static JsonNode version(JsonNode models, String v) {
    for (JsonNode x : models.get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v + " in " + models);
  }
}
