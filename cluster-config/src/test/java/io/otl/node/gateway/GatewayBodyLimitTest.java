package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
  private static TrainingNode node;
  private static TrinitySimulator simulator;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "gateway-limit-" + UUID.randomUUID()));
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true));
    simulator = TrinitySimulator.start(node.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    api = new Http(node.httpPort());
    Http.Response r = api.post("/v1/models/long-talker/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}");
    assertEquals(201, r.status(), r.body());
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static long simulatorRequests() {
    return new Http(simulator.port()).get("/metrics").json().path("rollout/model_0/total_request_count").asLong();
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
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", "long-talker")
        .header("X-Session-Id", "long-" + UUID.randomUUID()).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    return new Http.Response(r.statusCode(), r.body(), r.headers());
  }

  @Test
  void aConversationOverTheApisLimitButUnderTheGatewaysIsAnswered() throws Exception {
    awaitStable();
    String body = conversation(40, 30_000);
    assertTrue(body.length() > 2 * 1024 * 1024 && body.length() < 4 * 1024 * 1024, "between the two limits");
    long before = simulatorRequests();
    Http.Response r = chat(body);
    assertEquals(200, r.status(), r.body().substring(0, Math.min(300, r.body().length())));
    assertTrue(r.json().path("choices").get(0).path("message").path("content").asText().contains("and now?"));
    assertEquals(before + 1, simulatorRequests(), "forwarded once");
  }

  @Test
  void aBodyOverTheGatewaysLimitIsOpenAisRequestTooLarge() throws Exception {
    awaitStable();
    long before = simulatorRequests();
    Http.Response r = chat(conversation(80, 30_000));
    assertEquals(413, r.status(), r.body());
    JsonNode error = r.json().path("error");
    assertEquals("request_too_large", error.path("code").asText(), r.body());
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertEquals(before, simulatorRequests(), "nothing forwarded");
  }

  @Test
  void aBodyThatIsNotJsonIsOpenAis400WithoutEchoingWhatItHolds() throws Exception {
    long before = simulatorRequests();
    Http.Response r = chat("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":x13812345678}]}");
    assertEquals(400, r.status(), r.body());
    assertEquals("invalid_value", r.json().path("error").path("code").asText(), r.body());
    assertTrue(!r.body().contains("13812345678") && r.body().contains("line 1"), r.body());
    assertEquals(before, simulatorRequests(), "nothing forwarded");
  }

  @Test
  void theApisOwnRoutesKeepTheirLimit() {
    String big = "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\""
        + "z".repeat(2 * 1024 * 1024) + "\"}]}";
    Http.Response r = api.post("/v1/sessions/limit-1/events", big);
    assertEquals(413, r.status(), r.body());
    assertEquals("payload_too_large", r.json().path("error").asText(), r.body());
  }

  private static void awaitStable() throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      if (api.get("/v1/models/long-talker").body().contains("\"STABLE\"")) return;
      Thread.sleep(100);
    }
    throw new AssertionError("v1 never became STABLE: " + api.get("/v1/models/long-talker").body());
  }
}
