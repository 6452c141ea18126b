package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Http;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Another agent's key on a session whose first answer is not recorded yet (its stream still runs;
 * recording is off the response path) was forwarded and answered 200: the owner reached the gateway's
 * memory and the journal only with the recording. docs/gateway.md promises 403, nothing forwarded.
 */
class GatewaySessionClaimTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String KEY_A = "sk-claim-a";
  private static final String KEY_B = "sk-claim-b";
  /** An agent with a key and no model version: its own calls have nothing to be routed to (404). */
  private static final String KEY_C = "sk-claim-c";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-claim", Map.of(
        "agentscope.training.gateway.agents.claim-a.api-key", KEY_A,
        "agentscope.training.gateway.agents.claim-b.api-key", KEY_B,
        "agentscope.training.gateway.agents.claim-c.api-key", KEY_C)).serving("claim-a", "claim-b");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static HttpRequest chat(String key, String session, String body) {
    return HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Authorization", "Bearer " + key).header("X-Session-Id", session)
        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }

  /** A call of the agent holding {@code key} in {@code session}: one user message, answered whole. */
  private static HttpResponse<String> ask(String key, String session, String text) throws Exception {
    return CLIENT.send(chat(key, session,
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}]}"),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The call of the agent holding {@code key} in another agent's session: 403, nothing forwarded. */
  private static void assertRefusedAsAnotherAgentsSession(String key, String session) throws Exception {
    long before = gateway.simulatorRequests();
    HttpResponse<String> r = ask(key, session, "hi");
    assertEquals(403, r.statusCode(), r.body());
    assertEquals("session_of_other_agent",
        new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error").path("code").asText());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
  }

  @Test
  void anotherAgentsCallWhileTheOwnersFirstAnswerStreamsIsA403AndNothingIsForwarded() throws Exception {
    String session = "claimed-" + UUID.randomUUID();
    HttpResponse<InputStream> streaming = CLIENT.send(chat(KEY_A, session,
        "{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":400,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"one two three four five six seven eight\"}]}"),
        HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, streaming.statusCode());
    try (InputStream in = streaming.body()) {
      assertTrue(in.read(new byte[16]) > 0, "claim-a's answer is streaming");
      assertRefusedAsAnotherAgentsSession(KEY_B, session);
      in.readAllBytes();
    }
    Http.Response s = gateway.api.get("/v1/sessions/" + session);
    for (int i = 0; i < 100 && !(s.status() == 200 && s.json().path("messages").size() == 2); i++) {
      Thread.sleep(100);
      s = gateway.api.get("/v1/sessions/" + session);
    }
    assertEquals("claim-a", s.json().path("agentId").asText(), s.body());
    assertEquals(2, s.json().path("messages").size(), "claim-b's call left nothing in the session");
  }

  /**
   * The owner check comes before the caller's own routing: an agent that has no version to be routed
   * to, calling with another agent's session, is told the session is not its own (403), not that it
   * has no model (404), and nothing is forwarded.
   */
  @Test
  void anotherAgentsCallIsA403EvenWhenItsOwnRoutingFails() throws Exception {
    String session = "claimed-unroutable-" + UUID.randomUUID();
    HttpResponse<String> a = ask(KEY_A, session, "hello");
    assertEquals(200, a.statusCode(), a.body());
    assertRefusedAsAnotherAgentsSession(KEY_C, session);
    HttpResponse<String> own = ask(KEY_C, "own-" + UUID.randomUUID(), "hi");
    assertEquals(404, own.statusCode(), "claim-c's own session has no version to go to: " + own.body());
  }
}
