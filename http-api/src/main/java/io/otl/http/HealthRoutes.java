package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.head;
import static org.apache.pekko.http.javadsl.server.Directives.onSuccess;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;

import io.otl.wire.Views;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/** {@code /health/live} (the process answers) and {@code /health/ready} (it can do its job). */
public final class HealthRoutes {
  private final List<ReadinessCheck> checks;
  private final BooleanSupplier shuttingDown;

  public HealthRoutes(List<ReadinessCheck> checks, BooleanSupplier shuttingDown) {
    this.checks = List.copyOf(checks);
    this.shuttingDown = shuttingDown;
  }

  public Route route() {
    return pathPrefix("health", () -> concat(
        path("live", () -> getOrHead(() -> complete(Json.ok(Map.of("status", "UP"))))),
        path("ready", () -> getOrHead(() -> onSuccess(ready(), body -> complete(Json.response(
            "UP".equals(body.get("status")) ? StatusCodes.OK : StatusCodes.SERVICE_UNAVAILABLE, body)))))));
  }

  /** Load balancers probe with HEAD: same status and headers as GET, and pekko-http sends no body. */
  private static Route getOrHead(Supplier<Route> inner) {
    return concat(get(inner), head(inner));
  }

  private CompletionStage<Map<String, Object>> ready() {
    List<CompletableFuture<Map.Entry<String, ReadinessCheck.Result>>> results = new ArrayList<>();
    for (ReadinessCheck c : checks) {
      results.add(c.check().toCompletableFuture()
          .exceptionally(e -> ReadinessCheck.Result.down(String.valueOf(e.getMessage())))
          .thenApply(r -> Map.entry(c.name(), r)));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).thenApply(v -> {
      Map<String, Object> detail = new LinkedHashMap<>();
      List<String> failing = new ArrayList<>();
      for (var f : results) {
        var e = f.join();
        if (!e.getValue().ok()) failing.add(e.getKey() + ": " + e.getValue().detail());
        detail.put(e.getKey(), Views.map("ok", e.getValue().ok(), "detail", e.getValue().detail()));
      }
      if (shuttingDown.getAsBoolean()) {
        detail.put("shutdown", Views.map("ok", false, "detail", "node is stopping"));
        failing.add("shutdown: node is stopping");
      }
      Map<String, Object> body = new LinkedHashMap<>();
      boolean ok = failing.isEmpty();
      body.put("status", ok ? "UP" : "DOWN");
      if (!ok) {
        // A 503 is an error like any other (design §7.1): {"error","message"} beside the checks.
        body.put("error", "not_ready");
        body.put("message", "not ready: " + String.join("; ", failing));
      }
      body.put("checks", detail);
      return body;
    });
  }
}
