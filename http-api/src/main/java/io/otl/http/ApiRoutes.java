package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefixTest;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpCharsets;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The whole HTTP surface: health and metrics, then {@code /v1} behind auth, with JSON errors,
 * per-route latency, load shedding (429) and 503 for new requests while the node stops.
 */
public final class ApiRoutes {
  /** Path segments followed by an id; the id is replaced by {id} in route labels. */
  private static final Set<String> ID_PARENTS =
      Set.of("sessions", "training", "jobs", "models", "versions", "session", "coordinator", "job", "model");
  /**
   * The literal segments of the routes. Any other segment of a path is client data (an id, a
   * typo, a phone number) and becomes {id}: labels stay bounded and free of what clients send.
   */
  private static final Set<String> LITERALS = Set.of("v1", "sessions", "events", "feedback", "rate", "thumbs",
      "training", "trigger", "policy", "jobs", "cancel", "logs", "models", "versions", "promote", "rollback", "pause",
      "resume", "route", "audit", "lineage", "session", "coordinator", "job", "model", "health", "live", "ready",
      "metrics", "openapi.json", "console", "chat", "completions", "traces", "traffic", "exports", "timeline", "agents");

  /** The gateway's chat completions: its body limit is gateway.max-body-bytes, not the API's. */
  static final String GATEWAY_CHAT = "/v1/chat/completions";
  /** OpenAI's model list, {@code client.models.list()}: always the gateway's, never the API's. */
  static final String GATEWAY_MODEL_LIST = "/v1/models";
  /** {@code /v1/models} and {@code /v1/models/<one segment>}: OpenAI's model list and retrieve (GET only). */
  static final java.util.regex.Pattern GATEWAY_MODELS = java.util.regex.Pattern.compile("/v1/models(/[^/]+)?");

  /** Prometheus' text exposition format names its version; scrapers otherwise have to guess it. */
  private static final ContentType.WithCharset PROMETHEUS_TEXT = ContentTypes.create(
      MediaTypes.customWithOpenCharset("text", "plain", java.util.Map.of("version", "0.0.4"), false),
      HttpCharsets.UTF_8);

  /** One per process: pekko-http's parsing errors (no route involved) are counted here too. */
  static final ClientErrorLog CLIENT_ERRORS = new ClientErrorLog(java.time.Duration.ofSeconds(10));

  /** The OpenAPI 3 document of this API, served as {@code /v1/openapi.json}. */
  static final byte[] OPENAPI = loadOpenApi();

  /**
   * An operation of the document: its method, its path split into segments ({@code null} for a
   * parameter), the query parameters it takes ({@link QueryParams#asDocumented}).
   */
  private record Operation(String method, String[] parts, List<String> query) {
    boolean matches(String[] path) {
      if (parts.length != path.length) return false;
      for (int i = 0; i < parts.length; i++) {
        if (parts[i] == null ? path[i].isEmpty() : !parts[i].equals(path[i])) return false;
      }
      return true;
    }
  }

  /**
   * A literal segment before a parameter at the first place two templates differ: the routes try a
   * literal prefix before the parameter beside it ({@code /v1/audit/lineage/…} before {@code
   * /v1/audit/{kind}/…}), so a path both templates match is the literal one's.
   */
  private static final java.util.Comparator<Operation> LITERALS_FIRST = (a, b) -> {
    // by length first (templates of different lengths never match one path): a total order to sort by
    if (a.parts().length != b.parts().length) return Integer.compare(a.parts().length, b.parts().length);
    for (int i = 0; i < a.parts().length; i++) {
      boolean aParam = a.parts()[i] == null;
      boolean bParam = b.parts()[i] == null;
      if (aParam != bParam) return aParam ? 1 : -1;
    }
    return 0;
  };

  /**
   * Every documented operation, the one the routes serve first ({@link #LITERALS_FIRST}).
   * OpenApiConsistencyTest holds the document to what the routes serve, so it is the list of known
   * paths and of the query each takes. In the document's order, {@code GET /v1/audit/lineage/model/timeline}
   * (the lineage of an agent called "timeline") was judged as the timeline of an entity "lineage", and
   * its {@code ?version=} refused.
   */
  private static final List<Operation> OPERATIONS = documentedOperations();

  private ApiRoutes() {}

  private static byte[] loadOpenApi() {
    try (var in = ApiRoutes.class.getResourceAsStream("openapi.json")) {
      if (in == null) throw new IllegalStateException("openapi.json is missing from the http-api jar");
      return in.readAllBytes();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read openapi.json", e);
    }
  }

  private static List<Operation> documentedOperations() {
    try {
      List<Operation> operations = new java.util.ArrayList<>();
      var paths = Json.MAPPER.readTree(OPENAPI).get("paths");
      paths.fieldNames().forEachRemaining(t -> {
        // -1: "/" (the redirect to the console) is the segments "" and "", as a request's path splits.
        String[] parts = t.split("/", -1);
        for (int i = 0; i < parts.length; i++) if (parts[i].startsWith("{")) parts[i] = null;
        paths.get(t).fields().forEachRemaining(op -> {
          if (!op.getValue().isObject() || op.getKey().equals("parameters")) return;
          List<String> query = new java.util.ArrayList<>();
          op.getValue().path("parameters").forEach(p -> {
            if (p.path("in").asText().equals("query")) query.add(p.path("name").asText());
          });
          operations.add(new Operation(op.getKey().toUpperCase(java.util.Locale.ROOT), parts, List.copyOf(query)));
        });
      });
      operations.sort(LITERALS_FIRST); // stable: otherwise the document's order
      return List.copyOf(operations);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot parse openapi.json", e);
    }
  }

  /**
   * The query parameters the documented operation of {@code method} and {@code path} takes, or empty when
   * the document describes no such operation. HEAD is GET's (pekko-http answers it as one).
   */
  static java.util.Optional<List<String>> queryParameters(String method, String path) {
    String m = method.equals("HEAD") ? "GET" : method;
    String[] parts = path.split("/", -1);
    for (Operation op : OPERATIONS) {
      if (op.method().equals(m) && op.matches(parts)) return java.util.Optional.of(op.query());
    }
    return java.util.Optional.empty();
  }

  /** Whether a request path is one the API documents, any value standing for a parameter. */
  static boolean documented(String path) {
    String[] parts = path.split("/", -1);
    for (Operation op : OPERATIONS) {
      if (op.matches(parts)) return true;
    }
    return false;
  }

  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1) {
    return build(health, metrics, auth, maxInFlight, stopping, v1, List.of(), null);
  }

  /**
   * @param rootAliases routes also served outside {@code /v1} (the seed article's {@code
   *     /feedback/…} paths), behind the same auth as {@code /v1}
   * @param gateway the inference gateway's routes (design §7.5), or null: under {@code /v1} but
   *     outside the bearer-token check, since agents authenticate there with their own keys
   */
  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1, List<Route> rootAliases, Route gateway) {
    return build(health, metrics, auth, maxInFlight, stopping, v1, rootAliases, gateway, Map.of());
  }

  /**
   * @param bodyLimits paths whose bodies may be larger than the server's
   *     {@code pekko.http.server.parsing.max-content-length}, with their limit: {@code /v1/traces}
   *     takes {@code otlp.max-decoded-bytes}, since OpenTelemetry exporters send uncompressed by
   *     default and a batch of chat spans, each with the conversation so far, passes 1 MiB
   */
  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1, List<Route> rootAliases, Route gateway,
      Map<String, Long> bodyLimits) {
    return build(health, metrics, auth, maxInFlight, stopping, v1, rootAliases, gateway, bodyLimits, request -> false);
  }

  /**
   * @param gatewayAnswers the requests of {@code /v1/models/{x}} the gateway answers rather than the API's
   *     agent read ({@code GatewayRoutes#answersModelPath}): the node-wide 429/503 answer them in OpenAI's
   *     error object, as the gateway's other paths
   */
  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1, List<Route> rootAliases, Route gateway,
      Map<String, Long> bodyLimits, java.util.function.Predicate<HttpRequest> gatewayAnswers) {
    Route protectedV1 = auth.protect(() -> QueryParams.asDocumented(() -> all(v1)), ApiRoutes::documented);
    Route v1Routes = gateway == null ? protectedV1 : concat(gateway, protectedV1);
    List<Route> top = new java.util.ArrayList<>(List.of(
        health.route(),
        ConsoleRoutes.route(),
        path("metrics", () -> get(() -> auth.protectMetrics(() -> complete(HttpResponse.create().withEntity(
            HttpEntities.create(PROMETHEUS_TEXT, metrics.registry().scrape())))))),
        pathPrefix("v1", () -> concat(
            path("openapi.json", () -> get(() -> QueryParams.asDocumented(() -> complete(HttpResponse.create()
                .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, OPENAPI)))))),
            v1Routes))));
    // An OpenAI client whose base URL lacks /v1 gets OpenAI's 404 saying so, not the API's unreadable one.
    if (gateway != null) top.add(io.otl.http.gateway.GatewayRoutes.withoutV1());
    // Only requests for documented paths meet the auth: an unmatched path stays a 404, token or not.
    if (!rootAliases.isEmpty()) {
      top.add(pathPrefixTest("feedback", () -> auth.protect(() -> QueryParams.asDocumented(() -> all(rootAliases)),
          ApiRoutes::documented)));
    }
    Set<String> ownBodies = gateway == null ? Set.of() : Set.of(GATEWAY_CHAT);
    boolean aliases = !rootAliases.isEmpty();
    // The token's 401 for a write is decided on its headers, before the guard reads its body: a flood
    // of large requests with a wrong token would otherwise be read, held and timed like real ones.
    java.util.function.Function<HttpRequest, java.util.Optional<HttpResponse>> beforeBody = request -> {
      String path = request.getUri().path();
      boolean write = !request.method().equals(HttpMethods.GET) && !request.method().equals(HttpMethods.HEAD);
      if (write && crossSite(request)) {
        return java.util.Optional.of(ownBodies.contains(path)
            ? new io.otl.http.gateway.OpenAiError(403, "permission_error", null, "cross_site_request", CROSS_SITE).response()
            : Json.error(org.apache.pekko.http.javadsl.model.StatusCodes.FORBIDDEN, "cross_site_request", CROSS_SITE));
      }
      // The gateway's model paths take GET only: another method is the gateway's 405 in OpenAI's shape (an
      // agent's models.delete("default")), or, for the API's /v1/models/{agentId}, its routes' own token
      // check. Refused here, an agent's key got the API's 401 "the bearer token is wrong" (trial t79).
      boolean gatewayModels = gateway != null && GATEWAY_MODELS.matcher(path).matches();
      boolean guarded = (path.startsWith("/v1/") || aliases && path.startsWith("/feedback/"))
          && !ownBodies.contains(path) && !gatewayModels && documented(path);
      return write && guarded ? auth.refusal(request) : java.util.Optional.empty();
    };
    // One guard for every request: statusErrors asks its supplier per request, and a guard made
    // there counted each request's in-flight slot alone (http.max-in-flight never refused; OverloadTest).
    Route guarded = new RequestGuard(maxInFlight, metrics, stopping, CLIENT_ERRORS, ownBodies, bodyLimits, beforeBody,
        gateway == null ? request -> false : gatewayAnswers).wrap(all(top));
    // A call another gateway forwarded is refused before anything else (a loop: GatewayHop), on a node with
    // its gateway off too: the endpoint that reached it is no model server either way.
    return io.otl.http.gateway.GatewayHop.refuseForwarded(metrics.registry(), () -> io.otl.http.otlp.OtlpRoutes.statusErrors(() -> guarded));
  }

  static final String CROSS_SITE = "a write sent by a web page of another site is refused (Sec-Fetch-Site):"
      + " send it from the node's console or from a client that is not a browser";

  /**
   * Whether a browser says the request comes from a page of another site ({@code Sec-Fetch-Site:
   * cross-site} or {@code same-site}, e.g. another port of localhost). Such a POST needs no CORS
   * pre-flight when it has no body or a form's, so on a node without {@code auth.token} any page its
   * user opened could roll back, promote or trigger (trial t34: a no-cors fetch to
   * {@code …/rollback} was a 202). Browsers send the header; the console's own calls are
   * {@code same-origin} and API clients send none, so they pass.
   */
  static boolean crossSite(HttpRequest request) {
    for (org.apache.pekko.http.javadsl.model.HttpHeader h : request.getHeaders()) {
      if (!h.is("sec-fetch-site")) continue;
      String v = h.value().trim().toLowerCase(java.util.Locale.ROOT);
      if (v.equals("cross-site") || v.equals("same-site")) return true;
    }
    return false;
  }

  static Route all(List<Route> routes) {
    return routes.size() == 1 ? routes.get(0)
        : concat(routes.get(0), routes.subList(1, routes.size()).toArray(Route[]::new));
  }

  /**
   * The path the routes see (docs/http-edge.md), applied once, before routing: a base URL's
   * doubled slash ({@code /v1//chat/completions}: OpenAI clients join a {@code base_url} ending in
   * {@code /} and the path as strings) is one, as is a doubled leading slash before {@code v1}, and a single
   * trailing slash is dropped ({@code /}
   * itself stays). A second trailing slash stays: that is a typo, not a client's join.
   */
  public static String canonical(String path) {
    // "//v1/…": an endpoint ending in / joined with "/v1/traces" (an OTLP exporter's
    // OTEL_EXPORTER_OTLP_ENDPOINT=http://node:4318/) or "/v1/…" as strings.
    String p = path.startsWith("//v1/") ? path.substring(1) : path;
    p = p.startsWith("/v1//") ? "/v1" + p.substring(4) : p;
    return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
  }

  /**
   * {@code inner} seeing {@link #canonical canonical} paths, for a listener without the API's guard (the
   * separate OTLP port): {@code /v1/traces/} was a 404 there, though the API port takes it.
   */
  public static Route withCanonicalPaths(java.util.function.Supplier<Route> inner) {
    return org.apache.pekko.http.javadsl.server.Directives.mapRequestContext(RequestGuard::canonical, inner);
  }

  /**
   * The route label of a request a route answered: its documented route's template, the console's page as
   * {@code /console} and every console file as {@code /console/{file}}, anything else {@code unmatched}. The console's files and the
   * gateway's OpenAI-style 404s ({@code /v1/chat/completions/…}, {@code /v1/embeddings/…}, {@code
   * /models/…}) answer any path below them, and {@link #label} kept one {@code {id}} per segment: each
   * path depth was a new series (and 16 histogram lines), so any client could grow the scrape without
   * limit. The methods pekko-http parses are a fixed set, so these labels are bounded.
   */
  static String routeLabel(String method, String path) {
    if (documented(path)) return method + " " + label(path);
    // The console's page itself (/console/ is /console once canonical) was unmatched beside its files' label.
    if (path.equals("/console")) return method + " /console";
    if (path.startsWith("/console/")) return method + " /console/{file}";
    return RequestGuard.UNMATCHED;
  }

  /** A low-cardinality label: ids, and any segment that is not a route literal, replaced by {id}. */
  static String label(String path) {
    String[] parts = path.split("/");
    StringBuilder b = new StringBuilder();
    for (int i = 1; i < parts.length; i++) {
      boolean id = i > 1 && ID_PARENTS.contains(parts[i - 1]) || !LITERALS.contains(parts[i]);
      b.append('/').append(id ? "{id}" : parts[i]);
    }
    return b.length() == 0 ? "/" : b.toString();
  }
}
