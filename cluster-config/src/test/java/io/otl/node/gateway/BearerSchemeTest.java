package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.Authenticator;
import java.net.PasswordAuthentication;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How the node reads {@code Authorization: Bearer}, on its three doors that take a bearer token (the
 * API's writes, the gateway, the metrics scrape). Every 401 of the node carries a {@code WWW-Authenticate: Bearer} challenge (RFC 9110 §11.6.1): the
 * gateway's and {@code /metrics}' did not, and the JDK's HttpClient with an Authenticator (how a Java
 * client answers challenges) then failed with "WWW-Authenticate header missing for response code 401"
 * instead of handing the caller the refusal (trial t35). The scheme's name is case-insensitive
 * (RFC 9110 §11.1): {@code bearer <key>} was a 401 "the bearer token is wrong" with the right token.
 */
class BearerSchemeTest {
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("bearer-scheme", Map.of(
        "agentscope.training.auth.token", "node-token-1",
        "agentscope.training.auth.metrics-token", "scrape-token-1",
        "agentscope.training.gateway.agents.keyed-bot.api-key", "agent-key-1")).serving("keyed-bot");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void everyRefusalNamesTheBearerSchemeToAClientThatAnswersChallenges() throws Exception {
    // An authenticator that has nothing to offer: the client must give the caller the 401 itself.
    HttpClient client = HttpClient.newBuilder().authenticator(new Authenticator() {
      @Override
      protected PasswordAuthentication getPasswordAuthentication() {
        return null;
      }
    }).build();
    long forwardedBefore = gateway.simulatorRequests();
    String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    Map<String, HttpRequest> refused = Map.of(
        "gateway", HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
            .header("Authorization", "Bearer not-a-key").header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(chat)).build(),
        "api", HttpRequest.newBuilder(gateway.uri("/v1/sessions/challenge-1/events"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"agentId\":\"a\",\"events\":[{\"type\":\"start\"}]}")).build(),
        "metrics", HttpRequest.newBuilder(gateway.uri("/metrics")).GET().build());
    for (Map.Entry<String, HttpRequest> e : refused.entrySet()) {
      HttpResponse<String> r = client.send(e.getValue(), HttpResponse.BodyHandlers.ofString());
      assertEquals(401, r.statusCode(), e.getKey() + ": " + r.body());
      assertEquals("Bearer realm=\"otl\"", r.headers().firstValue("WWW-Authenticate").orElse("(none)"), e.getKey());
    }
    assertEquals(forwardedBefore, gateway.simulatorRequests(), "the refused call was not forwarded");
  }

  @Test
  void theSchemeNameIsCaseInsensitiveAndAnEmptyTokenIsNamed() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    HttpResponse<String> answered = client.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Authorization", "bearer agent-key-1").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(chat)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, answered.statusCode(), answered.body());
    String events = "{\"agentId\":\"a\",\"events\":[{\"type\":\"start\",\"eventId\":\"e1\"}]}";
    HttpResponse<String> stored = client.send(HttpRequest.newBuilder(gateway.uri("/v1/sessions/scheme-1/events"))
        .header("Authorization", "BEARER node-token-1").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(events)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(202, stored.statusCode(), stored.body());
    assertEquals(200, client.send(HttpRequest.newBuilder(gateway.uri("/metrics"))
        .header("Authorization", "bearer scrape-token-1").GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    HttpResponse<String> empty = client.send(HttpRequest.newBuilder(gateway.uri("/v1/sessions/scheme-2/events"))
        .header("Authorization", "Bearer ").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(events)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(401, empty.statusCode());
    assertEquals("the Authorization header has no token after Bearer; send Authorization: Bearer <token>",
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(empty.body()).path("message").asText(), empty.body());
  }
}
