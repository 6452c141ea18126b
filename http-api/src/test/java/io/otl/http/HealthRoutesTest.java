package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /health/ready} over real HTTP (design §7.1): 200 when every check passes, else 503 with the
 * failing checks, and, like every error of the API, {@code {"error","message"}} (a client that reads
 * errors one way reads this one too).
 */
class HealthRoutesTest {
  private static final ActorTestKit kit = ActorTestKit.create();
  private static final AtomicBoolean journalUp = new AtomicBoolean(true);
  private static final AtomicBoolean stopping = new AtomicBoolean(false);
  private static ServerBinding binding;
  private static final HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  static void bind() throws Exception {
    ReadinessCheck journal = check("journal", () -> journalUp.get()
        ? ReadinessCheck.Result.up("h2") : ReadinessCheck.Result.down("no answer within 2s"));
    ReadinessCheck cluster = check("cluster", () -> ReadinessCheck.Result.up("member Up"));
    HealthRoutes health = new HealthRoutes(List.of(journal, cluster), stopping::get);
    binding = Http.get(kit.system()).newServerAt("127.0.0.1", 0).bind(health.route())
        .toCompletableFuture().get();
  }

  @AfterAll
  static void unbind() throws Exception {
    binding.unbind().toCompletableFuture().get();
    kit.shutdownTestKit();
  }

  private static ReadinessCheck check(String name, java.util.function.Supplier<ReadinessCheck.Result> result) {
    return new ReadinessCheck() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public java.util.concurrent.CompletionStage<Result> check() {
        return CompletableFuture.completedFuture(result.get());
      }
    };
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readyIs200WhenEveryCheckPassesAnd503WithAnErrorObjectOtherwise() throws Exception {
    journalUp.set(true);
    stopping.set(false);
    HttpResponse<String> up = get("/health/ready");
    assertEquals(200, up.statusCode(), up.body());
    JsonNode ok = Json.MAPPER.readTree(up.body());
    assertEquals("UP", ok.get("status").asText());
    assertFalse(ok.has("error"), "no error while ready: " + up.body());
    assertTrue(ok.get("checks").get("journal").get("ok").asBoolean());

    journalUp.set(false);
    HttpResponse<String> down = get("/health/ready");
    assertEquals(503, down.statusCode(), down.body());
    JsonNode d = Json.MAPPER.readTree(down.body());
    assertEquals("DOWN", d.get("status").asText());
    assertEquals("not_ready", d.get("error").asText());
    assertEquals("not ready: journal: no answer within 2s", d.get("message").asText());
    assertFalse(d.get("checks").get("journal").get("ok").asBoolean());
    assertTrue(d.get("checks").get("cluster").get("ok").asBoolean());

    journalUp.set(true);
    stopping.set(true);
    HttpResponse<String> stop = get("/health/ready");
    assertEquals(503, stop.statusCode(), stop.body());
    assertEquals("not ready: shutdown: node is stopping", Json.MAPPER.readTree(stop.body()).get("message").asText());
    stopping.set(false);

    assertEquals(200, get("/health/live").statusCode(), "liveness does not depend on the checks");
  }
}
