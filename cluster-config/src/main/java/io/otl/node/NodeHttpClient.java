package io.otl.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.api.AuditLog;
import io.otl.persistence.DataFolder;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * The command-line tools' way into a running node: its HTTP API on loopback (issue #14: the
 * embedded journal is opened by one process only, so while a node runs, the tools ask it). The
 * endpoint comes from the data folder's {@value DataFolder#NODE_FILE}; the token from the same
 * configuration the node reads.
 */
final class NodeHttpClient {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final DataFolder.NodeEndpoint node;
  private final Optional<String> token;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  NodeHttpClient(DataFolder.NodeEndpoint node, Optional<String> token) {
    this.node = node;
    this.token = token.filter(t -> !t.isBlank());
  }

  DataFolder.NodeEndpoint node() {
    return node;
  }

  /** GET a JSON resource; 404 is {@link AuditLog.NotFound}, any other non-200 an error with the node's message. */
  JsonNode getJson(String pathAndQuery) throws IOException, InterruptedException {
    HttpResponse<InputStream> r = send("GET", pathAndQuery, Duration.ofMinutes(10));
    try (InputStream body = r.body()) {
      JsonNode json = JSON.readTree(body);
      if (r.statusCode() == 200) return json;
      String message = json == null ? "" : json.path("message").asText("");
      if (r.statusCode() == 404) throw new AuditLog.NotFound(message);
      throw new IllegalStateException("the node at " + node.baseUrl() + " answered " + answered(r.statusCode(), message));
    }
  }

  /** GET a text resource; errors as {@link #getJson}. */
  String getText(String pathAndQuery) throws IOException, InterruptedException {
    HttpResponse<InputStream> r = send("GET", pathAndQuery, Duration.ofMinutes(10));
    try (InputStream body = r.body()) {
      byte[] bytes = body.readAllBytes();
      if (r.statusCode() == 200) return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
      JsonNode json = bytes.length == 0 ? null : JSON.readTree(bytes);
      String message = json == null ? "" : json.path("message").asText("");
      if (r.statusCode() == 404) throw new AuditLog.NotFound(message);
      throw new IllegalStateException("the node at " + node.baseUrl() + " answered " + answered(r.statusCode(), message));
    }
  }

  /** POST without a body, for a streamed answer (the caller closes it); non-200 answers are turned into errors as above. */
  HttpResponse<InputStream> postStream(String pathAndQuery, Duration timeout) throws IOException, InterruptedException {
    HttpResponse<InputStream> r = send("POST", pathAndQuery, timeout);
    if (r.statusCode() == 200) return r;
    try (InputStream body = r.body()) {
      JsonNode json = JSON.readTree(body);
      String error = json == null ? "" : json.path("error").asText("");
      String message = json == null ? "" : json.path("message").asText("");
      throw new NodeError(r.statusCode(), error, message);
    }
  }

  /**
   * The status and the node's message; a 401 also says where this command takes the token from,
   * since the node's message speaks to an HTTP client and the user of a command sends no header.
   */
  static String answered(int status, String message) {
    return status + ": " + message + (status == 401
        ? " (this command sends the node's API token from its own configuration: auth.token, else the one"
            + " auth.operators token it resolves; set OTL_AUTH_TOKEN, or pass the node's --config file with your"
            + " operator token's variable set)"
        : "");
  }

  /** A JSON error the node answered with. */
  static final class NodeError extends RuntimeException {
    final int status;
    final String error;

    NodeError(int status, String error, String message) {
      super(message);
      this.status = status;
      this.error = error;
    }
  }

  private HttpResponse<InputStream> send(String method, String pathAndQuery, Duration timeout)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(node.baseUrl() + pathAndQuery)).timeout(timeout)
        .method(method, HttpRequest.BodyPublishers.noBody());
    token.ifPresent(t -> b.header("Authorization", "Bearer " + t));
    try {
      return http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (java.net.ConnectException e) {
      throw new IOException("the node with pid " + node.pid() + " holds the data folder but does not answer at "
          + node.baseUrl() + "; retry when it is up, or stop it", e);
    }
  }
}
