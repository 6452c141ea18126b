package io.otl.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/** A blocking loopback HTTP client; a timeout or connection error is status -1 / -2, never an exception. */
final class Client {
  static final int TIMEOUT = -1;
  static final int CONNECTION_ERROR = -2;

  record Reply(int status, String body, long nanos) {}

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();
  private final String base;
  private final Duration timeout;

  Client(int port, Duration timeout) {
    this.base = "http://127.0.0.1:" + port;
    this.timeout = timeout;
  }

  Reply send(String method, String path, byte[] body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    long t0 = System.nanoTime();
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Reply(r.statusCode(), r.body(), System.nanoTime() - t0);
    } catch (HttpTimeoutException e) {
      return new Reply(TIMEOUT, e.toString(), System.nanoTime() - t0);
    } catch (IOException e) {
      return new Reply(CONNECTION_ERROR, e.toString(), System.nanoTime() - t0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Reply(CONNECTION_ERROR, e.toString(), System.nanoTime() - t0);
    }
  }

  Reply post(String path, String body) {
    return send("POST", path, body == null ? null : body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  Reply get(String path) {
    return send("GET", path, null);
  }
}
