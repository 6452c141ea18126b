package io.otl.agentscope;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.SessionInput;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/** Sends batches to a remote node's {@code POST /v1/sessions/{id}/events} (DESIGN §7.1). */
final class HttpSink implements TrajectorySink {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .setSerializationInclusion(JsonInclude.Include.NON_NULL);
  // Written as the interface so that the "type" discriminator is always there.
  private static final ObjectWriter EVENT = MAPPER.writerFor(SessionInput.class);

  private final URI base;
  private final String bearerToken;
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  HttpSink(URI base, String bearerToken) {
    String s = base.toString();
    this.base = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    this.bearerToken = bearerToken == null || bearerToken.isBlank() ? null : bearerToken;
  }

  @Override
  public CompletionStage<Void> deliver(String sessionId, String agentId, List<SessionInput> events) {
    HttpRequest.Builder request = HttpRequest.newBuilder(
            URI.create(base + "/v1/sessions/" + URLEncoder.encode(sessionId, StandardCharsets.UTF_8) + "/events"))
        .timeout(TIMEOUT)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body(agentId, events)));
    if (bearerToken != null) request.header("Authorization", "Bearer " + bearerToken);
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.discarding()).handle((response, error) -> {
      if (error != null) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
            ? error.getCause() : error;
        throw new DeliveryException("node unreachable: " + cause.getClass().getSimpleName(), true, cause);
      }
      int status = response.statusCode();
      if (status >= 200 && status < 300) return null;
      // 429 and 5xx pass; any other 4xx is the node refusing this batch, which a resend will not change.
      throw new DeliveryException("node answered " + status, status == 429 || status >= 500, null);
    });
  }

  static String body(String agentId, List<SessionInput> events) {
    ObjectNode body = MAPPER.createObjectNode().put("agentId", agentId);
    ArrayNode array = body.putArray("events");
    try {
      for (SessionInput e : events) array.add(MAPPER.readTree(EVENT.writeValueAsString(e)));
      return MAPPER.writeValueAsString(body);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot write events as JSON", e);
    }
  }
}
