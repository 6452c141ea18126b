package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A model server that refuses the gateway's credentials (401, or 403 for a model the key may not use)
 * had its answer passed to the agent: the agent's SDK raised AuthenticationError as if its own gateway
 * key were wrong, with the server's message naming the node's key (masked), no fallback was made and
 * nothing counted against the version. So a candidate registered without its server's key failed its
 * share of sessions for as long as its canary ran, and nothing rolled it back (trial t56). The key is
 * the node's, never the agent's: such a refusal is the version's upstream failure.
 */
class GatewayUpstreamCredentialsTest {
  private static final String CANARY_AGENT = "creds-canary";
  private static final String ONLY_AGENT = "creds-only";
  /** What OpenAI answers for a wrong key: the key, masked, in the message. */
  private static final String REFUSAL = "Incorrect API key provided: sk-node*****5678";

  private static StandInModelServer refusingServer;
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    refusingServer = StandInModelServer.start(bytes -> {
      boolean forbidden = new String(bytes, StandardCharsets.UTF_8).contains("forbidden-model");
      return new StandInModelServer.Answer(forbidden ? 403 : 401, "{\"error\":{\"message\":\""
          + (forbidden ? "You are not allowed to sample from this model" : REFUSAL)
          + "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\""
          + (forbidden ? "model_not_allowed" : "invalid_api_key") + "\"}}");
    });
    gateway = GatewayTestNode.start("gateway-upstream-credentials", Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000,
        "agentscope.training.gateway.upstream-api-key", "sk-node-key-5678",
        "agentscope.training.model-update.canary-ratio", 0.5,
        "agentscope.training.model-update.steps", List.of(1.0)));
    api = gateway.api;
    // CANARY_AGENT: v1 stable on the simulator, v2 canaries on the refusing server.
    gateway.serving(CANARY_AGENT);
    Http.Response v2 = api.post("/v1/models/" + CANARY_AGENT + "/versions", "{\"version\":\"v2\","
        + "\"artifact\":\"hf:org/v2\",\"endpoint\":\"" + refusingUrl() + "\"}");
    assertEquals(201, v2.status(), v2.body());
    gateway.awaitState(CANARY_AGENT, "v2", "CANARY");
    // ONLY_AGENT: its one version is served by the refusing server, under a name the key may not use.
    Http.Response v1 = api.post("/v1/models/" + ONLY_AGENT + "/versions", "{\"version\":\"v1\","
        + "\"artifact\":\"hf:org/v1\",\"endpoint\":\"" + refusingUrl() + "\",\"servedModel\":\"forbidden-model\"}");
    assertEquals(201, v1.status(), v1.body());
    gateway.awaitState(ONLY_AGENT, "v1", "STABLE");
  }

  private static String refusingUrl() {
    return refusingServer.url();
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
    if (refusingServer != null) refusingServer.close();
  }

  @Test
  void aCandidateWhoseServerRefusesTheGatewaysKeyFallsBackToStableAndCountsAgainstIt() {
    int before = refusingServer.calls();
    int onCandidate = 0;
    for (int i = 0; i < 30; i++) {
      String session = "creds-" + i;
      String routed = api.get("/v1/models/" + CANARY_AGENT + "/route?sessionId=" + session).json()
          .path("version").asText();
      Http.Response r = api.chat(CANARY_AGENT, session, "hello", i % 2 == 0);
      assertEquals(200, r.status(), session + " routed to " + routed + ": " + r.body());
      assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(""), session + " answered by the stable");
      if (routed.equals("v2")) onCandidate++;
    }
    assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    assertEquals(onCandidate, refusingServer.calls() - before, "each candidate call reached its server once");
    JsonNode v2 = null;
    JsonNode traffic = api.get("/v1/models/" + CANARY_AGENT + "/traffic").json();
    for (JsonNode v : traffic.path("versions")) if (v.path("version").asText().equals("v2")) v2 = v;
    assertTrue(v2 != null, traffic.toString());
    assertEquals(onCandidate, v2.path("errors").asInt(), "the refusals count against v2: " + traffic);
    assertEquals(onCandidate, v2.path("fallbacks").asInt(), traffic.toString());
  }

  @Test
  void aRefusalWithNothingToFallBackOnIsTheVersionsUpstreamErrorNamingTheKeysSetting() {
    for (boolean stream : new boolean[] {false, true}) {
      Http.Response r = api.chat(ONLY_AGENT, "creds-only-" + stream, "hello", stream);
      assertEquals(502, r.status(), r.body());
      JsonNode error = r.json().path("error");
      assertEquals("upstream_error", error.path("type").asText(), r.body());
      assertEquals("upstream_unavailable", error.path("code").asText(), r.body());
      String message = error.path("message").asText();
      assertTrue(message.contains("refused the gateway's credentials (HTTP 403)"), message);
      assertTrue(message.contains("gateway.upstream-api-key"), "names the setting to fix: " + message);
      assertFalse(r.body().contains("not allowed to sample") || r.body().contains("sk-node"),
          "the server's message (it may name the key) is not passed on: " + r.body());
      assertEquals("creds-only-" + stream, r.headers().firstValue("X-Session-Id").orElse(""));
    }
  }
}
