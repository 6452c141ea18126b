package io.otl.http.gateway;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.Directives.withRequestTimeout;
import static org.apache.pekko.http.javadsl.server.Directives.reject;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.Ids;
import io.otl.core.api.DataCollector;
import io.otl.core.api.ModelRouter;
import io.otl.core.api.SessionOwners;
import io.otl.core.api.StableRoute;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionModel;
import io.otl.http.ClientConnection;
import io.otl.http.ContentEncoding;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.pattern.AskTimeoutException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.concurrent.duration.FiniteDuration;

/**
 * The inference gateway (design §7.5): {@code POST /v1/chat/completions} and {@code GET /v1/models}
 * in OpenAI's wire format. Each call is routed to the session's version, forwarded (streaming
 * passed through as it arrives), and recorded in the session; every error is OpenAI's error
 * object. Mounted under {@code /v1} outside the API's bearer-token check: agents authenticate with
 * their own keys here.
 */
public final class GatewayRoutes {
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);
  static final String SESSION_HEADER = "X-Session-Id";
  static final String VERSION_HEADER = "X-Model-Version";
  static final String AGENT_HEADER = "X-Agent-Id";

  private final GatewaySettings settings;
  private final GatewayIdentity identity;
  private final DataCollector collector;
  private final ModelRouter router;
  private final StableRoute stableRoute;
  private final TurnRecorder recorder;
  private final Upstream upstream;
  private final GatewayMetrics metrics;
  /** The node's event counters: a turn's recorded events count as the events API's do. */
  private final io.otl.http.ApiMetrics apiMetrics;
  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final GatewayTraffic traffic;
  /** Owners read from the journal without starting the session; null: ask the session itself. */
  private final SessionOwners owners;
  /** Turns answered but not yet recorded, which the session routes wait for (a rating right after the answer). */
  private final TurnsInFlight turns;
  /** A session's recordings run one after the other, so each numbers its messages against what the one before it stored. */
  private final io.otl.http.InTurn recordings = new io.otl.http.InTurn();
  private final KnownSessions knownSessions = new KnownSessions(KNOWN_SESSIONS);
  /** Where recordings are prepared and sent, after the answer is on its way to the agent. */
  private final java.util.concurrent.Executor recording;
  private final ActorSystem<?> system;
  /** Sessions whose owner, stored ids and completion this gateway remembers. */
  static final int KNOWN_SESSIONS = 20_000;

  /**
   * @param desensitizer the sessions' desensitizer (message ids derive from stored, never raw, text)
   * @param maxTextLength the sessions' {@code data-collector.max-text-length} (longer texts are stored cut)
   * @param traffic this node's per-version figures, also served by {@link #trafficRoute()}
   * @param owners reads a session's owner from the journal, so that the first call of a session
   *     the gateway has not seen waits for one indexed read instead of the session's start and
   *     recovery; null: the session is asked
   * @param turns where each turn is registered until it is recorded (shared with the session routes)
   */
  public GatewayRoutes(ActorSystem<?> system, GatewaySettings settings, DataCollector collector, ModelRouter router,
      StableRoute stableRoute, io.otl.http.ApiMetrics apiMetrics, io.otl.core.session.Desensitizer desensitizer,
      int maxTextLength, GatewayTraffic traffic, SessionOwners owners, TurnsInFlight turns) {
    this.owners = owners;
    this.turns = turns;
    this.recording = system.executionContext();
    this.system = system;
    this.traffic = traffic;
    this.settings = settings;
    this.identity = new GatewayIdentity(settings);
    this.collector = collector;
    this.router = router;
    this.stableRoute = stableRoute;
    this.recorder = new TurnRecorder(collector, desensitizer, maxTextLength);
    this.upstream = new Upstream(system, settings.longestAttempt());
    this.metrics = new GatewayMetrics(apiMetrics.registry(), traffic);
    this.apiMetrics = apiMetrics;
    this.materializer = Materializer.matFromSystem(system);
  }

  /**
   * The chat route waits {@link GatewaySettings#answerTimeout}: the server's request-timeout (20 s,
   * for the API's quick calls) answered a model that took longer 503 "retry the request", where docs
   * promise 504 after gateway.timeout.
   */
  private FiniteDuration answerTimeout() {
    return FiniteDuration.create(settings.answerTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The gateway's paths under {@code /v1}. A client whose {@code base_url} ends in {@code /} sends
   * {@code /v1//chat/completions}: that reaches these routes as {@code /v1/chat/completions}, made
   * canonical before routing (io.otl.http.ApiRoutes#canonical).
   */
  public Route route() {
    return concat(
        pathPrefix(segment("chat").slash("completions"), () -> concat(
            pathEndOrSingleSlash(() -> concat(
                get(() -> extractRequest(request -> complete(storedCompletions(request, false)))),
                sealed(post(() -> withRequestTimeout(answerTimeout(), () ->
                    extractRequest(request -> completeWithFuture(limited(() -> chat(request))))))))),
            extractRequest(request -> complete(storedCompletions(request, true))))),
        pathPrefix("models", () -> pathEndOrSingleSlash(() -> sealed(get(() -> extractRequest(request ->
            complete(guard(() -> models(request)))))))),
        pathPrefix(segment("models").slash(LOGICAL_MODEL), () -> pathEndOrSingleSlash(() -> get(() ->
            extractRequest(request -> identity.callsAsAgent(request) ? sealed(complete(guard(() -> model(request))))
                : reject())))),
        pathPrefix(segment("models").slash(segment()), id -> pathEndOrSingleSlash(() -> get(() ->
            extractRequest(request -> identity.callsAsAgent(request) && !id.equals(agentOrNull(request))
                ? sealed(complete(guard(() -> unknownModel(request, id)))) : reject())))),
        pathPrefix(PathMatchers.segment(OPENAI_ELSEWHERE), name -> extractRequest(request ->
            complete(notServed(request, name)))));
  }

  /**
   * OpenAI's other resources under {@code /v1}. An OpenAI client pointed at the node (responses,
   * legacy completions, embeddings …) got the API's 404 {@code {"error":"not_found"}}, which its
   * SDK cannot read as an error object (no type, no code) and whose message did not say that only
   * chat completions are served. None of these names is an API path.
   */
  private static final java.util.regex.Pattern OPENAI_ELSEWHERE = java.util.regex.Pattern.compile(
      "completions|embeddings|responses|moderations|images|audio|files|uploads|batches|fine_tuning|assistants"
          + "|threads|vector_stores|realtime|conversations|containers|evals");

  private static HttpResponse notServed(HttpRequest request, String name) {
    return new OpenAiError(404, "invalid_request_error", null, "unknown_url",
        "the inference gateway does not serve " + request.method().value() + " /v1/" + name
            + ": it serves POST /v1/chat/completions and GET /v1/models (docs/gateway.md)").response();
  }

  /**
   * OpenAI's stored chat completions ({@code GET /v1/chat/completions}, {@code GET|POST|DELETE
   * /v1/chat/completions/{id}}, {@code GET …/{id}/messages}): the gateway stores none, so they are
   * URLs it does not serve, answered as OpenAI answers those (404 {@code unknown_url}). They were a
   * 405 or the API's 404, which an OpenAI client's {@code chat.completions.list()} or
   * {@code retrieve(id)} could not read. The id is not named back: a path segment may hold anything.
   */
  private static HttpResponse storedCompletions(HttpRequest request, boolean withId) {
    return new OpenAiError(404, "invalid_request_error", null, "unknown_url",
        "the inference gateway does not serve " + request.method().value() + " /v1/chat/completions"
            + (withId ? "/{id}…" : "") + ": it stores no chat completions (OpenAI's stored completions); it serves"
            + " POST /v1/chat/completions and GET /v1/models (docs/gateway.md)").response();
  }

  /**
   * {@code GET /v1/models/{agentId}/traffic}: this node's per-version figures (an operator's read,
   * so it belongs with the API's routes and their bearer token, not with the agents' gateway).
   */
  public Route trafficRoute() {
    return path(segment("models").slash(segment()).slash("traffic"), agentId -> get(() -> {
      String p = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
      if (p != null) return complete(io.otl.http.ApiErrors.toResponse(io.otl.http.BadRequest.invalid(p)));
      return complete(Json.ok(traffic.view(agentId)));
    }));
  }

  /**
   * Pekko's own rejections on these paths (405 …) in OpenAI's error shape too, with the API's code
   * for the status ({@link io.otl.http.ApiErrors#codeFor}: one mapping for both faces, so a 405 is
   * {@code method_not_allowed} here as there; it was null here).
   */
  private static Route sealed(Route inner) {
    return handleRejections(SEALED, () -> inner);
  }

  private static final RejectionHandler SEALED = RejectionHandler.defaultHandler().mapRejectionResponse(r -> {
    String text = r.entity() instanceof org.apache.pekko.http.javadsl.model.HttpEntity.Strict s
        ? s.getData().decodeString(StandardCharsets.UTF_8) : r.status().reason();
    int status = r.status().intValue();
    return new OpenAiError(status, "invalid_request_error", null, io.otl.http.ApiErrors.codeFor(status), text)
        .response().addHeaders(r.getHeaders());
  });

  private CompletionStage<HttpResponse> limited(java.util.function.Supplier<CompletionStage<HttpResponse>> call) {
    if (inFlight.incrementAndGet() > settings.maxInFlight()) {
      inFlight.decrementAndGet();
      return CompletableFuture.completedFuture(new OpenAiError(429, "rate_limit_exceeded", null, "overloaded",
          "the gateway has " + settings.maxInFlight() + " calls in flight; retry shortly").response());
    }
    CompletionStage<HttpResponse> result;
    try {
      result = call.get();
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    return result.exceptionally(GatewayRoutes::toResponse).whenComplete((r, e) -> inFlight.decrementAndGet());
  }

  private static HttpResponse guard(java.util.function.Supplier<HttpResponse> handler) {
    try {
      return handler.get();
    } catch (RuntimeException e) {
      return toResponse(e);
    }
  }

  // ---------------------------------------------------------------- GET /v1/models

  /** The one model an agent sees: its requests' {@code model} is replaced by the routed version's anyway. */
  static final String LOGICAL_MODEL = "default";

  private HttpResponse models(HttpRequest request) {
    return Json.ok(Map.of("object", "list", "data", List.of(modelObject(identity.identify(request)))));
  }

  /**
   * {@code GET /v1/models/default}, OpenAI's retrieve of the model {@link #models} lists: the
   * OpenAI SDKs' {@code models.retrieve("default")} got the design's {@code /v1/models/{agentId}}
   * answer instead (404, agent "default" unknown, not OpenAI's shape).
   */
  private HttpResponse model(HttpRequest request) {
    return Json.ok(modelObject(identity.identify(request)));
  }

  /**
   * {@code GET /v1/models/<other>} from an agent's OpenAI client ({@code models.retrieve("gpt-4o-mini")},
   * as frameworks check the model they were configured with): OpenAI's 404 {@code model_not_found}, in
   * OpenAI's error object. It was the design's {@code /v1/models/{agentId}} answer for an agent named
   * after the model, which the client could not parse ({@code code} null) and whose message named the
   * wrong thing. The caller's own agent id still reaches the design's view.
   */
  /** Named back only when no built-in rule finds personal data in it: a path segment may hold anything. */
  private static String shownModel(String model) {
    if (!io.otl.core.session.Desensitizer.builtInScanner().findings(model).isEmpty()) return "this model";
    return "the model '" + (model.length() > 64 ? model.substring(0, 64) + "…" : model) + "'";
  }

  private HttpResponse unknownModel(HttpRequest request, String model) {
    String agent = identity.identify(request);
    throw new OpenAiError(404, "invalid_request_error", "model", "model_not_found",
        shownModel(model) + " does not exist here: agent "
            + agent + " is served the model '" + LOGICAL_MODEL + "' (GET /v1/models); a chat completion may name"
            + " any model, the version routed for its session answers");
  }

  private String agentOrNull(HttpRequest request) {
    try {
      return identity.identify(request);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static Map<String, Object> modelObject(String agent) {
    return Map.of("id", LOGICAL_MODEL, "object", "model", "created", 0, "owned_by", agent);
  }

  // ---------------------------------------------------------------- POST /v1/chat/completions

  /**
   * One call's context, fixed before the upstream is called; {@code failedUpstreamNanos}: time spent
   * on an upstream attempt that failed before the fallback (the model server's, not the gateway's);
   * {@code receivedAt}: the request's arrival, the time of the messages it brings; {@code clientGone}:
   * completes when the agent's connection ends.
   */
  private record Call(String agent, String sessionId, ChatRequest request, Set<String> known,
      String routedVersion, long startNanos, Instant receivedAt, boolean recorded, AtomicLong failedUpstreamNanos,
      CompletionStage<Done> clientGone) {}

  private CompletionStage<HttpResponse> chat(HttpRequest http) {
    long start = System.nanoTime();
    String agent = identity.identify(http);
    String encoding = ContentEncoding.of(http);
    if (!encoding.equals("identity") && !encoding.isEmpty()) {
      // A gzip body was read as JSON and refused as "not valid JSON", which sent the client looking
      // for a fault in its JSON. Refused by name as the API refuses encoded bodies (docs/http-edge.md).
      throw new OpenAiError(415, "invalid_request_error", "Content-Encoding", "unsupported_media_type",
          "Content-Encoding is " + encoding + "; the gateway takes request bodies uncompressed");
    }
    long declared = http.entity().getContentLengthOption().orElse(-1L);
    if (declared > settings.maxBodyBytes()) return refuseOversized(http, declared);
    return readBody(http).thenCompose(strict -> {
          ChatRequest request = ChatRequest.parse(strict.getData().toArray());
          Optional<String> header = GatewayIdentity.single(http, SESSION_HEADER);
          String sessionId = header.orElse(request.metadataSessionId());
          boolean generated = sessionId == null;
          if (generated) sessionId = "gw-" + UUID.randomUUID();
          String sessionParam = header.isPresent() ? SESSION_HEADER : "metadata.session_id";
          String p = Ids.problem(sessionParam, sessionId, Ids.MAX_SESSION_ID);
          if (p != null) throw OpenAiError.invalid(sessionParam, p);
          String session = sessionId;
          // A session id made here is new, so there is nothing to check. A session that started
          // keeps its version while that version serves (design §3.3): a later turn this gateway
          // remembers is routed with it at once; otherwise owner read and route run together, and
          // the route is asked again only when the session started on another version than its
          // bucket gives now (a ratio raised since, or another node's session).
          KnownSessions.Entry remembered = generated ? null : knownSessions.get(session);
          CompletionStage<KnownSessions.Entry> existing = generated || remembered != null
              ? CompletableFuture.completedFuture(remembered) : known(session);
          CompletionStage<ModelVersion.RouteDecision> byBucketOrMemory =
              router.route(agent, session, startedOn(remembered, agent));
          return existing.thenCompose(found -> (remembered != null ? byBucketOrMemory
              : routeKeepingVersion(agent, session, found, byBucketOrMemory)).handle((d, routeFailure) -> {
            // A session unknown so far is claimed once it is routed, before forwarding: its owner reached
            // memory and journal only with the recording, after the answer, and another agent's call in
            // between was forwarded (docs/gateway.md promises 403, nothing forwarded). The one owner check
            // covers both what memory or journal knew and a concurrent call's claim, and it comes before a
            // failed route's error: another agent's call is a 403 whatever its own routing answered.
            KnownSessions.Entry entry = found != null || generated || routeFailure != null ? found
                : knownSessions.claim(session, agent, d.version());
            if (entry != null) checkOwner(entry.owner(), agent, session, sessionParam);
            if (routeFailure != null) throw new CompletionException(unwrap(routeFailure));
            return forward(agent, session, request, entry, d, start, ClientConnection.closedOf(http));
          }).thenCompose(x -> x));
        });
  }

  /** Forwards a call whose owner is checked; {@code entry}: what is known of its session, null if nothing. */
  private CompletionStage<HttpResponse> forward(String agent, String session, ChatRequest request,
      KnownSessions.Entry entry, ModelVersion.RouteDecision d, long start,
      CompletionStage<Done> clientGone) {
    Set<String> known = entry == null ? Set.of() : entry.eventIds();
    boolean completed = entry != null && entry.completed();
    if (completed) {
      // The agent knows nothing of sessions ending (idle timeout): it keeps its answer, unrecorded.
      metrics.unrecorded(agent, "session_completed");
      log.info("gateway: agent {} session {} is completed; this call is forwarded but not recorded", agent, session);
    }
    Instant receivedAt = Instant.now().minusNanos(System.nanoTime() - start);
    return attempt(new Call(agent, session, request, known, d.version(), start, receivedAt, !completed,
        new AtomicLong(), clientGone), d, null);
  }

  /**
   * What is known of a session before its call is forwarded (null: it has stored nothing): from
   * this gateway's memory for a session it served, else its owner from the journal, else (no
   * journal reader) from the session itself.
   */
  private CompletionStage<KnownSessions.Entry> known(String sessionId) {
    KnownSessions.Entry remembered = knownSessions.get(sessionId);
    if (remembered != null) return CompletableFuture.completedFuture(remembered);
    if (owners == null) return askSession(sessionId);
    return owners.ownerOf(sessionId).<CompletionStage<KnownSessions.Entry>>handle((owner, err) -> {
      if (err != null) {
        log.warn("gateway: the journal did not say who owns session {} ({}); asking the session", sessionId,
            unwrap(err).getClass().getSimpleName());
        return askSession(sessionId);
      }
      // Stored ids unknown: the recording sends the history the request carries, the session drops
      // what it has. Completion unknown: the recording is refused then, and that is noted.
      return CompletableFuture.completedFuture(
          owner.map(o -> new KnownSessions.Entry(o.agentId(), o.modelVersion(), Set.of(), false)).orElse(null));
    }).thenCompose(x -> x);
  }

  private CompletionStage<KnownSessions.Entry> askSession(String sessionId) {
    return collector.lookup(sessionId).thenApply(state -> state.map(s -> {
      boolean completed = s.status() == SessionModel.Status.COMPLETED;
      knownSessions.learned(sessionId, s.agentId(), s.modelVersion(), s.eventIds(), completed);
      return new KnownSessions.Entry(s.agentId(), s.modelVersion(), s.eventIds(), completed);
    }).orElse(null));
  }

  /** {@code route}, unless the session started on another version: then the route that keeps it there. */
  private CompletionStage<ModelVersion.RouteDecision> routeKeepingVersion(String agent, String session,
      KnownSessions.Entry found, CompletionStage<ModelVersion.RouteDecision> route) {
    String started = startedOn(found, agent);
    if (started == null) return route;
    return route.thenCompose(d -> started.equals(d.version()) ? CompletableFuture.completedFuture(d)
        : router.route(agent, session, started));
  }

  /** The version a session of {@code agent} started on; null for a new session or another agent's. */
  private static String startedOn(KnownSessions.Entry entry, String agent) {
    return entry != null && agent.equals(entry.owner()) ? entry.version() : null;
  }

  /** {@code param}: where the request named the session, so the 403 points at what the agent sent. */
  private static void checkOwner(String owner, String agent, String sessionId, String param) {
    if (owner != null && !owner.equals(agent)) {
      throw new OpenAiError(403, "permission_error", param, "session_of_other_agent",
          "session " + sessionId + " belongs to another agent; agent " + agent + " may not write to it");
    }
  }

  /** Calls one version; on an upstream failure, once more on the stable when allowed. */
  private CompletionStage<HttpResponse> attempt(Call c, ModelVersion.RouteDecision d, String fallbackFrom) {
    long upStart = System.nanoTime();
    metrics.call(c.agent(), d.version());
    CompletionStage<HttpResponse> sent;
    try {
      Upstream.chatUrl(d);
    } catch (OpenAiError e) {
      return failed(c, d, fallbackFrom, "connect", e.getMessage(), upStart);
    }
    GatewaySettings.ServerCalls calls = settings.callsTo(d.endpoint());
    sent = sendRetrying(c, d, calls, 0);
    return sent.handle((resp, err) -> {
      if (err != null) {
        Throwable e = unwrap(err);
        boolean timeout = e instanceof TimeoutException;
        return failed(c, d, fallbackFrom, timeout ? "timeout" : "connect",
            timeout ? "the model server did not answer within " + timeoutAsConfigured(d.endpoint()) + tries(calls)
                : "the model server is unreachable (" + e.getClass().getSimpleName() + ")" + tries(calls), upStart);
      }
      int status = resp.status().intValue();
      if (status >= 500) {
        resp.discardEntityBytes(materializer);
        return failed(c, d, fallbackFrom, "status", "the model server answered HTTP " + status + tries(calls), upStart);
      }
      if (status == 404 && d.servedModel() != null && !d.servedModel().isBlank()) {
        // The gateway named this model, not the agent: a model server that does not know it has lost
        // the version (a vLLM server restarted without its runtime-loaded LoRA adapters). Passed
        // through, the agent got a 404 for a model it never asked for, no fallback, and nothing
        // counted against the version, so its canary was never rolled back.
        // The version's entity loads its adapters again; this call falls back meanwhile.
        resp.discardEntityBytes(materializer);
        router.servingLost(c.agent(), d.version());
        return failed(c, d, fallbackFrom, "status", "the model server does not serve " + d.servedModel()
            + " (HTTP 404); a vLLM server that restarted has lost its runtime-loaded LoRA adapters: the node "
            + "is loading them again (docs/serving.md)", upStart);
      }
      if (status != 200) return clientError(c, d, resp);
      return c.request().stream() ? streamOut(c, d, fallbackFrom, resp, upStart)
          : wholeOut(c, d, fallbackFrom, resp, upStart);
    }).thenCompose(x -> x);
  }

  /**
   * One upstream call, sent again after a pause while the server is unreachable, silent or answers
   * 5xx and its {@code maxRetries} allow (the AgentScope model section's {@code max_retries} for v0's
   * server; none for other servers). Nothing has reached the agent yet, so a retry is invisible to it.
   * Completes with the last answer or failure.
   */
  private CompletionStage<HttpResponse> sendRetrying(Call c, ModelVersion.RouteDecision d,
      GatewaySettings.ServerCalls calls, int retried) {
    CompletionStage<HttpResponse> sent =
        upstream.send(d, c.request(), settings.upstreamKeyFor(c.agent(), d.endpoint()), calls.timeout());
    if (retried >= calls.maxRetries()) return sent;
    return sent.handle((resp, err) -> {
      boolean retry = err != null || resp.status().intValue() >= 500;
      if (!retry) return CompletableFuture.completedFuture(resp);
      if (resp != null) resp.discardEntityBytes(materializer);
      int n = retried + 1;
      log.info("gateway: agent {} session {} version {}: upstream {}, retry {} of {}", c.agent(), c.sessionId(),
          d.version(), err != null ? unwrap(err).getClass().getSimpleName() : "HTTP " + resp.status().intValue(),
          n, calls.maxRetries());
      return org.apache.pekko.pattern.Patterns.after(GatewaySettings.ServerCalls.backoff(n), system,
          () -> sendRetrying(c, d, calls, n));
    }).thenCompose(x -> x);
  }

  /** How often a failed call was tried, for its error message; nothing when it was tried once. */
  private static String tries(GatewaySettings.ServerCalls calls) {
    return calls.maxRetries() == 0 ? "" : " (tried " + (calls.maxRetries() + 1) + " times: agentscope.model.max-retries)";
  }

  /** The upstream refused the request (4xx): its error goes back to the agent; nothing is recorded. */
  private CompletionStage<HttpResponse> clientError(Call c, ModelVersion.RouteDecision d, HttpResponse resp) {
    int status = resp.status().intValue();
    // Nothing is recorded, so a claim made for this call holds no session (forgetting a real entry
    // only costs the next call a journal read).
    if (c.known().isEmpty()) knownSessions.forget(c.sessionId());
    return resp.entity().toStrict(settings.callsTo(d.endpoint()).timeout().toMillis(), materializer).thenApply(strict -> {
      metrics.request(c.agent(), d.version(), status);
      String text = strict.getData().decodeString(StandardCharsets.UTF_8);
      HttpResponse out;
      try {
        var node = Json.MAPPER.readTree(text);
        out = node != null && node.path("error").isObject()
            ? HttpResponse.create().withStatus(status).withEntity(strict.getContentType(), strict.getData())
            : new OpenAiError(status, "invalid_request_error", null, null,
                node != null && node.path("message").isTextual() ? node.path("message").asText() : text).response();
      } catch (java.io.IOException e) {
        out = new OpenAiError(status, "invalid_request_error", null, null, text).response();
      }
      Optional<HttpHeader> retryAfter = resp.getHeader("Retry-After");
      if (retryAfter.isPresent() && out.getHeader("Retry-After").isEmpty()) out = out.addHeader(retryAfter.get());
      return withHeaders(out, c, d);
    });
  }

  private CompletionStage<HttpResponse> failed(Call c, ModelVersion.RouteDecision d, String fallbackFrom, String kind,
      String message, long upStart) {
    metrics.upstreamError(c.agent(), d.version(), kind);
    log.warn("gateway: agent {} session {} version {}: upstream {} failure: {}", c.agent(), c.sessionId(),
        d.version(), kind, message);
    CompletionStage<Optional<ModelVersion.RouteDecision>> stable = fallbackFrom == null && settings.fallbackToStable()
        ? stableRoute.stable(c.agent(), c.sessionId(), d.version())
        : CompletableFuture.completedFuture(Optional.empty());
    return stable.exceptionally(e -> Optional.empty()).thenCompose(s -> {
      if (s.isPresent()) {
        metrics.fallback(c.agent(), d.version());
        log.info("gateway: agent {} session {}: candidate {} failed, retrying once on stable {}", c.agent(),
            c.sessionId(), d.version(), s.get().version());
        // Waiting for the failed candidate (up to gateway.timeout) is not latency the gateway adds.
        c.failedUpstreamNanos().addAndGet(System.nanoTime() - upStart);
        return attempt(c, s.get(), d.version());
      }
      long totalMs = (System.nanoTime() - upStart) / 1_000_000;
      boolean timeout = kind.equals("timeout");
      int status = timeout ? 504 : 502;
      metrics.request(c.agent(), d.version(), status);
      OpenAiError error = new OpenAiError(status, timeout ? "timeout" : "upstream_error", null,
          timeout ? "upstream_timeout" : "upstream_unavailable", "model version " + d.version() + ": " + message);
      record(c, d, fallbackFrom, new TurnRecorder.Outcome(null, false, error.getMessage(), 0, totalMs), begin(c));
      return CompletableFuture.completedFuture(withHeaders(error.response(), c, d));
    });
  }

  private CompletionStage<HttpResponse> wholeOut(Call c, ModelVersion.RouteDecision d, String fallbackFrom,
      HttpResponse resp, long upStart) {
    return resp.entity().toStrict(settings.callsTo(d.endpoint()).timeout().toMillis(), materializer).handle((strict, err) -> {
      if (err != null) {
        Throwable e = unwrap(err);
        boolean timeout = e instanceof TimeoutException;
        return failed(c, d, fallbackFrom, timeout ? "timeout" : "stream", timeout
            ? "the model server did not finish its answer within " + timeoutAsConfigured(d.endpoint())
            : "the model server's answer could not be read (" + e.getClass().getSimpleName() + ")", upStart);
      }
      long upEnd = System.nanoTime();
      Completion answer;
      try {
        answer = Completion.ofResponse(Json.MAPPER.readTree(strict.getData().toArray()), settings.captureTokens());
      } catch (java.io.IOException e) {
        return failed(c, d, fallbackFrom, "status", "the model server answered with invalid JSON", upStart);
      }
      long totalMs = (upEnd - upStart) / 1_000_000;
      observe(c, d, answer, upEnd - upStart, upEnd - upStart);
      // Registered now: the agent may act on the answer the moment it has it.
      TurnsInFlight.Turn turn = begin(c);
      AtomicBoolean settled = new AtomicBoolean();
      Consumer<Boolean> delivered = ok -> {
        if (!settled.compareAndSet(false, true)) return;
        if (!ok) metrics.aborted(c.agent(), d.version());
        // Recorded off the response path: the agent's latency is the model's, not the journal's.
        record(c, d, fallbackFrom, new TurnRecorder.Outcome(answer, !ok, null, totalMs, totalMs), turn);
      };
      // Delivered once the answer is handed to the connection; aborted when the connection ends first
      // (the agent gave up waiting: pekko-http then drops the answer unsent, its body never read).
      AtomicBoolean handedOver = new AtomicBoolean();
      Source<ByteString, NotUsed> body = Source.single(strict.getData())
          .map(bytes -> {
            handedOver.set(true);
            return bytes;
          })
          .watchTermination((mat, done) -> {
            done.whenComplete((ok, failure) -> delivered.accept(handedOver.get()));
            return mat;
          });
      c.clientGone().thenRun(() -> delivered.accept(false));
      metrics.added(false,
          (System.nanoTime() - c.startNanos() - (upEnd - upStart) - c.failedUpstreamNanos().get()) / 1e9);
      metrics.request(c.agent(), d.version(), 200);
      return CompletableFuture.completedFuture(withHeaders(HttpResponse.create().withEntity(
          HttpEntities.create(strict.getContentType(), strict.getData().size(), body)), c, d));
    }).thenCompose(x -> x);
  }

  /** Passes the event stream through as it arrives; records the answer when the stream ends. */
  private CompletionStage<HttpResponse> streamOut(Call c, ModelVersion.RouteDecision d, String fallbackFrom,
      HttpResponse resp, long upStart) {
    Completion answer = new Completion(settings.captureTokens());
    // Registered before the first byte goes out: the agent may act on the answer the moment the stream ends.
    TurnsInFlight.Turn turn = begin(c);
    Source<ByteString, Object> body = resp.entity().getDataBytes()
        .idleTimeout(settings.callsTo(d.endpoint()).timeout())
        .map(bytes -> {
          answer.feed(bytes.toArray(), System.nanoTime());
          return bytes;
        })
        .watchTermination((mat, done) -> {
          done.whenComplete((ok, err) -> streamEnded(c, d, fallbackFrom, answer, upStart, err, turn));
          return mat;
        })
        // The 200 is sent: an upstream failing now can only be told in the stream. It was closed
        // (or cut), which OpenAI clients read as a complete answer or a network fault; OpenAI's
        // servers end such a stream with an error event, which the SDKs raise as an API error.
        .recover(new org.apache.pekko.japi.pf.PFBuilder<Throwable, ByteString>()
            .match(Throwable.class, e -> midStreamError(unwrap(e), d.endpoint()) != null,
                e -> ByteString.fromString(answer.separatorBeforeNextEvent()
                    + midStreamError(unwrap(e), d.endpoint()).sseEvent()))
            .build());
    metrics.added(true, (upStart - c.startNanos() - c.failedUpstreamNanos().get()) / 1e9);
    metrics.request(c.agent(), d.version(), 200);
    return CompletableFuture.completedFuture(withHeaders(HttpResponse.create()
        .withEntity(HttpEntities.createChunked(resp.entity().getContentType(), body))
        .addHeader(RawHeader.create("Cache-Control", "no-cache")), c, d));
  }

  private void streamEnded(Call c, ModelVersion.RouteDecision d, String fallbackFrom, Completion answer,
      long upStart, Throwable err, TurnsInFlight.Turn turn) {
    long end = System.nanoTime();
    long totalMs = (end - upStart) / 1_000_000;
    long firstMs = answer.firstTokenNanos() == 0 ? totalMs : (answer.firstTokenNanos() - upStart) / 1_000_000;
    String error = null;
    boolean aborted = false;
    if (!answer.finished()) {
      Throwable e = err == null ? null : unwrap(err);
      if (e instanceof TimeoutException) {
        error = "the model server went silent for " + timeoutAsConfigured(d.endpoint()) + " mid-stream";
        metrics.upstreamError(c.agent(), d.version(), "timeout");
      } else if (e != null && fromUpstream(e)) {
        error = "the model server's stream broke: " + e.getClass().getSimpleName();
        metrics.upstreamError(c.agent(), d.version(), "stream");
      } else {
        aborted = true;
        metrics.aborted(c.agent(), d.version());
      }
    }
    observe(c, d, answer, end - upStart, firstMs * 1_000_000);
    record(c, d, fallbackFrom, new TurnRecorder.Outcome(answer, aborted, error, firstMs, totalMs), turn);
  }

  /**
   * {@code gateway.timeout} as a configuration file writes it, and its key: the agent and the operator
   * read it in error messages, where Java's {@code PT1M} meant nothing to either.
   */
  private String timeoutAsConfigured(String endpoint) {
    Duration own = settings.callsTo(endpoint).timeout();
    boolean gateway = !settings.endpointCalls().containsKey(GatewaySettings.normalized(endpoint));
    long ms = own.toMillis();
    String value = ms % 60_000 == 0 && ms > 0 ? ms / 60_000 + "m" : ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    return value + (gateway ? " (gateway.timeout)" : " (agentscope.model.timeout-seconds)");
  }

  /** The error a failed upstream stream ends with, or null when the failure is not the upstream's. */
  private OpenAiError midStreamError(Throwable e, String endpoint) {
    if (e instanceof TimeoutException) {
      return new OpenAiError(504, "timeout", null, "upstream_timeout",
          "the model server went silent for " + timeoutAsConfigured(endpoint) + " mid-stream");
    }
    if (fromUpstream(e)) {
      return new OpenAiError(502, "upstream_error", null, "upstream_unavailable",
          "the model server's stream broke (" + e.getClass().getSimpleName() + ")");
    }
    return null;
  }

  /** Failures of the upstream's entity stream, as opposed to the client going away. */
  private static boolean fromUpstream(Throwable e) {
    String name = e.getClass().getName();
    return name.contains("EntityStream") || name.contains("StreamTcpException")
        || name.contains("ResponseParsing") || name.contains("IllegalResponse");
  }

  private void observe(Call c, ModelVersion.RouteDecision d, Completion a, long totalNanos, long firstNanos) {
    metrics.tokens(c.agent(), d.version(), a.promptTokens(), a.completionTokens());
    metrics.latency(c.agent(), d.version(), totalNanos / 1e9, firstNanos / 1e9);
  }

  /**
   * Records the turn, after the answer: the inputs (hashes, desensitized ids) are built and sent on
   * another thread, so neither they nor the journal delay the agent. A recording failure never
   * costs the agent its answer; it is counted and logged.
   */
  private void record(Call c, ModelVersion.RouteDecision d, String fallbackFrom, TurnRecorder.Outcome outcome,
      TurnsInFlight.Turn turn) {
    if (!c.recorded()) {
      turn.end();
      return;
    }
    Instant answeredAt = c.receivedAt().plusNanos(System.nanoTime() - c.startNanos());
    // After the session's previous recording: an agent that sends its next turn the moment it has the
    // answer had that turn recorded against ids not yet updated, and a recurring message lost.
    recordings.run(c.sessionId(), () -> {
      CompletableFuture<Void> settled = new CompletableFuture<>();
      recording.execute(() -> recordOne(c, d, fallbackFrom, outcome, answeredAt, settled));
      return settled;
    }).whenComplete((ok, err) -> turn.end());
  }

  /** Builds the turn's inputs and sends them; {@code settled} completes once the reply is counted. */
  private void recordOne(Call c, ModelVersion.RouteDecision d, String fallbackFrom, TurnRecorder.Outcome outcome,
      Instant answeredAt, CompletableFuture<Void> settled) {
    List<io.otl.core.session.SessionInput> inputs;
    CompletionStage<AgentSession.RecordReply> sent;
    try {
      // What is known now, after the turns recorded before this one: its last message and ids
      // together, so that recurring messages are numbered against the history as stored.
      KnownSessions.Entry now = knownSessions.get(c.sessionId());
      boolean aligned = now != null && c.agent().equals(now.owner()) && now.lastMessage() != null;
      inputs = recorder.inputs(aligned ? now.eventIds() : c.known(), aligned ? now.lastMessage() : null,
          c.request(), c.routedVersion(), d.version(), d.servedModel(), fallbackFrom, outcome, c.receivedAt(),
          answeredAt);
      sent = recorder.submit(c.sessionId(), c.agent(), inputs);
    } catch (RuntimeException e) {
      try {
        recorded(c, null, e, List.of());
      } finally {
        settled.complete(null);
      }
      return;
    }
    sent.whenComplete((reply, err) -> {
      try {
        recorded(c, reply, err, inputs);
      } finally {
        settled.complete(null);
      }
    });
  }

  /** A turn of a recorded session, registered until its recording is settled. */
  private TurnsInFlight.Turn begin(Call c) {
    return c.recorded() ? turns.begin(c.sessionId()) : TurnsInFlight.Turn.NONE;
  }

  private void recorded(Call c, AgentSession.RecordReply reply, Throwable err,
      List<io.otl.core.session.SessionInput> inputs) {
    if (err == null && reply instanceof AgentSession.Recorded r) {
      // otl_events_accepted_total counted only the events API's and OTLP's events, so a node fed by
      // the gateway alone showed 0 while its sessions filled up.
      apiMetrics.eventsAccepted(r.accepted(), r.duplicates());
      if (r.sampled()) {
        knownSessions.recorded(c.sessionId(), c.agent(), c.routedVersion(), c.known(),
            inputs.stream().map(io.otl.core.session.SessionInput::eventId).toList());
      } else {
        knownSessions.forget(c.sessionId()); // sampled out: nothing stored, so no owner to hold to
      }
      return;
    }
    if (err == null && reply instanceof AgentSession.Rejected r && r.code() == AgentSession.RejectionCode.CONFLICT
        && !"agentId".equals(r.field())) {
      // Completed since the gateway last saw it (idle timeout): the agent keeps its answer, unrecorded.
      knownSessions.completed(c.sessionId());
      metrics.unrecorded(c.agent(), "session_completed");
      log.info("gateway: agent {} session {} is completed; this call was forwarded but not recorded", c.agent(),
          c.sessionId());
      return;
    }
    knownSessions.forget(c.sessionId());
    metrics.recordFailure(c.agent());
    log.warn("gateway: agent {} session {}: the call was not recorded: {}", c.agent(), c.sessionId(),
        err != null ? unwrap(err).toString() : ((AgentSession.Rejected) reply).message());
  }

  private static HttpResponse withHeaders(HttpResponse r, Call c, ModelVersion.RouteDecision d) {
    List<HttpHeader> h = new ArrayList<>();
    h.add(RawHeader.create(SESSION_HEADER, c.sessionId()));
    h.add(RawHeader.create(VERSION_HEADER, d.version()));
    return r.addHeaders(h);
  }

  // ---------------------------------------------------------------- errors

  /** Bodies declared up to this size (or twice the limit, if more) are read to the end before the 413. */
  private static final long DRAIN_LIMIT = 8L * 1024 * 1024;

  /**
   * 413 for a body declared over the limit. Answered at once, the connection closes under a client
   * still uploading, which then reads a reset instead of OpenAI's error (seen under load); so a body
   * of moderate size is read and discarded first, within the gateway's timeout, as the API does.
   */
  private CompletionStage<HttpResponse> refuseOversized(HttpRequest http, long declared) {
    if (declared > Math.max(DRAIN_LIMIT, 2 * settings.maxBodyBytes())) throw tooLarge();
    return http.entity().withoutSizeLimit().getDataBytes()
        .takeWithin(settings.timeout())
        .runWith(org.apache.pekko.stream.javadsl.Sink.ignore(), materializer)
        .handle((done, err) -> tooLarge().response());
  }

  /**
   * The whole body within {@code gateway.timeout}. What the client does wrong while sending it is its
   * 4xx: a connection closed mid-upload was a 500 with a stack trace logged at ERROR per request, and a
   * body trickled past the timeout a 503 {@code journal_timeout} blaming the node (a flood of either
   * filled the log and the 5xx series). The 408 closes the connection, as the rest of the body is unread.
   */
  private CompletionStage<org.apache.pekko.http.javadsl.model.HttpEntity.Strict> readBody(HttpRequest http) {
    return http.entity().withSizeLimit(settings.maxBodyBytes())
        .toStrict(settings.timeout().toMillis(), materializer)
        .handle((strict, err) -> {
          if (err == null) return CompletableFuture.completedFuture(strict);
          Throwable e = unwrap(err);
          if (e instanceof TimeoutException) {
            throw new OpenAiError(408, "invalid_request_error", null, "request_timeout",
                "the request body did not arrive within " + settings.timeout().toMillis() + " ms (gateway.timeout)");
          }
          if (e instanceof org.apache.pekko.http.scaladsl.model.EntityStreamException
              && !(e instanceof EntityStreamSizeException)) {
            throw new OpenAiError(400, "invalid_request_error", null, "incomplete_body",
                "the connection closed before the request body was complete");
          }
          return CompletableFuture.<org.apache.pekko.http.javadsl.model.HttpEntity.Strict>failedFuture(e);
        })
        .thenCompose(stage -> stage);
  }

  private OpenAiError tooLarge() {
    return new OpenAiError(413, "invalid_request_error", null, "request_too_large",
        "the request body is larger than the gateway's limit of " + settings.maxBodyBytes()
            + " bytes (gateway.max-body-bytes)");
  }

  private static HttpResponse toResponse(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof OpenAiError o) return o.response();
    if (e instanceof EntityStreamSizeException s) {
      return new OpenAiError(413, "invalid_request_error", null, "request_too_large",
          "the request body is larger than the gateway's limit of " + s.limit() + " bytes (gateway.max-body-bytes)")
          .response();
    }
    if (e instanceof ModelRouter.InvalidRouteException i) {
      return new OpenAiError(400, "invalid_request_error", null, "invalid_value", i.getMessage()).response();
    }
    if (e instanceof ModelRouter.NoVersionException n) {
      return new OpenAiError(404, "invalid_request_error", "model", "model_not_found", n.getMessage()).response();
    }
    if (e instanceof AskTimeoutException || e instanceof TimeoutException) {
      return new OpenAiError(503, "service_unavailable", null, "journal_timeout",
          "the node did not answer in time; nothing was forwarded, retry the request").response();
    }
    log.error("gateway: unexpected failure", e);
    return new OpenAiError(500, "server_error", null, null, "unexpected failure: " + e.getClass().getSimpleName())
        .response();
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
