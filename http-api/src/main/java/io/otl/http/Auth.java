package io.otl.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Bearer-token protection (design §7.1): writes need the token when one is configured; reads too
 * when {@code protectReads}. {@code /metrics} needs the metrics token when one is configured (the
 * main token works too), else the main token when reads are protected. Tokens are compared in
 * constant time and never logged.
 *
 * <p>Named operator tokens ({@code auth.operators}) pass wherever the main token does, and tell who
 * sends the request: a request that passes with one carries the operator's name in {@link #OPERATOR},
 * which the routes record as the actor {@code token:<name>} (docs/operations.md "Who did it").
 */
public final class Auth {
  /**
   * The name of the operator whose token a request carries; set by {@link #protect} only, since a
   * request attribute is the server's own and no client can send one.
   */
  public static final AttributeKey<String> OPERATOR = AttributeKey.create("otl-operator", String.class);

  private final byte[] token;
  private final boolean protectReads;
  private final byte[] metricsToken;
  private final Map<String, byte[]> operators;
  private final java.util.List<byte[]> gatewayKeys;

  /** @param token empty: no protection */
  public Auth(Optional<String> token, boolean protectReads) {
    this(token, protectReads, Optional.empty());
  }

  /** @param metricsToken empty: {@code /metrics} is protected like other reads */
  public Auth(Optional<String> token, boolean protectReads, Optional<String> metricsToken) {
    this(token, protectReads, metricsToken, Map.of());
  }

  /** @param operators operator name → that operator's own token (checked unique and non-empty at start-up) */
  public Auth(Optional<String> token, boolean protectReads, Optional<String> metricsToken,
      Map<String, String> operators) {
    this(token, protectReads, metricsToken, operators, java.util.List.of());
  }

  /**
   * @param gatewayKeys the agents' gateway keys ({@code gateway.agents.<id>.api-key}): they pass no API
   *     route, but a request that sends one is told so instead of "the bearer token is wrong"
   */
  public Auth(Optional<String> token, boolean protectReads, Optional<String> metricsToken,
      Map<String, String> operators, java.util.Collection<String> gatewayKeys) {
    this.token = bytes(token);
    this.protectReads = protectReads;
    this.metricsToken = bytes(metricsToken);
    Map<String, byte[]> named = new LinkedHashMap<>();
    operators.forEach((name, secret) -> {
      byte[] b = bytes(Optional.ofNullable(secret));
      if (b != null) named.put(name, b);
    });
    this.operators = Map.copyOf(named);
    this.gatewayKeys = gatewayKeys.stream().map(k -> bytes(Optional.ofNullable(k)))
        .filter(java.util.Objects::nonNull).toList();
  }

  private static byte[] bytes(Optional<String> secret) {
    return secret.filter(t -> !t.isEmpty()).map(t -> t.getBytes(StandardCharsets.UTF_8)).orElse(null);
  }

  /** Guards {@code /metrics}: a scrape reveals agents and load, so it follows the read protection. */
  public Route protectMetrics(Supplier<Route> inner) {
    boolean required = metricsToken != null || (enabled() && protectReads);
    if (!required) return inner.get();
    return Directives.extractRequest(request -> {
      Optional<String> header = authorization(request);
      if (matches(header, metricsToken) || holder(header).isPresent()) return inner.get();
      return unauthorized(header);
    });
  }

  /**
   * The Authorization value, or {@link #TWICE} when it is sent more than once with different values:
   * the first one was taken, so a request with a wrong token and the right one passed or not by
   * their order, which a proxy that adds or appends its own header decides, not the client.
   */
  public static Optional<String> authorization(HttpRequest request) {
    String first = null;
    for (org.apache.pekko.http.javadsl.model.HttpHeader h : request.getHeaders()) {
      if (!h.is("authorization")) continue;
      if (first == null) first = h.value();
      else if (!first.equals(h.value())) return Optional.of(TWICE);
    }
    return Optional.ofNullable(first);
  }

  /** Stands for two different Authorization headers; matches no token (it holds a space after no scheme). */
  public static final String TWICE = " twice";

  /**
   * Whose token the header carries: {@code ""} for the main token, an operator's name for theirs,
   * empty for none. Every token is compared, in constant time, so the timing says nothing of which.
   */
  private Optional<String> holder(Optional<String> header) {
    Optional<byte[]> bearer = bearerToken(header);
    if (bearer.isEmpty()) return Optional.empty();
    byte[] given = bearer.get();
    String found = null;
    if (token != null && MessageDigest.isEqual(token, given)) found = "";
    for (Map.Entry<String, byte[]> e : operators.entrySet()) {
      if (MessageDigest.isEqual(e.getValue(), given)) found = e.getKey();
    }
    return Optional.ofNullable(found);
  }

  private static boolean matches(Optional<String> header, byte[] expected) {
    return expected != null && bearerToken(header).map(given -> MessageDigest.isEqual(expected, given)).orElse(false);
  }

  /**
   * The token of an {@code Authorization: Bearer <token>} header, the one reading of it for the API,
   * {@code /metrics} and the gateway. The scheme's name is case-insensitive (RFC 9110 §11.1): a
   * client sending {@code bearer <token>} was told its right token was wrong.
   */
  public static Optional<byte[]> bearerToken(Optional<String> header) {
    if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) return Optional.empty();
    return Optional.of(header.get().substring(7).trim().getBytes(StandardCharsets.UTF_8));
  }

  private Route unauthorized(Optional<String> header) {
    return Directives.complete(unauthorizedResponse(header));
  }

  private HttpResponse unauthorizedResponse(Optional<String> header) {
    // The challenge header is added to every 401 in one place (Auth.challenged).
    return Json.error(StatusCodes.UNAUTHORIZED, "unauthorized", refusalNaming(header));
  }

  /**
   * {@link #refusal(Optional)}, but an agent's gateway key is named as such: an OpenAI client's user
   * rates the answer with the key the client holds, and "the bearer token is wrong" sent them hunting
   * for a typo in a key the gateway had just taken (trial t89). Nothing says whose key it is.
   */
  String refusalNaming(Optional<String> header) {
    Optional<byte[]> bearer = bearerToken(header);
    boolean gatewayKey = false;
    if (bearer.isPresent() && !header.get().equals(TWICE)) {
      for (byte[] k : gatewayKeys) gatewayKey |= MessageDigest.isEqual(k, bearer.get());
    }
    if (gatewayKey) {
      return "this is an agent's gateway key (gateway.agents.<agentId>.api-key): it opens the gateway only"
          + " (POST /v1/chat/completions, GET /v1/models); this route needs the node's API token (auth.token)"
          + " or an auth.operators token";
    }
    return refusal(header);
  }

  /**
   * Why the header was refused. Another scheme (curl's {@code -u user:token} sends Basic) is named as
   * the problem: "the token is wrong" sent users hunting for a wrong token they did not have. Nothing
   * of the header is echoed (it holds a credential).
   */
  static String refusal(Optional<String> header) {
    if (header.isEmpty()) return "an Authorization: Bearer <token> header is required";
    if (header.get().equals(TWICE)) return "the Authorization header is sent more than once; send it once";
    // "Bearer " without a token reaches here trimmed to "Bearer"
    if (header.get().trim().equalsIgnoreCase("Bearer")) {
      return "the Authorization header has no token after Bearer; send Authorization: Bearer <token>";
    }
    if (!header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
      return "the Authorization header does not use the Bearer scheme; send Authorization: Bearer <token>";
    }
    return "the bearer token is wrong";
  }

  /** Whether any token (the main one or an operator's) is configured: then writes need one. */
  public boolean enabled() {
    return token != null || !operators.isEmpty();
  }

  public Route protect(Supplier<Route> inner) {
    return protect(inner, path -> true);
  }

  /**
   * @param known whether a request path is one the API serves: a refused request for any other
   *     path is rejected (404, as with the token) rather than answered 401, which told clients
   *     a typo was a credentials problem. A refused request never reaches {@code inner}.
   */
  public Route protect(Supplier<Route> inner, Predicate<String> known) {
    if (!enabled()) return inner.get();
    return Directives.extractRequest(request -> refusal(request).map(refused ->
        known.test(request.getUri().path()) ? Directives.complete(refused) : Directives.reject())
        .orElseGet(() -> holder(authorization(request)).filter(name -> !name.isEmpty())
            .map(name -> Directives.mapRequest(r -> r.addAttribute(OPERATOR, name), inner))
            .orElseGet(inner)));
  }

  /**
   * The 401 for a request its headers alone show may not pass (no token configured: never), else
   * empty. Read from the headers only, so the API's edge can answer it before reading the body.
   */
  Optional<HttpResponse> refusal(HttpRequest request) {
    if (!enabled()) return Optional.empty();
    boolean read = request.method().equals(HttpMethods.GET) || request.method().equals(HttpMethods.HEAD);
    if (read && !protectReads) return Optional.empty();
    Optional<String> header = authorization(request);
    return holder(header).isPresent() ? Optional.empty() : Optional.of(unauthorizedResponse(header));
  }

  /**
   * Every 401 names the scheme it wants (RFC 9110 §11.6.1 requires the challenge): the API, the
   * gateway, {@code /metrics} and the OTLP port all take a {@code Bearer} token, and a client that answers
   * challenges (the JDK's HttpClient with an Authenticator) fails on a 401 without one.
   * Applied around the whole API (RequestGuard.wrap) and the OTLP port, so no 401 misses it.
   */
  public static HttpResponse challenged(HttpResponse r) {
    if (r.status().intValue() != 401 || r.getHeader("WWW-Authenticate").isPresent()) return r;
    return r.addHeader(org.apache.pekko.http.javadsl.model.headers.WWWAuthenticate.create(
        org.apache.pekko.http.javadsl.model.headers.HttpChallenge.create("Bearer", "otl")));
  }
}
