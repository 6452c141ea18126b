package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A policy PUT's values are read as the file's are: {@code "5"} is the number 5, {@code "yes"} is true.
 * The answer (and the GET) showed {@code overrides} as sent, {@code "5"} and {@code "yes"}, beside a
 * {@code policy} of 5 and true, so an operator could not tell from the answer what the node would use
 * (trials t99, t101). The overrides now show each value as the node reads it, training and rollout keys
 * alike; a PUT-back of the answer's overrides sets the same policy.
 */
class PolicyAnswerTypedValuesTest {
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("policy-typed")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static void assertTyped(JsonNode overrides) {
    assertTrue(overrides.get("trigger.min-samples").isInt(), overrides.toString());
    assertEquals(5, overrides.get("trigger.min-samples").asInt(), overrides.toString());
    assertTrue(overrides.get("hyperparams.epochs").isInt(), overrides.toString());
    assertEquals(2, overrides.get("hyperparams.epochs").asInt(), overrides.toString());
    assertTrue(overrides.get("model-update.auto-deploy").isBoolean(), overrides.toString());
    assertEquals(true, overrides.get("model-update.auto-deploy").asBoolean(), overrides.toString());
    assertTrue(overrides.get("model-update.canary-ratio").isNumber(), overrides.toString());
    assertEquals(0.1, overrides.get("model-update.canary-ratio").asDouble(), overrides.toString());
    assertEquals("30m", overrides.get("model-update.step-duration").asText(), overrides.toString());
  }

  @Test
  void theAnswerAndTheGetShowTheOverridesAsTheNodeReadsThem() {
    String agent = "typed-bot";
    Http.Response put = http.send("PUT", "/v1/training/" + agent + "/policy", "{\"trigger.min-samples\": \"5\","
        + " \"hyperparams\": {\"epochs\": \"2\"}, \"model-update.auto-deploy\": \"yes\","
        + " \"model-update.canary-ratio\": \"0.1\", \"model-update.step-duration\": \"1800s\"}");
    assertEquals(200, put.status(), put.body());
    assertTyped(put.json().get("overrides"));
    JsonNode got = http.get("/v1/training/" + agent + "/policy").json();
    assertTyped(got.get("overrides"));
    for (String key : new String[] {"trigger.min-samples", "hyperparams.epochs", "model-update.auto-deploy",
        "model-update.canary-ratio", "model-update.step-duration"}) {
      assertEquals(got.get("policy").get(key), got.get("overrides").get(key), key + ": " + got);
    }
    // What the answer shows can be sent back as it is: the same policy, nothing new in force.
    Http.Response again = http.send("PUT", "/v1/training/" + agent + "/policy", got.get("overrides").toString());
    assertEquals(200, again.status(), again.body());
    assertEquals(got.get("policy"), again.json().get("policy"), again.body());
  }
}
