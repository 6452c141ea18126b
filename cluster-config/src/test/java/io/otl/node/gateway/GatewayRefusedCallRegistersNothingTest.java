package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.otl.node.testing.Http;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A gateway call refused with 403 because its session belongs to another agent changes nothing
 * (design §7.1, "a rejected request changes nothing"): the caller's routing ran beside the owner
 * check, and an agent without a version yet had its v0 registered in the journal by the refused call
 * (it then showed in GET /v1/agents and in its model audit). Trial t35.
 */
class GatewayRefusedCallRegistersNothingTest {
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    // A base model configured: an agent's first routed call registers its v0 (design §3.3).
    gateway = GatewayTestNode.start("gateway-refused-registers", simulator -> Map.of(
        "agentscope.model.base-url", simulator.baseUrl() + "/v1",
        "agentscope.model.model-name", "qwen-base"));
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void anotherAgentsSessionIsA403AndRegistersNoVersionForTheCaller() {
    String session = "owned-" + UUID.randomUUID();
    Http.Response owner = gateway.api.chat("owner-bot", session, "hello", false);
    assertEquals(200, owner.status(), owner.body());

    Http.Response refused = gateway.api.chat("intruder-bot", session, "hi", false);
    assertEquals(403, refused.status(), refused.body());
    assertEquals("session_of_other_agent", refused.json().path("error").path("code").asText(), refused.body());

    Http.Response audit = gateway.api.get("/v1/audit/model/intruder-bot");
    assertEquals(404, audit.status(), "the refused call wrote the intruder's model versions: " + audit.body());
    Http.Response agents = gateway.api.get("/v1/agents");
    assertEquals(200, agents.status(), agents.body());
    assertFalse(agents.body().contains("intruder-bot"), agents.body());
    // the caller's own session is served as before: the refusal did not stop it from being routed later
    Http.Response own = gateway.api.chat("intruder-bot", "own-" + UUID.randomUUID(), "hi", false);
    assertEquals(200, own.status(), own.body());
  }
}
