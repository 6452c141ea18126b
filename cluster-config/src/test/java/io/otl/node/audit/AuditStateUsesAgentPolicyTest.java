package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The audit's "state as of T" shows an agent's settings as its entities used them then: its own
 * file section with the run-time overrides ({@code PUT …/policy}) in force at T. Trial t11 set
 * {@code trigger.min-samples} to 30 at run time, saw a threshold job start at 31 trajectories, and
 * the audit's coordinator state said {@code minSamples} 1000 (the node's file default); the model
 * state's step deadline took the file's {@code step-duration} (1h) where the live GET said 10m.
 */
class AuditStateUsesAgentPolicyTest {
  private static final String AGENT = "audited-policy";

  private static Config settings(Config db) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.agents." + AGENT + ".trigger.min-samples", 700,
            "agentscope.training.model-update.step-duration", "1h"))
        .withFallback(TestDatabases.node(db, true));
  }

  private static void put(Http http, String body) {
    Http.Response r = http.send("PUT", "/v1/training/" + AGENT + "/policy", body);
    assertEquals(200, r.status(), r.body());
  }

  private static void register(Http http, String v) {
    Http.Response r = http.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"hf:org/" + v + "\",\"endpoint\":\"http://infer/" + v + "\"}");
    assertEquals(201, r.status(), r.body());
  }

  private static JsonNode stateAsOf(Http http, String kind, Instant at) {
    Http.Response r = http.get("/v1/audit/" + kind + "/" + AGENT + "?limit=1&asOf=" + at);
    assertEquals(200, r.status(), r.body());
    return r.json().get("stateAsOf");
  }

  private static JsonNode v2(JsonNode models) {
    for (JsonNode v : models.get("versions")) {
      if (v.get("version").asText().equals("v2")) return v;
    }
    throw new AssertionError("no v2 in " + models);
  }

  @Test
  void theAuditedStateTakesTheAgentsSectionAndTheOverridesInForceThen() throws Exception {
    Config db = TestDatabases.h2(TestDatabases.outputDir("audit-policy"));
    try (TrainingNode node = TrainingNode.start(settings(db))) {
      Http http = new Http(node.httpPort());
      put(http, "{\"trigger.min-samples\": 30, \"model-update.step-duration\": \"10m\"}");
      register(http, "v1"); // no base model here: v1 becomes the stable
      register(http, "v2"); // and v2 its canary
      Thread.sleep(5); // the audit places events by their time: T lies after these writes
      Instant withOverrides = Instant.now();
      Thread.sleep(5);
      JsonNode live = http.get("/v1/training/" + AGENT).json();
      assertEquals(30, live.get("minSamples").asInt(), live.toString());
      assertEquals(30, stateAsOf(http, "coordinator", withOverrides).get("minSamples").asInt(),
          "as the coordinator used it then");
      JsonNode liveV2 = v2(http.get("/v1/models/" + AGENT).json());
      assertEquals(Instant.parse(liveV2.get("stepStartedAt").asText()).plus(10, ChronoUnit.MINUTES),
          Instant.parse(liveV2.get("stepDeadline").asText()), liveV2.toString());
      assertEquals(liveV2.get("stepDeadline"), v2(stateAsOf(http, "model", withOverrides)).get("stepDeadline"),
          "the run-time step-duration, as GET /v1/models answered");

      put(http, "{}"); // back to the file: the agent's own section, not the node's default
      Instant future = Instant.now().plus(1, ChronoUnit.DAYS);
      assertEquals(700, http.get("/v1/training/" + AGENT).json().get("minSamples").asInt());
      assertEquals(700, stateAsOf(http, "coordinator", future).get("minSamples").asInt());
      assertEquals(30, stateAsOf(http, "coordinator", withOverrides).get("minSamples").asInt(),
          "what was in force then, not now");
      JsonNode v2Now = v2(stateAsOf(http, "model", future));
      assertEquals(Instant.parse(v2Now.get("stepStartedAt").asText()).plus(1, ChronoUnit.HOURS),
          Instant.parse(v2Now.get("stepDeadline").asText()), v2Now.toString());
    }
  }
}
