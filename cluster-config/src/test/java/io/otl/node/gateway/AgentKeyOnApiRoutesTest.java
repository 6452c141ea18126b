package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An agent's gateway key sent to an API route (trial t89): an OpenAI client's user gets an answer with
 * the agent's key, then rates it with {@code POST /v1/sessions/{id}/feedback} and the same key. That is
 * a 401 (the key opens the gateway only, docs/gateway.md), but it said "the bearer token is wrong", as
 * for a typo, about a key the gateway had just taken. It now says what the key is and which token the
 * route needs; any other token keeps the old answer, and nothing is stored either way.
 */
class AgentKeyOnApiRoutesTest {
  private static final String TOKEN = "node-token-" + UUID.randomUUID();
  private static final String KEY = "sk-rating-agent-" + UUID.randomUUID();
  private static final String AGENT = "rating-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("agent-key-api-routes", Map.of("agentscope.training.auth.token", TOKEN,
        "agentscope.training.gateway.agents." + AGENT + ".api-key", KEY)).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static HttpResponse<String> post(String path, String key, String body) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri(path))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAgentsKeyOnTheApiIsToldItOpensTheGatewayOnly() throws Exception {
    String session = "rated-" + UUID.randomUUID();
    HttpResponse<String> chat = post("/v1/chat/completions", KEY, "{\"model\":\"default\",\"metadata\":"
        + "{\"session_id\":\"" + session + "\"},\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    assertEquals(200, chat.statusCode(), chat.body());
    for (String[] c : new String[][] {
        {"/v1/sessions/" + session + "/feedback", "{\"kind\":\"THUMBS_UP\"}"},
        {"/v1/feedback/thumbs?sessionId=" + session + "&helpful=true", ""},
        {"/v1/sessions/" + session + "/events", "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"result\","
            + "\"status\":\"SUCCESS\"}]}"}}) {
      HttpResponse<String> r = post(c[0], KEY, c[1]);
      assertEquals(401, r.statusCode(), c[0] + ": " + r.body());
      JsonNode body = JSON.readTree(r.body());
      assertEquals("unauthorized", body.path("error").asText(), r.body());
      String message = body.path("message").asText();
      assertTrue(message.contains("gateway key") && message.contains("auth.token"), c[0] + ": " + message);
      assertFalse(message.contains(KEY) || message.contains(AGENT), "names neither the key nor its agent: " + message);
    }
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json();
    assertTrue(stored.path("feedback").isEmpty(), stored.toString());
    assertEquals("ACTIVE", stored.path("status").asText(), stored.toString());
  }

  @Test
  void anyOtherTokenIsStillJustWrong() throws Exception {
    HttpResponse<String> r = post("/v1/sessions/s-" + UUID.randomUUID() + "/feedback", "sk-typo", "{\"kind\":\"THUMBS_UP\"}");
    assertEquals(401, r.statusCode(), r.body());
    assertEquals("the bearer token is wrong", JSON.readTree(r.body()).path("message").asText(), r.body());
  }
}
