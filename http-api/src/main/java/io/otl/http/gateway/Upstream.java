package io.otl.http.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.model.ModelVersion;
import io.otl.http.Json;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.settings.ConnectionPoolSettings;
import org.apache.pekko.stream.SubscriptionWithCancelException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls a version's OpenAI-compatible server. The endpoint is the server's base URL as OpenAI
 * clients take it ({@code http://host:8000/v1}); a URL that already ends in {@code
 * /chat/completions} is used as it is, and one without a path gets {@code /v1}. The upstream key
 * goes into the request header only.
 */
final class Upstream {
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);
  /** Sends again of a call whose pooled connection was closed under it (see {@link #request}). */
  private static final int RESENDS = 10;
  private final Http http;
  private final ConnectionPoolSettings pool;
  private final ActorSystem<?> system;

  Upstream(ActorSystem<?> system, Duration timeout) {
    this.system = system;
    this.http = Http.get(system);
    // The default pool (4 connections per host) would queue a busy agent's calls behind each other.
    // A streamed answer's entity is subscribed only when the node's server starts sending it to the
    // agent; pekko's default of 1 s failed such streams on a busy machine (W8), so the gateway's own
    // timeout bounds it instead.
    com.typesafe.config.Config poolConfig = com.typesafe.config.ConfigFactory.parseString(
        "pekko.http.host-connection-pool.response-entity-subscription-timeout = " + timeout.toMillis() + "ms")
        .withFallback(system.settings().config());
    this.pool = ConnectionPoolSettings.create(poolConfig).withMaxConnections(64).withMaxOpenRequests(1024);
    // Pools left open when the actor system ends are reported as failures ("pool shut down unexpectedly").
    org.apache.pekko.actor.CoordinatedShutdown.get(system).addTask(
        org.apache.pekko.actor.CoordinatedShutdown.PhaseServiceStop(), "gateway-connection-pools",
        () -> http.shutdownAllConnectionPools().thenApply(x -> org.apache.pekko.Done.getInstance()));
  }

  /** An endpoint's chat completions URL, as text (for messages) and as the client's parsed URI. */
  record Target(String url, Uri uri) {}

  /** Endpoints whose target is known; cleared when it holds this many (an agent's versions are few). */
  private static final int TARGETS_MAX = 1024;
  private static final ConcurrentHashMap<String, Target> TARGETS = new ConcurrentHashMap<>();

  /**
   * {@link #chatUrl} of the route's endpoint, parsed once per endpoint: it was checked (two {@link URI}
   * parses and one of pekko's) when the call was attempted and again when it was sent, then parsed once
   * more into the request, on every call. An endpoint that is not callable is refused every time, as
   * {@link #chatUrl} refuses it, and not remembered.
   */
  static Target target(ModelVersion.RouteDecision d) {
    String endpoint = d.endpoint() == null ? "" : d.endpoint();
    Target known = TARGETS.get(endpoint);
    if (known != null) return known;
    String url = chatUrl(d);
    Target t = new Target(url, Uri.create(url));
    if (TARGETS.size() >= TARGETS_MAX) TARGETS.clear();
    TARGETS.put(endpoint, t);
    return t;
  }

  /** The chat completions URL of an endpoint; refuses what is not an HTTP(S) URL. */
  static String chatUrl(ModelVersion.RouteDecision d) {
    String endpoint = d.endpoint() == null ? "" : d.endpoint().trim();
    if (!ServingUrls.callable(endpoint)) {
      throw new OpenAiError(502, "upstream_error", null, "upstream_unavailable",
          "no HTTP serving endpoint (it is '" + endpoint + "'); register the URL of an OpenAI-compatible server");
    }
    URI uri = URI.create(endpoint);
    String base = endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint;
    if (base.endsWith("/chat/completions")) return base;
    if (uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/")) base = base + "/v1";
    return base + "/chat/completions";
  }

  /**
   * Sends the request body (with {@code model} replaced by the served model, when the route names
   * one). Completes with the response head; fails with a {@link java.util.concurrent.TimeoutException}
   * after {@code timeout} (the server's own, else gateway.timeout), and then discards the late
   * response so its connection returns to the pool.
   */
  CompletionStage<HttpResponse> send(ModelVersion.RouteDecision d, ChatRequest request, String upstreamKey,
      Duration timeout) {
    Target target = target(d);
    String url = target.url();
    // The agent's bytes go out as they came, unless the served model name replaces its model or the
    // session id is taken out of the metadata.
    byte[] bytes = request.raw();
    boolean namesSession = request.body().path("metadata").has("session_id");
    if (d.servedModel() != null || namesSession) {
      // A copy of the top level alone (the order of its fields kept): only model and metadata change, and
      // the messages, the whole conversation an agent resends, were copied node by node on every call.
      ObjectNode body = request.body().objectNode();
      body.setAll(request.body());
      if (d.servedModel() != null) body.put("model", d.servedModel());
      if (namesSession) {
        body.set("metadata", body.get("metadata").deepCopy());
        withoutSessionId(body);
      }
      try {
        bytes = Json.MAPPER.writeValueAsBytes(body);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    // Marked as forwarded: an endpoint that reaches an OTL gateway (its own node's or another's) is refused
    // there at once as a loop (GatewayHop).
    HttpRequest req = HttpRequest.create().withMethod(HttpMethods.POST).withUri(target.uri())
        .withEntity(ContentTypes.APPLICATION_JSON, bytes).addHeader(GatewayHop.mark());
    if (upstreamKey != null && !upstreamKey.isEmpty()) req = req.addHeader(Authorization.oauth2(upstreamKey));
    CompletableFuture<HttpResponse> call = request(req, url, RESENDS);
    CompletableFuture<HttpResponse> bounded = call.copy().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    bounded.whenComplete((r, e) -> {
      if (e != null) call.thenAccept(late -> late.discardEntityBytes(system));
    });
    return bounded;
  }

  /**
   * An agent that leaves mid-stream cancels its upstream stream, which closes that connection; pekko-http's
   * pool may have handed the connection the next call already, which then fails with the cancellation
   * (NoMoreElementsNeeded) before any answer: a 502 "unreachable" for an agent that did nothing, counted
   * against the version (trial t104: 0.3-3 % of a fleet's calls while others left their streams). Nothing of
   * the answer has reached anyone, so the call goes out again at once; once was not always enough, the next
   * connection the pool gave was sometimes closing too (a review counted up to three in a row in 600 calls:
   * ten, all within the call's timeout, leave a margin without resending forever).
   */
  private CompletableFuture<HttpResponse> request(HttpRequest req, String url, int resends) {
    return http.singleRequest(req, http.defaultClientHttpsContext(), pool, system.classicSystem().log())
        .toCompletableFuture().exceptionallyCompose(e -> {
          if (resends == 0 || !(GatewayErrors.unwrap(e) instanceof SubscriptionWithCancelException.NonFailureCancellation)) {
            return CompletableFuture.failedFuture(e);
          }
          URI to = URI.create(url);
          log.info("gateway: a connection to {}:{} closed under a call before its answer; sent again", to.getHost(),
              to.getPort());
          return request(req, url, resends - 1);
        });
  }

  /**
   * {@code metadata.session_id} names the session for the gateway, as {@code X-Session-Id} does, and
   * goes no further: OpenAI refuses {@code metadata} without {@code "store": true} (400 "The 'metadata'
   * parameter is only allowed when 'store' is enabled"), so with OpenAI as a version's server every call
   * naming its session this way failed. The agent's other metadata keys pass; an emptied object goes.
   */
  static void withoutSessionId(ObjectNode body) {
    ObjectNode metadata = (ObjectNode) body.get("metadata");
    metadata.remove("session_id");
    if (metadata.isEmpty()) body.remove("metadata");
  }
}
