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

  /**
   * The same while the owner's first answer still streams (not recorded yet, so only the gateway's
   * claim knows the owner): the intruder's call meets the claim and is refused before any routing.
   * (Two first calls arriving together are the race the claim-before-route order closes: the claim is
   * taken before either call is routed, so the loser is refused unrouted too; not timed here.)
   */
  @Test
  void anotherAgentsCallWhileTheFirstAnswerStreamsRegistersNothing() throws Exception {
    String session = "streaming-" + UUID.randomUUID();
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<java.io.InputStream> streaming = client.send(java.net.http.HttpRequest.newBuilder(
            gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "first-bot").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"stream\":true,"
            + "\"simulator_chunk_delay_ms\":400,\"messages\":[{\"role\":\"user\",\"content\":"
            + "\"one two three four five six seven eight\"}]}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, streaming.statusCode());
    try (java.io.InputStream in = streaming.body()) {
      org.junit.jupiter.api.Assertions.assertTrue(in.read(new byte[16]) > 0, "first-bot's answer is streaming");
      Http.Response refused = gateway.api.chat("second-bot", session, "hi", false);
      assertEquals(403, refused.status(), refused.body());
      in.readAllBytes();
    }
    Http.Response audit = gateway.api.get("/v1/audit/model/second-bot");
    assertEquals(404, audit.status(), "the refused call wrote the intruder's model versions: " + audit.body());
  }
}
