package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
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
 * The gateway's body limit is {@code gateway.max-body-bytes} (4 MiB by default), not the API's 1 MiB
 * ({@code pekko.http.server.parsing.max-content-length}): agents resend their whole conversation, so
 * a long one passes 1 MiB well before it fills a model's context. Over the gateway's limit the
 * answer is OpenAI's error object, which OpenAI clients read. A real node on its defaults.
 */
class GatewayBodyLimitTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String AGENT = "long-talker";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-limit", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  /** A conversation of {@code turns} user/assistant pairs of {@code chars} characters each. */
  private static String conversation(int turns, int chars) {
    StringBuilder b = new StringBuilder("{\"model\":\"default\",\"messages\":[");
    String text = "y".repeat(chars);
    for (int i = 0; i < turns; i++) {
      b.append("{\"role\":\"user\",\"content\":\"question ").append(i).append(' ').append(text).append("\"},");
      b.append("{\"role\":\"assistant\",\"content\":\"answer ").append(i).append(' ').append(text).append("\"},");
    }
    return b.append("{\"role\":\"user\",\"content\":\"and now?\"}]}").toString();
  }

  private static Http.Response chat(String body) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT)
        .header("X-Session-Id", "long-" + UUID.randomUUID()).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    return new Http.Response(r.statusCode(), r.body(), r.headers());
  }

  @Test
  void aConversationOverTheApisLimitButUnderTheGatewaysIsAnswered() throws Exception {
    String body = conversation(40, 30_000);
    assertTrue(body.length() > 2 * 1024 * 1024 && body.length() < 4 * 1024 * 1024, "between the two limits");
    long before = gateway.simulatorRequests();
    Http.Response r = chat(body);
    assertEquals(200, r.status(), r.body().substring(0, Math.min(300, r.body().length())));
    assertTrue(r.json().path("choices").get(0).path("message").path("content").asText().contains("and now?"));
    assertEquals(before + 1, gateway.simulatorRequests(), "forwarded once");
  }

  @Test
  void aBodyOverTheGatewaysLimitIsOpenAisRequestTooLarge() throws Exception {
    long before = gateway.simulatorRequests();
    Http.Response r = chat(conversation(80, 30_000));
    assertEquals(413, r.status(), r.body());
    JsonNode error = r.json().path("error");
    assertEquals("request_too_large", error.path("code").asText(), r.body());
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
  }

  @Test
  void aBodyThatIsNotJsonIsOpenAis400WithoutEchoingWhatItHolds() throws Exception {
    long before = gateway.simulatorRequests();
    Http.Response r = chat("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":x13812345678}]}");
    assertEquals(400, r.status(), r.body());
    assertEquals("invalid_value", r.json().path("error").path("code").asText(), r.body());
    assertTrue(!r.body().contains("13812345678") && r.body().contains("line 1"), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
  }

  @Test
  void theApisOwnRoutesKeepTheirLimit() {
    String big = "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\""
        + "z".repeat(2 * 1024 * 1024) + "\"}]}";
    Http.Response r = gateway.api.post("/v1/sessions/limit-1/events", big);
    assertEquals(413, r.status(), r.body());
    assertEquals("payload_too_large", r.json().path("error").asText(), r.body());
  }
}
