package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.RawHttp;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two Authorization headers with different values are refused, on the API and on the gateway: the
 * first one was taken, so a wrong token followed by the right one was a 401 and the right one
 * followed by a wrong one a 202, an order that a proxy adding or appending its own header decides.
 * A real node with {@code auth.token} and an agent's gateway key; raw requests over loopback.
 */
class DuplicateAuthorizationTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "node-token-1";
  private static final String KEY = "agent-key-1";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("duplicate-authorization", Map.of(
        "agentscope.training.auth.token", TOKEN,
        "agentscope.training.gateway.agents.keyed-bot.api-key", KEY)).serving("keyed-bot");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static RawHttp.Answer post(String path, String authorizations, String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return RawHttp.exchange(gateway.uri("/").getPort(), "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + "Content-Type: application/json\r\n" + authorizations + "Content-Length: " + bytes.length, bytes, 30_000);
  }

  @Test
  void theApiRefusesTwoDifferentTokensInEitherOrder() throws Exception {
    String body = "{\"agentId\":\"a1\",\"events\":[{\"type\":\"start\",\"eventId\":\"e1\"}]}";
    for (String headers : new String[] {
        "Authorization: Bearer " + TOKEN + "\r\nAuthorization: Bearer wrong\r\n",
        "Authorization: Bearer wrong\r\nAuthorization: Bearer " + TOKEN + "\r\n"}) {
      RawHttp.Answer a = post("/v1/sessions/twice-1/events", headers, body);
      assertEquals(401, a.status(), a.head() + a.body());
      assertEquals("the Authorization header is sent more than once; send it once",
          JSON.readTree(a.body()).path("message").asText(), a.body());
    }
    assertEquals(404, gateway.api.get("/v1/sessions/twice-1").status(), "nothing stored");
    // The same header twice says one thing: it passes.
    String same = "Authorization: Bearer " + TOKEN + "\r\n";
    assertEquals(202, post("/v1/sessions/twice-1/events", same + same, body).status());
  }

  @Test
  void theGatewayRefusesTwoDifferentKeysInEitherOrder() throws Exception {
    String body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    long before = gateway.simulatorRequests();
    for (String headers : new String[] {
        "Authorization: Bearer " + KEY + "\r\nAuthorization: Bearer wrong\r\n",
        "Authorization: Bearer wrong\r\nAuthorization: Bearer " + KEY + "\r\n"}) {
      RawHttp.Answer a = post("/v1/chat/completions", headers, body);
      assertEquals(401, a.status(), a.head() + a.body());
      assertEquals("invalid_api_key", JSON.readTree(a.body()).path("error").path("code").asText(), a.body());
      assertTrue(a.body().contains("more than once"), a.body());
    }
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(200, post("/v1/chat/completions", "Authorization: Bearer " + KEY + "\r\n", body).status());
  }
}
