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
import io.otl.core.session.SessionModel;
import io.otl.http.ClientConnection;
import io.otl.http.ContentEncoding;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
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
  private final Upstream upstream;
  private final GatewayMetrics metrics;
  private final GatewayModels models;
  private final ChatBodies bodies;
  private final TurnRecording turnRecording;
  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final GatewayTraffic traffic;
  /** Owners read from the journal without starting the session; null: ask the session itself. */
  private final SessionOwners owners;
  private final KnownSessions knownSessions = new KnownSessions(KNOWN_SESSIONS);
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
    this.system = system;
    this.traffic = traffic;
    this.settings = settings;
    this.identity = new GatewayIdentity(settings);
    this.collector = collector;
    this.router = router;
    this.stableRoute = stableRoute;
    this.upstream = new Upstream(system, settings.longestAttempt());
    this.metrics = new GatewayMetrics(apiMetrics.registry(), traffic);
    this.materializer = Materializer.matFromSystem(system);
    this.models = new GatewayModels(identity);
    this.bodies = new ChatBodies(settings, materializer);
    this.turnRecording = new TurnRecording(new TurnRecorder(collector, desensitizer, maxTextLength), knownSessions,
        turns, system.executionContext(), metrics, apiMetrics);
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
                get(() -> extractRequest(request -> complete(GatewayModels.storedCompletions(request, false)))),
                sealed(post(() -> withRequestTimeout(answerTimeout(), () ->
                    extractRequest(request -> completeWithFuture(limited(request, gone -> chat(request, gone))))))))),
            extractRequest(request -> complete(GatewayModels.storedCompletions(request, true))))),
        pathPrefix("models", () -> pathEndOrSingleSlash(() -> sealed(get(() -> extractRequest(request ->
            complete(guard(() -> models.list(request)))))))),
        // An agent's client owns these paths whatever the method: another method (the SDK's
        // models.delete) is OpenAI's 405; it fell through to the API's routes, whose 405 in the API's
        // shape the SDK read as "405: null".
        pathPrefix(segment("models").slash(GatewayModels.LOGICAL_MODEL), () -> pathEndOrSingleSlash(() ->
            extractRequest(request -> identity.callsAsAgent(request)
                ? sealed(get(() -> complete(guard(() -> models.retrieve(request))))) : reject()))),
        pathPrefix(segment("models").slash(segment()), id -> pathEndOrSingleSlash(() ->
            extractRequest(request -> identity.callsAsAgent(request) && !id.equals(models.agentOrNull(request))
                ? sealed(get(() -> complete(guard(() -> models.unknown(request, id))))) : reject()))),
        pathPrefix(PathMatchers.segment(GatewayModels.OPENAI_ELSEWHERE), name -> extractRequest(request ->
            complete(GatewayModels.notServed(request, name)))));
  }

  /**
   * OpenAI's paths at the root, for a client whose base URL lacks {@code /v1}: OpenAI's 404
   * {@code unknown_url} saying so, whatever the method (none of these names is a path of the node's own).
   */
  public static Route withoutV1() {
    return concat(
        pathPrefix(segment("chat").slash("completions"), () -> extractRequest(request ->
            complete(GatewayModels.withoutV1(request, "chat/completions")))),
        pathPrefix("models", () -> extractRequest(request -> complete(GatewayModels.withoutV1(request, "models")))),
        pathPrefix(PathMatchers.segment(GatewayModels.OPENAI_ELSEWHERE), name -> extractRequest(request ->
            complete(GatewayModels.withoutV1(request, name)))));
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

  /**
   * A call within {@code gateway.max-in-flight}, which holds its slot until its answer is out: a
   * whole answer (in memory by then) when it is handed over, a streamed one when its stream ends or
   * its client is gone (released at the stream's headers, slow streams were let in past the limit:
   * trial t33). And within {@code gateway.max-recordings-pending}: a turn is recorded after its answer,
   * off the slot, and under overload (a journal or sessions slower than the calls, each recording
   * asked again up to 6 times) the recordings piled up behind the gate without bound, each with its
   * call's request and answer, until the node's heap was full (trial t51). New calls get the 429 then.
   *
   * <p>The call watches its connection until its answer is out, then the connection forgets it
   * ({@link ClientConnection.Watch}).
   */
  private CompletionStage<HttpResponse> limited(HttpRequest request,
      java.util.function.Function<CompletionStage<Done>, CompletionStage<HttpResponse>> call) {
    int pending = turnRecording.pending();
    if (pending >= settings.maxRecordingsPending()) {
      return CompletableFuture.completedFuture(new OpenAiError(429, "rate_limit_exceeded", null, "overloaded",
          "the gateway has " + pending + " answered calls not yet recorded (gateway.max-recordings-pending); "
              + "retry shortly").response());
    }
    if (inFlight.incrementAndGet() > settings.maxInFlight()) {
      inFlight.decrementAndGet();
      return CompletableFuture.completedFuture(new OpenAiError(429, "rate_limit_exceeded", null, "overloaded",
          "the gateway has " + settings.maxInFlight() + " calls in flight; retry shortly").response());
    }
    ClientConnection.Watch watch = ClientConnection.watch(request);
    AtomicBoolean held = new AtomicBoolean(true);
    Runnable release = () -> {
      if (held.compareAndSet(true, false)) inFlight.decrementAndGet();
    };
    CompletionStage<HttpResponse> result;
    try {
      result = call.apply(watch.gone());
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    return result.exceptionally(GatewayErrors::toResponse).handle((r, e) -> {
      var entity = r == null ? null : r.entity();
      if (entity == null || !entity.isChunked()) {
        release.run(); // a whole answer (or an error) is in memory: its slot is free once it is handed over
        if (entity == null || entity.isStrict() || entity.getContentLengthOption().isEmpty()) {
          watch.close();
          return r;
        }
        // Its connection is watched until it is out (an answer pekko-http never sends, its client gone
        // first, ends with the connection).
        return r.withEntity(HttpEntities.create(entity.getContentType(), entity.getContentLengthOption().getAsLong(),
            entity.getDataBytes().watchTermination((mat, done) -> {
              done.whenComplete((ok, err) -> watch.close());
              return mat;
            })));
      }
      // A stream pekko-http never starts (its client left first) ends with the connection.
      watch.gone().thenRun(release);
      return r.withEntity(HttpEntities.createChunked(entity.getContentType(),
          entity.getDataBytes().watchTermination((mat, done) -> {
            done.whenComplete((ok, err) -> {
              release.run();
              watch.close();
            });
            return mat;
          })));
    });
  }

  private static HttpResponse guard(java.util.function.Supplier<HttpResponse> handler) {
    try {
      return handler.get();
    } catch (RuntimeException e) {
      return GatewayErrors.toResponse(e);
    }
  }

  // ---------------------------------------------------------------- POST /v1/chat/completions

  private CompletionStage<HttpResponse> chat(HttpRequest http, CompletionStage<Done> clientGone) {
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
    if (declared > settings.maxBodyBytes()) return bodies.refuseOversized(http, declared);
    return bodies.readBody(http).thenCompose(strict -> {
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
          // keeps its version while that version serves (design §3.3): it is routed pinned to the
          // version it started on, which this gateway remembers or the journal knows.
          // The owner is checked before the caller is routed: routing an agent that has no version
          // yet registers its v0 in the journal, and a call refused as another agent's (403) changes
          // nothing (design §7.1). Owner read and route ran together before, so a refused call wrote
          // the intruder's v0 (trial t35, GatewayRefusedCallRegistersNothingTest).
          KnownSessions.Entry remembered = generated ? null : knownSessions.get(session);
          CompletionStage<KnownSessions.Entry> existing = generated || remembered != null
              ? CompletableFuture.completedFuture(remembered) : known(session);
          return existing.thenCompose(known -> {
            // A session unknown so far is claimed before it is routed: its owner reaches memory and
            // journal only with the recording, after the answer, so another agent's call in between was
            // forwarded (docs/gateway.md promises 403, nothing forwarded); and claimed after routing,
            // two first calls of two agents both routed, the loser's v0 registered by a refused call
            // (review). The claim holds no version until the route gives one; a failed route drops it.
            boolean claimed = known == null && !generated;
            KnownSessions.Entry found = claimed ? knownSessions.claim(session, agent, null) : known;
            if (found != null) checkOwner(found.owner(), agent, session, sessionParam);
            boolean ours = claimed && found == null;
            return router.route(agent, session, startedOn(found, agent)).handle((d, routeFailure) -> {
              if (routeFailure != null) {
                if (ours) knownSessions.unclaim(session, agent);
                throw new CompletionException(GatewayErrors.unwrap(routeFailure));
              }
              if (ours) knownSessions.startedOn(session, agent, d.version());
              return forward(agent, session, request, found, d, start, clientGone);
            }).thenCompose(x -> x);
          });
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
    CompletableFuture<HttpResponse> answer = attempt(new ChatCall(agent, session, request, known, entry == null,
        d.version(), start, receivedAt, !completed, new AtomicLong(), clientGone), d, null).toCompletableFuture();
    // An agent whose client gives up on a slow model is what an operator looks for first; from here on
    // no retry or fallback is made for the call.
    clientGone.thenRun(() -> {
      if (!answer.isDone()) {
        log.info("gateway: agent {} session {} version {}: the agent's connection ended before its answer",
            agent, session, d.version());
      }
    });
    return answer;
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
            GatewayErrors.unwrap(err).getClass().getSimpleName());
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
  private CompletionStage<HttpResponse> attempt(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom) {
    long upStart = System.nanoTime();
    metrics.call(c.agent(), d.version());
    CompletionStage<HttpResponse> sent;
    try {
      Upstream.chatUrl(d);
    } catch (OpenAiError e) {
      return failed(c, d, fallbackFrom, "connect", e.getMessage(), upStart);
    }
    GatewaySettings.ServerCalls calls = settings.callsTo(d.endpoint());
    AtomicInteger tried = new AtomicInteger();
    sent = sendRetrying(c, d, calls, tried);
    return sent.handle((resp, err) -> {
      if (err != null) {
        Throwable e = GatewayErrors.unwrap(err);
        boolean timeout = e instanceof TimeoutException;
        return failed(c, d, fallbackFrom, timeout ? "timeout" : "connect",
            timeout ? "the model server did not answer within " + timeoutAsConfigured(d.endpoint()) + tries(tried.get())
                : "the model server is unreachable (" + e.getClass().getSimpleName() + ")" + tries(tried.get()), upStart);
      }
      int status = resp.status().intValue();
      if (status >= 500) {
        resp.discardEntityBytes(materializer);
        return failed(c, d, fallbackFrom, "status", "the model server answered HTTP " + status + tries(tried.get()), upStart);
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
      if (status == 401 || status == 403 || status == 407) {
        // The credentials were the gateway's (the node's upstream key), never the agent's: passed through,
        // the agent's SDK raised AuthenticationError as if its own gateway key were wrong, no fallback was
        // made and nothing counted against the version, so a candidate deployed without its server's key
        // failed its share of sessions for as long as its canary ran. The server's message is not passed
        // on either: OpenAI's names the key it refused (masked).
        resp.discardEntityBytes(materializer);
        return failed(c, d, fallbackFrom, "status", "the model server refused the gateway's credentials (HTTP "
            + status + "); the gateway sent it " + settings.upstreamKeySource(c.agent(), d.endpoint())
            + " (docs/gateway.md)", upStart);
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
   * Not once the agent's connection has ended: no one would get the answer, and an agent whose own
   * client gave up (its timeout is often the same timeout_seconds) sends the call again itself, so
   * each of its retries started a chain of the gateway's against a server already failing.
   * Completes with the last answer or failure; {@code tried} counts the sends.
   */
  private CompletionStage<HttpResponse> sendRetrying(ChatCall c, ModelVersion.RouteDecision d,
      GatewaySettings.ServerCalls calls, AtomicInteger tried) {
    int retried = tried.getAndIncrement();
    CompletionStage<HttpResponse> sent =
        upstream.send(d, c.request(), settings.upstreamKeyFor(c.agent(), d.endpoint()), calls.timeout());
    if (retried >= calls.maxRetries()) return sent;
    return sent.handle((resp, err) -> {
      boolean retry = err != null || resp.status().intValue() >= 500;
      if (!retry || clientLeft(c, d, retried)) return sent;
      if (resp != null) resp.discardEntityBytes(materializer);
      int n = retried + 1;
      return org.apache.pekko.pattern.Patterns.after(GatewaySettings.ServerCalls.jitteredBackoff(n), system, () -> {
        // An agent's client often gives up during the pause: then its last failure stands.
        if (clientLeft(c, d, retried)) return sent;
        log.info("gateway: agent {} session {} version {}: upstream {}, retry {} of {}", c.agent(), c.sessionId(),
            d.version(), err != null ? GatewayErrors.unwrap(err).getClass().getSimpleName()
                : "HTTP " + resp.status().intValue(), n, calls.maxRetries());
        return sendRetrying(c, d, calls, tried);
      });
    }).thenCompose(x -> x);
  }

  private static boolean clientLeft(ChatCall c, ModelVersion.RouteDecision d, int retried) {
    if (!c.clientGone().toCompletableFuture().isDone()) return false;
    log.info("gateway: agent {} session {} version {}: the agent's connection ended; not retried after try {}",
        c.agent(), c.sessionId(), d.version(), retried + 1);
    return true;
  }

  /** How often a failed call was tried, for its error message; nothing when it was tried once. */
  private static String tries(int tried) {
    return tried <= 1 ? "" : " (tried " + tried + " times: agentscope.model.max-retries)";
  }

  /** The upstream refused the request (4xx): its error goes back to the agent; nothing is recorded. */
  private CompletionStage<HttpResponse> clientError(ChatCall c, ModelVersion.RouteDecision d, HttpResponse resp) {
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

  private CompletionStage<HttpResponse> failed(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom, String kind,
      String message, long upStart) {
    metrics.upstreamError(c.agent(), d.version(), kind);
    log.warn("gateway: agent {} session {} version {}: upstream {} failure: {}", c.agent(), c.sessionId(),
        d.version(), kind, message);
    // Nobody is left to answer once the agent's connection has ended: no second model call for it.
    boolean agentWaits = !c.clientGone().toCompletableFuture().isDone();
    CompletionStage<Optional<ModelVersion.RouteDecision>> stable =
        fallbackFrom == null && settings.fallbackToStable() && agentWaits
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
      turnRecording.record(c, d, fallbackFrom, new TurnRecorder.Outcome(null, false, error.getMessage(), 0, totalMs),
          turnRecording.begin(c));
      return CompletableFuture.completedFuture(withHeaders(error.response(), c, d));
    });
  }

  private CompletionStage<HttpResponse> wholeOut(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom,
      HttpResponse resp, long upStart) {
    return resp.entity().toStrict(settings.callsTo(d.endpoint()).timeout().toMillis(), materializer).handle((strict, err) -> {
      if (err != null) {
        Throwable e = GatewayErrors.unwrap(err);
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
      TurnsInFlight.Turn turn = turnRecording.begin(c);
      AtomicBoolean settled = new AtomicBoolean();
      Consumer<Boolean> delivered = ok -> {
        if (!settled.compareAndSet(false, true)) return;
        if (!ok) metrics.aborted(c.agent(), d.version());
        // Recorded off the response path: the agent's latency is the model's, not the journal's.
        turnRecording.record(c, d, fallbackFrom, new TurnRecorder.Outcome(answer, !ok, null, totalMs, totalMs), turn);
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
      // A connection that ends after the answer was handed to it (the agent's Connection: close, or it
      // read and left) is the stream's to settle as delivered: settled here too, the two raced, and an
      // answer the agent had read was recorded aborted under load.
      c.clientGone().thenRun(() -> {
        if (!handedOver.get()) delivered.accept(false);
      });
      metrics.added(false,
          (System.nanoTime() - c.startNanos() - (upEnd - upStart) - c.failedUpstreamNanos().get()) / 1e9);
      metrics.request(c.agent(), d.version(), 200);
      return CompletableFuture.completedFuture(withHeaders(HttpResponse.create().withEntity(
          HttpEntities.create(strict.getContentType(), strict.getData().size(), body)), c, d));
    }).thenCompose(x -> x);
  }

  /** Passes the event stream through as it arrives; records the answer when the stream ends. */
  private CompletionStage<HttpResponse> streamOut(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom,
      HttpResponse resp, long upStart) {
    Completion answer = new Completion(settings.captureTokens());
    // Registered before the first byte goes out: the agent may act on the answer the moment the stream ends.
    TurnsInFlight.Turn turn = turnRecording.begin(c);
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
            .match(Throwable.class, e -> midStreamError(GatewayErrors.unwrap(e), d.endpoint()) != null,
                e -> ByteString.fromString(answer.separatorBeforeNextEvent()
                    + midStreamError(GatewayErrors.unwrap(e), d.endpoint()).sseEvent()))
            .build());
    metrics.added(true, (upStart - c.startNanos() - c.failedUpstreamNanos().get()) / 1e9);
    metrics.request(c.agent(), d.version(), 200);
    return CompletableFuture.completedFuture(withHeaders(HttpResponse.create()
        .withEntity(HttpEntities.createChunked(resp.entity().getContentType(), body))
        .addHeader(RawHeader.create("Cache-Control", "no-cache")), c, d));
  }

  private void streamEnded(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom, Completion answer,
      long upStart, Throwable err, TurnsInFlight.Turn turn) {
    long end = System.nanoTime();
    long totalMs = (end - upStart) / 1_000_000;
    long firstMs = answer.firstTokenNanos() == 0 ? totalMs : (answer.firstTokenNanos() - upStart) / 1_000_000;
    String error = null;
    boolean aborted = false;
    if (!answer.finished()) {
      Throwable e = err == null ? null : GatewayErrors.unwrap(err);
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
    turnRecording.record(c, d, fallbackFrom, new TurnRecorder.Outcome(answer, aborted, error, firstMs, totalMs), turn);
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

  private void observe(ChatCall c, ModelVersion.RouteDecision d, Completion a, long totalNanos, long firstNanos) {
    metrics.tokens(c.agent(), d.version(), a.promptTokens(), a.completionTokens());
    metrics.latency(c.agent(), d.version(), totalNanos / 1e9, firstNanos / 1e9);
  }

  private static HttpResponse withHeaders(HttpResponse r, ChatCall c, ModelVersion.RouteDecision d) {
    List<HttpHeader> h = new ArrayList<>();
    h.add(RawHeader.create(SESSION_HEADER, c.sessionId()));
    h.add(RawHeader.create(VERSION_HEADER, d.version()));
    return r.addHeaders(h);
  }

}
