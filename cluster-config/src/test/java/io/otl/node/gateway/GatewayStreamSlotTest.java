package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code gateway.max-in-flight} counts a streamed call until its stream ends: its slot was given back
 * when the stream's headers went out, so a second slow stream and a plain call were let in past a
 * limit of one while the first stream still ran (trial t33, the OpenAI Java SDK).
 */
class GatewayStreamSlotTest {
  private static GatewayTestNode gateway;
  private static ScriptedUpstream upstream;

  @BeforeAll
  static void start() throws Exception {
    upstream = new ScriptedUpstream();
    gateway = GatewayTestNode.start("gateway-stream-slot", Map.of(
        "agentscope.training.gateway.timeout", "10s",
        "agentscope.training.gateway.max-in-flight", 1));
    Http.Response r = gateway.api.post("/v1/models/slots/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, r.status(), r.body());
    gateway.awaitState("slots", "v1", "STABLE");
  }

  @AfterAll
  static void stop() throws Exception {
    if (gateway != null) gateway.close();
    if (upstream != null) upstream.close();
  }

  private static String chunk(String text, String finish) {
    return "data: {\"id\":\"chatcmpl-slot\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"},\"logprobs\":null,\"finish_reason\":"
        + (finish == null ? "null" : "\"" + finish + "\"") + "}]}\n\n";
  }

  private static HttpRequest call(String session, boolean stream) {
    return HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "slots").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"stream\":" + stream
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"count slowly\"}]}"))
        .build();
  }

  @Test
  void aRunningStreamHoldsItsSlotUntilItEnds() throws Exception {
    upstream.answer(new ScriptedUpstream.Script(
        List.of(chunk("one", null), chunk(" two", null), chunk(" three", "stop"), "data: [DONE]\n\n"),
        false, false, 1500));
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<InputStream> running = client.send(call("slot-1", true), HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, running.statusCode());
    try (InputStream events = running.body()) {
      assertTrue(events.read() >= 0, "the stream has started");

      HttpResponse<String> second = client.send(call("slot-2", true), HttpResponse.BodyHandlers.ofString());
      assertEquals(429, second.statusCode(), second.body());
      assertTrue(second.body().contains("overloaded"), second.body());
      // The operator reads which limit refused it, as the recordings' 429 names its own (trial t157).
      assertTrue(second.body().contains("(gateway.max-in-flight)"), second.body());

      String rest = new String(events.readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(rest.contains("[DONE]"), rest);
    }
    upstream.answer(new ScriptedUpstream.Script(
        List.of(chunk("done", "stop"), "data: [DONE]\n\n"), false, false, 0));
    HttpResponse<String> after = Await.until("a call after the stream ended is let in", Duration.ofSeconds(20),
        () -> send(client, call("slot-3", true)), r -> r.statusCode() != 429);
    assertEquals(200, after.statusCode(), after.body());
  }

  private static HttpResponse<String> send(HttpClient client, HttpRequest request) {
    try {
      return client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
