package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * OpenAI's {@code created} of the gateway's model ({@code GET /v1/models} and its retrieve) is when the model
 * was created, in unix seconds: the registration of the version serving the agent (its stable). It was 0, so a
 * client that shows or sorts models by it read 1970.
 */
class GatewayModelCreatedTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-model-created", Map.of()).serving("created-agent");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void createdIsTheRegistrationOfTheAgentsStableVersion() throws Exception {
    long registered = -1;
    for (JsonNode v : gateway.api.get("/v1/models/created-agent").json().path("versions")) {
      if (v.path("state").asText().equals("STABLE")) registered = Instant.parse(v.path("registeredAt").asText()).getEpochSecond();
    }
    assertTrue(registered > 0, "the agent has a stable version");
    JsonNode list = get("/v1/models", "created-agent");
    assertEquals(registered, list.path("data").path(0).path("created").asLong(), list.toString());
    JsonNode one = get("/v1/models/default", "created-agent");
    assertEquals(registered, one.path("created").asLong(), one.toString());
  }

  @Test
  void anAgentWithNoVersionYetIsCreatedNowAsItsV0WillBe() throws Exception {
    long before = Instant.now().getEpochSecond();
    JsonNode list = get("/v1/models", "agent-without-versions");
    long after = Instant.now().getEpochSecond();
    long created = list.path("data").path(0).path("created").asLong();
    assertTrue(created >= before && created <= after, list.toString());
    String agents = gateway.api.get("/v1/agents").body();
    assertTrue(!agents.contains("agent-without-versions"), "the read registered nothing: " + agents);
  }

  private static JsonNode get(String path, String agent) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri(path))
        .header("X-Agent-Id", agent).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }
}
