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
  // Event times go out as ISO-8601 text, the form the node's event JSON takes (DESIGN §7.1).
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .registerModule(new com.fasterxml.jackson.datatype.jsr310.JavaTimeModule())
      .disable(com.fasterxml.jackson.databind.SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .setSerializationInclusion(JsonInclude.Include.NON_NULL);
  // Written as the interface so that the "type" discriminator is always there.
  private static final ObjectWriter EVENT = MAPPER.writerFor(SessionInput.class);

  private final URI base;
  private final String bearerToken;
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  /**
   * The node's URL from what a user passes. A URL without a scheme ({@code node:8080}) failed every
   * batch, and the gateway's base URL ({@code …/v1}, as OpenAI clients take it) posted to
   * {@code /v1/v1/sessions/…}: each batch refused with 404 and dropped, the mistake only in a WARN.
   */
  static URI nodeUrl(String baseUrl) {
    String problem = "baseUrl must be the node's http(s) URL, such as http://node:8080, was: " + baseUrl;
    if (baseUrl == null) throw new IllegalArgumentException(problem);
    URI uri;
    try {
      uri = new URI(baseUrl.trim());
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException(problem);
    }
    if (!("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme())) || uri.getHost() == null
        || uri.getQuery() != null || uri.getFragment() != null) {
      throw new IllegalArgumentException(problem);
    }
    String s = uri.toString();
    while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
    if (s.endsWith("/v1")) s = s.substring(0, s.length() - "/v1".length());
    return URI.create(s);
  }

  /**
   * The token as it goes into the {@code Authorization} header, or null for none (null or blank). One with
   * white space around it (a secret file's last newline, {@code Files.readString}) or a control character
   * in it cannot be sent: the JDK refused the header on every request, each batch was retried and dropped as
   * "the sink failed (IllegalArgumentException)", the whole conversation lost with no word of why. Refused
   * here, where the mistake is made, as the node refuses such an {@code auth.token} at its start; the
   * message never shows the token.
   */
  static String bearerToken(String token) {
    if (token == null || token.isBlank()) return null;
    boolean control = token.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
    if (control || !token.strip().equals(token)) {
      throw new IllegalArgumentException("bearerToken has white space or a control character "
          + (control ? "(a line break, a tab …) in it" : "at its start or end")
          + " (a secret file's last newline?), which no Authorization header can carry: strip it (the token is not shown)");
    }
    return token;
  }

  HttpSink(URI base, String bearerToken) {
    String s = base.toString();
    this.base = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    this.bearerToken = bearerToken(bearerToken);
  }

  /** host:port of the node for messages; a URL without a port names its scheme's (it read {@code node:-1}). */
  private String endpoint() {
    int port = base.getPort() != -1 ? base.getPort() : "https".equalsIgnoreCase(base.getScheme()) ? 443 : 80;
    return base.getHost() + ":" + port;
  }

  @Override
  public CompletionStage<Void> deliver(String sessionId, String agentId, List<SessionInput> events) {
    return deliverWithOutcome(sessionId, agentId, events).thenApply(outcome -> null);
  }

  @Override
  public CompletionStage<Outcome> deliverWithOutcome(String sessionId, String agentId, List<SessionInput> events) {
    if (agentId != null) return post(sessionId, agentId, events);
    // No agentId (a hook rebuilt after a restart, or built only to rate): the events API needs one, so
    // it is the agent the node holds the session under; a session it does not hold is refused.
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/v1/sessions/"
        + URLEncoder.encode(sessionId, StandardCharsets.UTF_8))).timeout(TIMEOUT).GET();
    if (bearerToken != null) request.header("Authorization", "Bearer " + bearerToken);
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofInputStream()).handle((response, error) -> {
      if (error != null) throw unreachable(error);
      int status = response.statusCode();
      if (status == 200) {
        try (java.io.InputStream in = response.body()) {
          String owner = MAPPER.readTree(in).path("agentId").asText(null);
          if (owner != null) return owner;
        } catch (java.io.IOException e) {
          throw new DeliveryException("the node's session answer could not be read", true, e);
        }
      }
      if (status == 200 || status == 404) {
        throw new DeliveryException("the node refused them: session " + sessionId + " is unknown to the node"
            + " and this hook names no agentId (OtlTraining.builder(…).agentId(…))", false, null);
      }
      String answer = errorOf(response.body());
      boolean retriable = status == 429 || status >= 500;
      throw new DeliveryException((retriable ? "the node answered " : "the node refused them with ") + status
          + (answer.isEmpty() ? "" : " " + answer), retriable, null);
    }).thenCompose(owner -> post(sessionId, owner, events));
  }

  /** Why a request got no answer. */
  private DeliveryException unreachable(Throwable error) {
    Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
        ? error.getCause() : error;
    // A node that took the connection and did not answer is no unreachable node: the warning said
    // "node unreachable (HttpTimeoutException)", and the doc's "no answer within 10 s" never showed.
    if (cause instanceof java.net.http.HttpTimeoutException && !(cause instanceof java.net.http.HttpConnectTimeoutException)) {
      return new DeliveryException("no answer from the node at " + endpoint() + " within "
          + TIMEOUT.toSeconds() + " s", true, cause);
    }
    return new DeliveryException("node unreachable at " + endpoint() + " ("
        + cause.getClass().getSimpleName() + ")", true, cause);
  }

  private CompletionStage<Outcome> post(String sessionId, String agentId, List<SessionInput> events) {
    HttpRequest.Builder request = HttpRequest.newBuilder(
            URI.create(base + "/v1/sessions/" + URLEncoder.encode(sessionId, StandardCharsets.UTF_8) + "/events"))
        .timeout(TIMEOUT)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body(agentId, events)));
    if (bearerToken != null) request.header("Authorization", "Bearer " + bearerToken);
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofInputStream()).handle((response, error) -> {
      if (error != null) throw unreachable(error);
      int status = response.statusCode();
      if (status >= 200 && status < 300) return outcomeOf(response.body());
      String answer = errorOf(response.body());
      // 429 and 5xx pass; any other 4xx is the node refusing this batch, which a resend will not change.
      boolean retriable = status == 429 || status >= 500;
      throw new DeliveryException((retriable ? "the node answered " : "the node refused them with ") + status
          + (answer.isEmpty() ? "" : " " + answer), retriable, null);
    });
  }

  /** Longest part of the node's error message a warning repeats. */
  private static final int MAX_REASON = 300;

  /**
   * The node's {@code {"error","message"}} as one line ("invalid_request: events[0].role …"), or empty
   * when the answer is not that shape. At most 4 KiB of the answer is read: a proxy's HTML page is
   * not the node's reason. The node's messages name fields, never the values sent.
   */
  static String errorOf(java.io.InputStream in) {
    try (in) {
      byte[] head = in.readNBytes(4096);
      com.fasterxml.jackson.databind.JsonNode json = MAPPER.readTree(head);
      if (json == null || !json.path("error").isTextual()) return "";
      String text = json.path("error").asText()
          + (json.path("message").isTextual() ? ": " + json.path("message").asText() : "");
      text = text.replaceAll("\\s+", " ").trim();
      return text.length() > MAX_REASON ? text.substring(0, MAX_REASON) + "…" : text;
    } catch (java.io.IOException | RuntimeException e) {
      return "";
    }
  }

  /**
   * The node's 202 {@code {"accepted","duplicates","sampled"}}: {@code "sampled": false} is a session
   * its sampling dropped. Anything else (a proxy's empty 200, an answer without the field) is taken as
   * stored, as before the field was read.
   */
  static Outcome outcomeOf(java.io.InputStream in) {
    try (in) {
      com.fasterxml.jackson.databind.JsonNode json = MAPPER.readTree(in.readNBytes(4096));
      boolean dropped = json != null && json.path("sampled").isBoolean() && !json.path("sampled").asBoolean();
      return dropped ? Outcome.NOT_SAMPLED : Outcome.STORED;
    } catch (java.io.IOException | RuntimeException e) {
      return Outcome.STORED;
    }
  }

  static String body(String agentId, List<SessionInput> events) {
    ObjectNode body = MAPPER.createObjectNode();
    if (agentId != null) body.put("agentId", agentId); // none: a session the node holds names its agent
    ArrayNode array = body.putArray("events");
    try {
      for (SessionInput e : events) array.add(MAPPER.readTree(EVENT.writeValueAsString(e)));
      return MAPPER.writeValueAsString(body);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot write events as JSON", e);
    }
  }
}
