package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Http;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Names with a newline or another control character are refused where they are registered, with a
 * 400 naming the field, before anything is stored: they go into the gateway's {@code X-Model-Version}
 * header, the upstream request and log lines as written, where a newline forges a line or a header.
 * The policy's {@code base-model} and a version's {@code artifact} took them.
 */
class ControlCharactersInNamesTest {

  @Test
  void everyRegisteredNameWithAControlCharacterIs400NamingTheField() throws Exception {
    try (GatewayTestNode g = GatewayTestNode.start("control-chars", Map.of())) {
      String ep = g.simulator.baseUrl() + "/v1";
      record Bad(String body, String field) {}
      for (Bad b : new Bad[] {
          new Bad("{\"version\":\"v1\\n\",\"artifact\":\"file:///m\",\"endpoint\":\"" + ep + "\"}", "version"),
          new Bad("{\"version\":\"v1\\u0007\",\"artifact\":\"file:///m\",\"endpoint\":\"" + ep + "\"}", "version"),
          new Bad("{\"version\":\"v1\",\"artifact\":\"file:///m\",\"endpoint\":\"" + ep
              + "\",\"servedModel\":\"m\\r\\nX-Forged: 1\"}", "servedModel"),
          new Bad("{\"version\":\"v1\",\"artifact\":\"file:///m\",\"endpoint\":\"" + ep
              + "\",\"servedModel\":\"m\\u2028x\"}", "servedModel"),
          new Bad("{\"version\":\"v1\",\"artifact\":\"file:///m\\nINFO forged\",\"endpoint\":\"" + ep + "\"}",
              "artifact")}) {
        Http.Response r = g.api.post("/v1/models/names/versions", b.body());
        assertEquals(400, r.status(), b.body() + " -> " + r.body());
        assertTrue(r.json().path("message").asText().startsWith(b.field()), b.body() + " -> " + r.body());
      }
      assertEquals(0, g.api.get("/v1/models/names").json().path("versions").size(), "nothing registered");

      Http.Response policy = g.api.send("PUT", "/v1/training/names/policy",
          "{\"base-model\":\"qwen\\nINFO forged line\"}");
      assertEquals(400, policy.status(), policy.body());
      assertTrue(policy.json().path("message").asText().contains("base-model"), policy.body());
      assertFalse(g.api.get("/v1/training/names/policy").body().contains("forged"), "the policy is unchanged");
    }
  }
}
