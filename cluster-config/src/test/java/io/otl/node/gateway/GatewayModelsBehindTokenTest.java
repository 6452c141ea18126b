package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.OpenAIServiceException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's model paths on a node with both agent keys and {@code auth.token}, as docs/gateway.md
 * advises running it. An agent's {@code models().delete(…)} (and any method but GET on {@code /v1/models}) is
 * OpenAI's 405 there too: the API's write check answered it first, with the API's 401 "the bearer token is
 * wrong" in the API's shape, to an agent whose key the gateway takes (trial t79, the openai Python client). A
 * wrong key is still the gateway's 401, and the API's own routes under {@code /v1/models/{agentId}} still
 * need the node's token.
 */
class GatewayModelsBehindTokenTest {
  private static final String TOKEN = "node-token-" + UUID.randomUUID();
  private static final String KEY = "sk-models-agent-" + UUID.randomUUID();
  private static final String AGENT = "models-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-models-token", Map.of("agentscope.training.auth.token", TOKEN,
        "agentscope.training.gateway.agents." + AGENT + ".api-key", KEY)).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static OpenAIClient client(String key) {
    return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(gateway.uri("/v1").toString()).maxRetries(0).build();
  }

  private static HttpResponse<String> call(String method, String path, String key) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri(path))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .method(method, HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAgentsWrongMethodOnTheModelPathsIsOpenAis405() throws Exception {
    for (String name : List.of("default", "gpt-4o-mini")) {
      OpenAIServiceException e = assertThrows(OpenAIServiceException.class, () -> client(KEY).models().delete(name));
      assertEquals(405, e.statusCode(), name + ": " + e.getMessage());
      assertEquals("method_not_allowed", e.code().orElse(""), name + ": " + e.getMessage());
      assertTrue(e.headers().values("Allow").toString().contains("GET"), name + ": " + e.headers().values("Allow"));
    }
    HttpResponse<String> r = call("POST", "/v1/models", KEY);
    assertEquals(405, r.statusCode(), r.body());
    assertEquals("method_not_allowed", JSON.readTree(r.body()).path("error").path("code").asText(), r.body());
  }

  @Test
  void aWrongKeyIsStillTheGateways401AndTheApisModelRoutesStillNeedTheToken() throws Exception {
    OpenAIServiceException e = assertThrows(OpenAIServiceException.class,
        () -> client("sk-not-a-key").models().delete("default"));
    assertEquals(401, e.statusCode(), e.getMessage());
    assertEquals("invalid_api_key", e.code().orElse(""), e.getMessage());
    // The agent's own id is the API's GET /v1/models/{agentId}: its key is no API token.
    for (String[] c : new String[][] {{"DELETE", "/v1/models/" + AGENT}, {"POST", "/v1/models/" + AGENT + "/versions"},
        {"POST", "/v1/models/" + AGENT + "/versions/v0/rollback"}}) {
      HttpResponse<String> r = call(c[0], c[1], KEY);
      assertEquals(401, r.statusCode(), c[0] + " " + c[1] + ": " + r.body());
      JsonNode body = JSON.readTree(r.body());
      assertEquals("unauthorized", body.path("error").asText(), c[0] + " " + c[1] + ": " + r.body());
    }
    assertEquals(AGENT, gateway.api.get("/v1/models/" + AGENT).json().path("agentId").asText());
  }
}
