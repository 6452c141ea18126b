package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An entity that does not answer (its node was killed and its shards are not placed yet) makes the
 * route's ask time out: 503 {@code unavailable} with Retry-After. Trial t6 (3 nodes, kill -9 of one,
 * GET /v1/models/{agent}/route on a survivor) got "the journal did not answer in time; nothing is
 * guaranteed stored, retry the request": wrong for a read, and the journal was fine. The message now
 * names what did not answer and speaks of storage only for a write. Real guard, the routes' own
 * error mapping, an ask to an actor that never replies, real HTTP over loopback.
 */
class EntityTimeoutMessageTest {
  private static final ActorTestKit kit = ActorTestKit.create();
  private static final HttpClient client = HttpClient.newHttpClient();
  private static ServerBinding binding;

  @BeforeAll
  static void bind() throws Exception {
    ActorRef<ActorRef<String>> silent = kit.spawn(Behaviors.ignore());
    // Each request asks anew (a route value is built once).
    Route asksTheSilentEntity = extractRequest(r -> completeWithFuture(SessionRoutes.guard(() -> AskPattern
        .<ActorRef<String>, String>ask(silent, replyTo -> replyTo, Duration.ofMillis(200), kit.scheduler())
        .thenApply(ApiErrors::ok))));
    RequestGuard guard = new RequestGuard(16, new ApiMetrics(new MetricsRegistry()), () -> false,
        new ClientErrorLog(Duration.ofSeconds(10)), Set.of(ApiRoutes.GATEWAY_CHAT), Map.of(), r -> Optional.empty());
    binding = Http.get(kit.system()).newServerAt("127.0.0.1", 0)
        .bind(guard.wrap(asksTheSilentEntity))
        .toCompletableFuture().get();
  }

  @AfterAll
  static void unbind() throws Exception {
    binding.unbind().toCompletableFuture().get();
    kit.shutdownTestKit();
  }

  private static HttpResponse<String> send(HttpRequest.Builder b, String path) throws Exception {
    return client.send(b.uri(URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String unavailableMessage(HttpResponse<String> r) throws Exception {
    assertEquals(503, r.statusCode(), r.body());
    assertTrue(r.headers().firstValue("Retry-After").isPresent(), "503 without Retry-After: " + r.headers());
    JsonNode body = Json.MAPPER.readTree(r.body());
    assertEquals("unavailable", body.path("error").asText(), r.body());
    return body.path("message").asText();
  }

  @Test
  void aReadOfAnEntityThatDoesNotAnswerNamesItAndSpeaksOfNoStorage() throws Exception {
    String message = unavailableMessage(send(HttpRequest.newBuilder().GET(), "/v1/models/a1/route?sessionId=s-1"));
    assertTrue(message.startsWith("the agent's model versions did not answer in time (the node holding it may be down,"
        + " or moving it to another node)"), message);
    assertTrue(message.endsWith("retry the request"), message);
    assertFalse(message.contains("stored"), message);
    assertFalse(message.contains("journal"), message);

    String session = unavailableMessage(send(HttpRequest.newBuilder().GET(), "/v1/sessions/s-1"));
    assertTrue(session.startsWith("the session did not answer in time"), session);
    assertFalse(session.contains("stored"), session);
  }

  @Test
  void aWriteStillSaysItMayNotBeStored() throws Exception {
    String message = unavailableMessage(send(HttpRequest.newBuilder().header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"agentId\":\"a1\",\"events\":[]}")), "/v1/sessions/s-1/events"));
    assertEquals("the session did not answer in time (the node holding it may be down, or moving it to another node,"
        + " or the journal slow); nothing is guaranteed stored, retry the request", message);
  }
}
