package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A model server that no longer serves the model name the gateway sends for a version (a vLLM server
 * restarted without its runtime-loaded LoRA adapters answers 404 "The model … does not exist") used
 * to have its 404 passed to the agent: a NotFoundError for a model the agent never named, no
 * fallback to the stable, nothing counted against the candidate, so its canary kept its traffic.
 * Such a 404 is an upstream failure of the version now.
 */
class GatewayLostAdapterTest {
  private static final String AGENT = "lost-adapter";

  private static StandInModelServer lostServer;
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    // vLLM's answer for a model name it does not serve (its OpenAI error shape).
    lostServer = StandInModelServer.start(bytes -> new StandInModelServer.Answer(404, "{\"object\":\"error\","
        + "\"message\":\"The model `served-adapter` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,"
        + "\"code\":404}"));
    gateway = GatewayTestNode.start("gateway-lost-adapter", Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000,
        // The gateway, not the agent, names the model upstream.
        "agentscope.training.serving.static.served-model", "served-adapter",
        "agentscope.training.model-update.canary-ratio", 0.5,
        "agentscope.training.model-update.steps", List.of(1.0)));
    api = gateway.api;
    // v1, the first version, is stable at once (no base model here); v2 canaries on the lost server.
    gateway.serving(AGENT);
    Http.Response v2 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v2\",\"artifact\":\"file:///m/v2\","
        + "\"endpoint\":\"" + lostServer.url() + "\"}");
    assertEquals(201, v2.status(), v2.body());
    gateway.awaitState(AGENT, "v2", "CANARY");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
    if (lostServer != null) lostServer.close();
  }

  @Test
  void aCandidateWhoseModelTheServerLostFallsBackToStableAndCountsAgainstIt() throws Exception {
    int onCandidate = 0;
    for (int i = 0; i < 40; i++) {
      String session = "lost-" + i;
      String routed = api.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json().path("version").asText();
      Http.Response r = api.chat(AGENT, session, "hello", i % 2 == 0);
      assertEquals(200, r.status(), session + " routed to " + routed + ": " + r.body());
      assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(""), session + " answered by the stable");
      if (routed.equals("v2")) onCandidate++;
    }
    assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    assertEquals(onCandidate, lostServer.calls(), "each candidate call reached the lost server once");
    JsonNode traffic = api.get("/v1/models/" + AGENT + "/traffic").json();
    JsonNode v2 = null;
    for (JsonNode v : traffic.path("versions")) if (v.path("version").asText().equals("v2")) v2 = v;
    assertTrue(v2 != null, traffic.toString());
    assertEquals(onCandidate, v2.path("errors").asInt(), "the failures count against v2: " + traffic);
    assertEquals(onCandidate, v2.path("fallbacks").asInt(), traffic.toString());
  }
}
