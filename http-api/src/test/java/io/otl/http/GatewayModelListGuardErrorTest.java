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
 * The gateway's model list ({@code GET /v1/models}, OpenAI's {@code client.models.list()}) is a
 * gateway path (design §7.5: errors in OpenAI's error object), so the node-wide refusals answer it in
 * that shape too, as they answer chat completions: an overloaded node's 429 reached the OpenAI Python
 * client as {@code {"error":"overloaded","message"}}, whose SDK then showed the bare word "overloaded"
 * as the error's body, with no code or type (trial t94, {@code http.max-in-flight = 1}). The API's
 * {@code /v1/models/{agentId}} keeps the API's shape. Real guard, real HTTP over loopback.
 */
class GatewayModelListGuardErrorTest {
  private static final ActorTestKit kit = ActorTestKit.create();
  private static final HttpClient client = HttpClient.newHttpClient();
  private static ServerBinding overloaded;
  private static ServerBinding stopping;

  private static ServerBinding bind(int maxInFlight, boolean stop) throws Exception {
    AtomicBoolean stopFlag = new AtomicBoolean(stop);
    RequestGuard guard = new RequestGuard(maxInFlight, new ApiMetrics(new MetricsRegistry()), stopFlag::get,
        new ClientErrorLog(Duration.ofSeconds(10)), Set.of(ApiRoutes.GATEWAY_CHAT), Map.of(), r -> Optional.empty());
    return Http.get(kit.system()).newServerAt("127.0.0.1", 0).bind(guard.wrap(complete("not refused")))
        .toCompletableFuture().get();
  }

  @BeforeAll
  static void bindBoth() throws Exception {
    overloaded = bind(0, false); // every request is over a limit of 0 in flight
    stopping = bind(16, true);
  }

  @AfterAll
  static void unbind() throws Exception {
    overloaded.unbind().toCompletableFuture().get();
    stopping.unbind().toCompletableFuture().get();
    kit.shutdownTestKit();
  }

  private static HttpResponse<String> get(ServerBinding b, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.localAddress().getPort() + path))
        .header("X-Agent-Id", "support-bot").GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode openAiError(HttpResponse<String> r, int status) throws Exception {
    assertEquals(status, r.statusCode(), r.body());
    JsonNode error = Json.MAPPER.readTree(r.body()).path("error");
    assertEquals(true, error.isObject(), "OpenAI's error object, not the API's string code: " + r.body());
    assertEquals(Optional.of("1"), r.headers().firstValue("Retry-After"));
    return error;
  }

  @Test
  void anOverloadedNodeRefusesTheModelListInOpenAisShape() throws Exception {
    JsonNode error = openAiError(get(overloaded, "/v1/models"), 429);
    assertEquals("rate_limit_exceeded", error.path("type").asText());
    assertEquals("overloaded", error.path("code").asText());
    assertEquals("the node has 0 requests in flight; retry shortly", error.path("message").asText());
  }

  @Test
  void aStoppingNodeRefusesTheModelListInOpenAisShape() throws Exception {
    JsonNode error = openAiError(get(stopping, "/v1/models"), 503);
    assertEquals("service_unavailable", error.path("type").asText());
    assertEquals("node_stopping", error.path("code").asText());
  }

  @Test
  void theApisModelsOfAnAgentKeepTheApisShape() throws Exception {
    HttpResponse<String> r = get(overloaded, "/v1/models/support-bot");
    assertEquals(429, r.statusCode(), r.body());
    assertEquals("overloaded", Json.MAPPER.readTree(r.body()).path("error").asText(), r.body());
  }
}
