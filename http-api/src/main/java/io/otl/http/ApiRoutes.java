package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.handleExceptions;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.mapResponse;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The whole HTTP surface: health and metrics, then {@code /v1} behind auth, with JSON errors,
 * per-route latency, load shedding (429) and 503 for new requests while the node stops.
 */
public final class ApiRoutes {
  /** Path segments followed by an id; the id is replaced by {id} in route labels. */
  private static final Set<String> ID_PARENTS =
      Set.of("sessions", "training", "jobs", "models", "versions", "session", "coordinator", "job", "model");

  /** The OpenAPI 3 document of this API, served as {@code /v1/openapi.json}. */
  static final byte[] OPENAPI = loadOpenApi();

  private ApiRoutes() {}

  private static byte[] loadOpenApi() {
    try (var in = ApiRoutes.class.getResourceAsStream("openapi.json")) {
      if (in == null) throw new IllegalStateException("openapi.json is missing from the http-api jar");
      return in.readAllBytes();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read openapi.json", e);
    }
  }

  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1) {
    return build(health, metrics, auth, maxInFlight, stopping, v1, List.of(), null);
  }

  /**
   * @param rootAliases routes also served outside {@code /v1} (the seed article's {@code
   *     /feedback/…} paths), behind the same auth as {@code /v1}
   * @param gateway the inference gateway's routes (DESIGN §7.5), or null: under {@code /v1} but
   *     outside the bearer-token check, since agents authenticate there with their own keys
   */
  public static Route build(HealthRoutes health, ApiMetrics metrics, Auth auth, int maxInFlight,
      BooleanSupplier stopping, List<Route> v1, List<Route> rootAliases, Route gateway) {
    Route protectedV1 = auth.protect(() -> all(v1));
    Route v1Routes = gateway == null ? protectedV1 : concat(gateway, protectedV1);
    AtomicInteger inFlight = new AtomicInteger();
    List<Route> top = new java.util.ArrayList<>(List.of(
        health.route(),
        ConsoleRoutes.route(),
        path("metrics", () -> get(() -> complete(HttpResponse.create().withEntity(
            HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, metrics.registry().scrape()))))),
        pathPrefix("v1", () -> concat(
            path("openapi.json", () -> get(() -> complete(HttpResponse.create().withEntity(
                HttpEntities.create(ContentTypes.APPLICATION_JSON, OPENAPI))))),
            v1Routes))));
    if (!rootAliases.isEmpty()) top.add(auth.protect(() -> all(rootAliases)));
    Route api = all(top);
    return handleExceptions(ApiErrors.exceptionHandler(), () -> handleRejections(ApiErrors.rejectionHandler(), () ->
        extractRequest(request -> {
          String label = request.method().name() + " " + label(request.getUri().path());
          boolean isHealth = request.getUri().path().startsWith("/health");
          if (stopping.getAsBoolean() && !isHealth) {
            return complete(ApiErrors.unavailable("the node is stopping; retry on another node"));
          }
          if (inFlight.incrementAndGet() > maxInFlight && !isHealth) {
            inFlight.decrementAndGet();
            metrics.request(label, 429, 0);
            return complete(Json.error(StatusCodes.TOO_MANY_REQUESTS, "overloaded",
                "the node has " + maxInFlight + " requests in flight; retry shortly")
                .addHeader(org.apache.pekko.http.javadsl.model.headers.RetryAfter.create(1L)));
          }
          long start = System.nanoTime();
          return mapResponse(response -> {
            inFlight.decrementAndGet();
            metrics.request(label, response.status().intValue(), (System.nanoTime() - start) / 1e9);
            return response;
          }, () -> api);
        })));
  }

  static Route all(List<Route> routes) {
    return routes.size() == 1 ? routes.get(0)
        : concat(routes.get(0), routes.subList(1, routes.size()).toArray(Route[]::new));
  }

  /** A low-cardinality label: ids replaced by {id}. */
  static String label(String path) {
    String[] parts = path.split("/");
    StringBuilder b = new StringBuilder();
    for (int i = 1; i < parts.length; i++) {
      b.append('/').append(i > 1 && ID_PARENTS.contains(parts[i - 1]) ? "{id}" : parts[i]);
    }
    return b.length() == 0 ? "/" : b.toString();
  }
}
