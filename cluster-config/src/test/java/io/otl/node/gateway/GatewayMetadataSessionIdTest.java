package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * design §7.5 names the session by {@code X-Session-Id}, else {@code metadata.session_id}. The gateway
 * forwarded that metadata to the model server as the agent sent it, and OpenAI refuses {@code metadata}
 * without {@code "store": true} (400 "The 'metadata' parameter is only allowed when 'store' is
 * enabled"): with OpenAI as v0's server (the AgentScope model section's base_url) every call that
 * named its session the design's second way failed (trial t56). The session id is the gateway's and
 * goes no further; the agent's other metadata passes as sent.
 */
class GatewayMetadataSessionIdTest {
  private static final String AGENT = "metadata-agent";
  private static final ObjectMapper JSON = new ObjectMapper();

  private static StandInModelServer openAiLike;
  private static final List<JsonNode> received = new CopyOnWriteArrayList<>();
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    // Answers as OpenAI does: metadata only with store, else 400.
    openAiLike = StandInModelServer.start(bytes -> {
      JsonNode request = read(bytes);
      received.add(request);
      boolean refused = request.has("metadata") && !request.path("store").asBoolean(false);
      return refused
          ? new StandInModelServer.Answer(400, "{\"error\":{\"message\":\"The 'metadata' parameter is only allowed "
              + "when 'store' is enabled.\",\"type\":\"invalid_request_error\",\"param\":\"metadata\",\"code\":null}}")
          : new StandInModelServer.Answer(200, "{\"id\":\"chatcmpl-meta\",\"object\":\"chat.completion\",\"created\":1,"
              + "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
              + "\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,"
              + "\"total_tokens\":4}}");
    });
    gateway = GatewayTestNode.start("gateway-metadata-session",
        Map.of("agentscope.training.training-runner.trigger.min-samples", 1000));
    api = gateway.api;
    // The agent's first version, stable at once (no base model here), is served by the OpenAI-like server.
    Http.Response v1 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v1\",\"artifact\":\"openai\","
        + "\"endpoint\":\"" + openAiLike.url() + "\"}");
    assertEquals(201, v1.status(), v1.body());
    gateway.awaitState(AGENT, "v1", "STABLE");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
    if (openAiLike != null) openAiLike.close();
  }

  private static JsonNode read(byte[] bytes) {
    try {
      return JSON.readTree(bytes);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Http.Response chat(String metadata) {
    String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],"
        + "\"metadata\":" + metadata + "}";
    return api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT);
  }

  @Test
  void theSessionIdInMetadataNamesTheSessionAndIsNotForwarded() {
    received.clear();
    Http.Response r = chat("{\"session_id\":\"meta-session-1\"}");
    assertEquals(200, r.status(), r.body());
    assertEquals("meta-session-1", r.headers().firstValue("X-Session-Id").orElse(""));
    assertEquals(1, received.size());
    assertFalse(received.get(0).has("metadata"), "nothing else was in it: " + received.get(0));
    assertEquals("v1", api.get("/v1/sessions/meta-session-1").json().path("modelVersion").asText(),
        "the turn is recorded in the session the metadata named");
  }

  @Test
  void theAgentsOtherMetadataPassesAsSent() {
    received.clear();
    Http.Response r = chat("{\"session_id\":\"meta-session-2\",\"team\":\"support\"}");
    // OpenAI refuses it (no store): the agent's own metadata is the agent's to send; only the id is taken out.
    assertEquals(400, r.status(), r.body());
    assertEquals(1, received.size());
    assertEquals("{\"team\":\"support\"}", received.get(0).path("metadata").toString());
    Http.Response stored = api.postWithHeaders("/v1/chat/completions", ("{\"model\":\"gpt-4o-mini\",\"store\":true,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],\"metadata\":{\"session_id\":\"meta-session-3\","
        + "\"team\":\"support\"}}").getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT);
    assertEquals(200, stored.status(), stored.body());
    assertEquals("meta-session-3", stored.headers().firstValue("X-Session-Id").orElse(""));
    JsonNode forwarded = received.get(1);
    assertEquals("{\"team\":\"support\"}", forwarded.path("metadata").toString(), forwarded.toString());
    assertTrue(forwarded.path("store").asBoolean(), forwarded.toString());
  }
}
