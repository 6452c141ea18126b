package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The policy PUT takes keys flat with dots or nested (docs/training-policy.md), and both mean the
 * same. Mixing the two in one body ({@code "hyperparams.learning-rate"} beside {@code "hyperparams":
 * {…}}) was a 400 "the policy is not an object of keys and values" (a new-user trial); now the keys
 * merge, and only the same key given both ways with different values is a 400 naming it.
 */
class PolicyFlatAndNestedKeysTest {
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("policy-flat-nested")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static Http.Response put(String agent, String body) {
    return http.send("PUT", "/v1/training/" + agent + "/policy", body);
  }

  private static JsonNode overrides(String agent) {
    Http.Response r = http.get("/v1/training/" + agent + "/policy");
    assertEquals(200, r.status(), r.body());
    return r.json().get("overrides");
  }

  @Test
  void flatAndNestedKeysMeanTheSameAndMerge() {
    Http.Response flatPut = put("pfn-flat", "{\"hyperparams.learning-rate\": 1e-5, \"hyperparams.epochs\": 2,"
        + " \"model-update.canary-ratio\": 0.05}");
    assertEquals(200, flatPut.status(), flatPut.body());
    Http.Response nestedPut = put("pfn-nested", "{\"hyperparams\": {\"learning-rate\": 1e-5, \"epochs\": 2},"
        + " \"model-update\": {\"canary-ratio\": 0.05}}");
    assertEquals(200, nestedPut.status(), nestedPut.body());
    Http.Response mixed = put("pfn-mixed", "{\"hyperparams.learning-rate\": 1e-5, \"hyperparams\": {\"epochs\": 2},"
        + " \"model-update\": {\"canary-ratio\": 0.05}}");
    assertEquals(200, mixed.status(), mixed.body());
    // The same key both ways with the same value is no conflict.
    Http.Response same = put("pfn-same", "{\"hyperparams\": {\"learning-rate\": 1e-5, \"epochs\": 2},"
        + " \"hyperparams.epochs\": 2.0, \"model-update.canary-ratio\": 0.05}");
    assertEquals(200, same.status(), same.body());
    JsonNode flat = http.get("/v1/training/pfn-flat/policy").json().get("policy");
    for (String agent : new String[] {"pfn-nested", "pfn-mixed", "pfn-same"}) {
      JsonNode p = http.get("/v1/training/" + agent + "/policy").json().get("policy");
      assertEquals(flat, p, agent + " is in force as pfn-flat: " + p);
    }
    assertEquals(1e-5, flat.get("hyperparams.learning-rate").asDouble(), flat.toString());
    assertEquals(0.05, flat.get("model-update.canary-ratio").asDouble(), flat.toString());
  }

  @Test
  void theSameKeyGivenBothWaysWithDifferentValuesIsRefusedByName() {
    String agent = "pfn-conflict";
    Http.Response first = put(agent, "{\"hyperparams.epochs\": 3}");
    assertEquals(200, first.status(), first.body());
    JsonNode before = overrides(agent);
    for (String body : new String[] {
        "{\"hyperparams.learning-rate\": 1e-5, \"hyperparams\": {\"learning-rate\": 2e-5}}",
        "{\"hyperparams\": {\"learning-rate\": 2e-5}, \"hyperparams.learning-rate\": 1e-5}",
        "{\"model-update\": {\"canary-ratio\": 0.1}, \"model-update.canary-ratio\": 0.3}"}) {
      Http.Response r = put(agent, body);
      assertEquals(400, r.status(), body + ": " + r.body());
      String key = body.contains("canary") ? "model-update.canary-ratio" : "hyperparams.learning-rate";
      assertEquals(key + " is given twice, flat and nested, with different values; give it once",
          r.json().path("message").asText(), r.body());
    }
    // A key given as a value and as a section holding keys cannot mean anything.
    Http.Response both = put(agent, "{\"hyperparams\": 1, \"hyperparams.epochs\": 2}");
    assertEquals(400, both.status(), both.body());
    assertEquals("hyperparams is given as a value and as a section (hyperparams.epochs); give one",
        both.json().path("message").asText(), both.body());
    assertEquals(before, overrides(agent), "nothing changed");
    assertFalse(before.toString().contains("learning-rate"), before.toString());
  }

  /**
   * An empty object where a key takes a value ({@code "trigger.min-samples": {}}, what a serializer
   * writes for an object it could not map) was a 200 that dropped the key: the override silently
   * went back to the file's value (trial t45). It is a 400 naming the key; an empty section still sets
   * nothing, as Config reads it.
   */
  @Test
  void anEmptyObjectWhereAKeyTakesAValueIsRefusedByName() {
    String agent = "pfn-empty-object";
    Http.Response first = put(agent, "{\"trigger.min-samples\": 50, \"algorithm\": \"dpo\"}");
    assertEquals(200, first.status(), first.body());
    JsonNode before = overrides(agent);
    String[][] cases = {
        {"{\"trigger.min-samples\": {}, \"algorithm\": \"dpo\"}", "trigger.min-samples"},
        {"{\"trigger.min-samples\": 50, \"algorithm\": {}}", "algorithm"},
        {"{\"trigger\": {\"min-samples\": {}}}", "trigger.min-samples"},
        {"{\"hyperparams\": {\"epochs\": {}}}", "hyperparams.epochs"},
        {"{\"model-update.canary-ratio\": {}}", "model-update.canary-ratio"},
        {"{\"model-update\": {\"tolerance\": {\"task-success-rate\": {}}}}", "model-update.tolerance.task-success-rate"}};
    for (String[] c : cases) {
      Http.Response r = put(agent, c[0]);
      assertEquals(400, r.status(), c[0] + ": " + r.body());
      assertEquals(c[1] + ": must be a value, not an object ({} sets nothing; leave the key out to keep the file's value)",
          r.json().path("message").asText(), c[0]);
    }
    assertEquals(before, overrides(agent), "nothing changed");
    Http.Response sections = put(agent, "{\"trigger.min-samples\": 50, \"hyperparams\": {},"
        + " \"model-update\": {\"tolerance\": {}}}");
    assertEquals(200, sections.status(), "an empty section sets nothing: " + sections.body());
    assertEquals(50, overrides(agent).path("trigger.min-samples").asInt(), overrides(agent).toString());
  }
}
