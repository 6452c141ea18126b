package io.otl.node.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client over loopback for API tests. */
public final class Http {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;
  private String token;

  public Http(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  public Http withToken(String token) {
    this.token = token;
    return this;
  }

  public record Response(int status, String body, java.net.http.HttpHeaders headers) {
    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (Exception e) {
        throw new AssertionError("not JSON (" + status + "): " + body, e);
      }
    }
  }

  public Response get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  public Response post(String path, String body) {
    return send(HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json")
        .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)));
  }

  public Response put(String path, String body) {
    return send(HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
  }

  public Response postBytes(String path, byte[] body) {
    return send(HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
  }

  /** A POST whose Content-Type is {@code contentType} (null: none sent). */
  public Response postBytes(String path, byte[] body, String contentType) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) b.header("Content-Type", contentType);
    return send(b);
  }

  /** A POST of a body of this Content-Type with extra headers, name then value. */
  public Response postBytes(String path, byte[] body, String contentType, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
    return send(b);
  }

  /** A POST of a JSON body with extra headers, name then value. */
  public Response postWithHeaders(String path, byte[] body, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
    return send(b);
  }

  /** A GET with extra headers, name then value. */
  public Response get(String path, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).GET();
    for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
    return send(b);
  }

  /**
   * One gateway call as an agent without a key makes it: model {@code default}, one user message,
   * the agent and the session in {@code X-Agent-Id} and {@code X-Session-Id}.
   */
  public Response chat(String agent, String session, String content, boolean stream) {
    String body = JSON.createObjectNode().put("model", "default").put("stream", stream)
        .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", content)))
        .toString();
    return postWithHeaders("/v1/chat/completions", body.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        "X-Agent-Id", agent, "X-Session-Id", session);
  }

  public Response send(String method, String path, String body) {
    return send(HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)));
  }

  /** A request of any method whose body is sent with {@code contentType} (null: none sent). */
  public Response send(String method, String path, byte[] body, String contentType) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) b.header("Content-Type", contentType);
    return send(b);
  }

  private Response send(HttpRequest.Builder b) {
    if (token != null) b.header("Authorization", "Bearer " + token);
    try {
      HttpResponse<String> r = client.send(b.timeout(Duration.ofSeconds(30)).build(),
          HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body(), r.headers());
    } catch (Exception e) {
      throw new AssertionError("request failed: " + e, e);
    }
  }
}
