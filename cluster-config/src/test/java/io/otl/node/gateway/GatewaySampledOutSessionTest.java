package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.SessionSampler;
import io.otl.node.testing.Http;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A session the data collector samples out stores nothing, so no agent owns it. The gateway still claimed
 * such a session for the agent whose call was in flight, and another agent's call under the same id was
 * 403 until that call was answered and its empty recording settled (trial t111: with one long streamed
 * call after another, agent A kept agent B out of B's own session). A kept session is claimed as before.
 */
class GatewaySampledOutSessionTest {
  private static final double SAMPLE_RATE = 0.1;
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-sampled-out", simulator -> Map.of(
        "agentscope.model.base-url", simulator.baseUrl() + "/v1",
        "agentscope.model.model-name", "qwen-base",
        "agentscope.training.data-collector.collect-mode", "sampled",
        "agentscope.training.data-collector.sample-rate", SAMPLE_RATE));
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void aSampledOutSessionIsNobodysWhileAnotherAgentsCallOfItStreams() throws Exception {
    String session = sessionId(false);
    try (InputStream streaming = streamAsFirstBot(session)) {
      Http.Response other = gateway.api.chat("second-bot", session, "hi", false);
      assertEquals(200, other.status(), other.body());
      streaming.readAllBytes();
    }
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "a sampled-out session stores nothing");
  }

  @Test
  void aKeptSessionIsStillItsFirstAgentsWhileItsAnswerStreams() throws Exception {
    String session = sessionId(true);
    try (InputStream streaming = streamAsFirstBot(session)) {
      Http.Response other = gateway.api.chat("second-bot", session, "hi", false);
      assertEquals(403, other.status(), other.body());
      streaming.readAllBytes();
    }
    assertEquals("first-bot", gateway.api.get("/v1/sessions/" + session).json().path("agentId").asText());
  }

  /** A new session id that the collector keeps or drops, as asked. */
  private static String sessionId(boolean kept) {
    SessionSampler sampler = new SessionSampler("sampled", SAMPLE_RATE);
    while (true) {
      String id = "sampling-" + UUID.randomUUID();
      if (sampler.keep(id) == kept) return id;
    }
  }

  /** first-bot's streamed answer of the session, eight words 400 ms apart, its first bytes read. */
  private static InputStream streamAsFirstBot(String session) throws Exception {
    HttpResponse<InputStream> streaming = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "first-bot").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"stream\":true,"
            + "\"simulator_chunk_delay_ms\":400,\"messages\":[{\"role\":\"user\",\"content\":"
            + "\"one two three four five six seven eight\"}]}")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, streaming.statusCode());
    InputStream body = streaming.body();
    assertTrue(body.read(new byte[16]) > 0, "first-bot's answer is streaming");
    return body;
  }
}
