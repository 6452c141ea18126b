package io.otl.node.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client-side retry policy of the README ("Client retries"): a request that fails with a
 * connection error, a timeout, 429 or 503 is sent again, with the same body and so the same
 * {@code eventId}s (the session acknowledges a repeat as a duplicate), to the next node, with
 * exponential back-off (200 ms doubling to 2 s) until a deadline. 4xx other than 429 are final, and
 * so is any 5xx other than 503 (recorded in {@link #serverErrors}).
 */
final class RetryingClient {
  static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  final AtomicInteger retries = new AtomicInteger();
  /** Every answer with a 5xx status other than 503, whoever sent the request (retries, probes, reads). */
  final List<String> serverErrors = new java.util.concurrent.CopyOnWriteArrayList<>();

  record Reply(int status, String body, int port) {
    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (Exception e) {
        throw new AssertionError("not JSON (" + status + "): " + body, e);
      }
    }
  }

  /** One attempt; empty on a connection error or timeout. */
  Optional<Reply> once(String method, int port, String path, String body, Duration timeout) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(timeout)
        .header("Content-Type", "application/json");
    b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
        : b.method(method, HttpRequest.BodyPublishers.ofString(body));
    try {
      HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() >= 500 && r.statusCode() != 503) {
        serverErrors.add(method + " :" + port + path + " -> " + r.statusCode() + " " + r.body());
      }
      return Optional.of(new Reply(r.statusCode(), r.body(), port));
    } catch (java.io.IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /**
   * A 5xx other than 503 is a server bug, never part of the retry contract: it is not retried (so it
   * reaches the caller) and is kept here for the test to assert there were none.
   */
  static boolean retryable(Optional<Reply> r) {
    return r.isEmpty() || r.get().status() == 503 || r.get().status() == 429;
  }

  /**
   * Sends until a non-retryable answer, trying {@code ports} in turn from {@code first}; empty when
   * {@code deadline} passed without one.
   */
  Optional<Reply> send(String method, List<Integer> ports, int first, String path, String body, Duration deadline) {
    long end = System.nanoTime() + deadline.toNanos();
    long backoff = 200;
    for (int attempt = 0; ; attempt++) {
      int port = ports.get(Math.floorMod(first + attempt, ports.size()));
      Optional<Reply> r = once(method, port, path, body, Duration.ofSeconds(8));
      if (!retryable(r)) return r;
      if (System.nanoTime() > end) return Optional.empty();
      retries.incrementAndGet();
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.empty();
      }
      backoff = Math.min(2000, backoff * 2);
    }
  }
}
