package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Plain JDK HTTP for reading the simulator's admin endpoints, plus bounded polling. */
public final class TestHttp {

  public static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private TestHttp() {}

  public static HttpResponse<String> get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).GET().build());
  }

  public static HttpResponse<String> post(String url, String json) {
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
            .build());
  }

  public static HttpResponse<String> delete(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).DELETE().build());
  }

  public static JsonNode json(HttpResponse<String> response) {
    try {
      return MAPPER.readTree(response.body());
    } catch (IOException e) {
      throw new AssertionError("not JSON: " + response.body(), e);
    }
  }

  private static HttpResponse<String> send(HttpRequest request) {
    try {
      return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException | InterruptedException e) {
      throw new AssertionError("request " + request.uri() + " failed", e);
    }
  }

  public static <T> T join(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Polls until the condition holds (bounded), returning the last value; no fixed sleeps. */
  public static <T> T await(Supplier<T> probe, Predicate<T> done, Duration limit) {
    Instant deadline = Instant.now().plus(limit);
    T last = probe.get();
    while (!done.test(last)) {
      if (Instant.now().isAfter(deadline)) {
        throw new AssertionError("condition not met within " + limit + "; last value: " + last);
      }
      try {
        Thread.sleep(25);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
      last = probe.get();
    }
    return last;
  }

  /** A port nothing listens on (bound and released). */
  public static int freePort() {
    return io.otl.node.testing.FreePorts.take();
  }
}
