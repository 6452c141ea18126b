package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node that is stopping answers every request 503 for the drain. On the gateway's chat path its
 * clients (OpenAI's SDKs) read OpenAI's error object: the API's {@code {"error":"unavailable",
 * "message"}} reached them as an error whose body was the bare word "unavailable", the reason lost
 * (3-node trial, rolling restart with SIGTERM, OpenAI Python client). The API's own paths keep the
 * API's shape. Real guard, real HTTP over loopback.
 */
class StoppingNodeGatewayErrorTest {
  private static final ActorTestKit kit = ActorTestKit.create();
  private static final AtomicBoolean stopping = new AtomicBoolean(true);
  private static final HttpClient client = HttpClient.newHttpClient();
  private static ServerBinding binding;

  @BeforeAll
  static void bind() throws Exception {
    RequestGuard guard = new RequestGuard(16, new ApiMetrics(new MetricsRegistry()), stopping::get,
        new ClientErrorLog(Duration.ofSeconds(10)), Set.of(ApiRoutes.GATEWAY_CHAT), Map.of(), r -> Optional.empty());
    binding = Http.get(kit.system()).newServerAt("127.0.0.1", 0)
        .bind(guard.wrap(complete("never reached while stopping")))
        .toCompletableFuture().get();
  }

  @AfterAll
  static void unbind() throws Exception {
    binding.unbind().toCompletableFuture().get();
    kit.shutdownTestKit();
  }

  private static HttpResponse<String> post(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":[]}")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theGatewaysChatPathAnswersAStoppingNodesRefusalInOpenAisShape() throws Exception {
    HttpResponse<String> r = post("/v1/chat/completions");
    assertEquals(503, r.statusCode(), r.body());
    JsonNode error = Json.MAPPER.readTree(r.body()).path("error");
    assertEquals("service_unavailable", error.path("type").asText(), r.body());
    assertEquals("node_stopping", error.path("code").asText(), r.body());
    assertEquals("the node is stopping; retry on another node", error.path("message").asText(), r.body());
    assertEquals(Optional.of("1"), r.headers().firstValue("Retry-After"));
  }

  @Test
  void theApisPathsKeepTheApisShape() throws Exception {
    HttpResponse<String> r = post("/v1/sessions/s-1/events");
    assertEquals(503, r.statusCode(), r.body());
    JsonNode body = Json.MAPPER.readTree(r.body());
    assertEquals("unavailable", body.path("error").asText(), r.body());
    assertEquals("the node is stopping; retry on another node", body.path("message").asText(), r.body());
  }
}
