package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A duration in a policy PUT is written with its unit. {@code {"model-update.step-duration": 5}} (a JSON
 * number) was a 200 and in force as 5 ms, HOCON's reading of a bare number: a rollout step meant to last
 * hours ended as soon as its samples were in (trial t35). It is a 400 naming the key, and nothing changes.
 */
class PolicyDurationNeedsUnitTest {
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("policy-duration-unit")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aBareNumberForADurationIsRefusedByNameAndChangesNothing() {
    String agent = "pdu-agent";
    Http.Response first = http.send("PUT", "/v1/training/" + agent + "/policy", "{\"model-update.step-duration\": \"2h\"}");
    assertEquals(200, first.status(), first.body());
    String before = http.get("/v1/training/" + agent + "/policy").json().get("policy").toString();

    for (String body : new String[] {"{\"model-update.step-duration\": 5}", "{\"model-update.step-duration\": \"5\"}",
        "{\"model-update\": {\"retain-previous\": 3600}}"}) {
      Http.Response r = http.send("PUT", "/v1/training/" + agent + "/policy", body);
      assertEquals(400, r.status(), body + ": " + r.body());
      String message = r.json().path("message").asText();
      assertTrue(message.contains("model-update.step-duration") || message.contains("model-update.retain-previous"),
          message);
      assertTrue(message.contains("a bare number has no unit"), message);
    }
    Http.Response after = http.get("/v1/training/" + agent + "/policy");
    assertEquals(before, after.json().get("policy").toString(), "a refused PUT changed the policy");
    assertEquals("2h", after.json().get("policy").get("model-update.step-duration").asText(), after.body());
  }
}
