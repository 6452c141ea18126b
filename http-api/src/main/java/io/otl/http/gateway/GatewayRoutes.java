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
import io.otl.core.session.SessionSampler;
import io.otl.http.ClientConnection;
import io.otl.http.ContentEncoding;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
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
  private final GatewayMetrics metrics;
  private final GatewayModels models;
  private final ChatBodies bodies;
  private final TurnRecording turnRecording;
  private final ChatForwarding forwarding;
  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final GatewayTraffic traffic;
  /** Owners read from the journal without starting the session; null: ask the session itself. */
  private final SessionOwners owners;
  private final KnownSessions knownSessions = new KnownSessions(KNOWN_SESSIONS);
  /** Which sessions the data collector keeps: one it drops stores nothing, so nobody owns it. */
  private final SessionSampler sampler;
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
   * @param sampler the data collector's sampling: a session it drops is claimed by no agent
   * @param modelCreated when an agent's model was created (its stable version's registration), for
   *     {@code GET /v1/models}; empty for an agent with no version yet, read without registering one
   */
  public GatewayRoutes(ActorSystem<?> system, GatewaySettings settings, DataCollector collector, ModelRouter router,
      StableRoute stableRoute, io.otl.http.ApiMetrics apiMetrics, io.otl.core.session.Desensitizer desensitizer,
      int maxTextLength, GatewayTraffic traffic, SessionOwners owners, TurnsInFlight turns, SessionSampler sampler,
      java.util.function.Function<String, CompletionStage<java.util.Optional<java.time.Instant>>> modelCreated) {
    this.owners = owners;
    this.sampler = sampler;
    this.traffic = traffic;
    this.settings = settings;
    this.answerTimeout = FiniteDuration.create(settings.answerTimeout().toMillis(), TimeUnit.MILLISECONDS);
    this.identity = new GatewayIdentity(settings);
    this.collector = collector;
    this.router = router;
    this.metrics = new GatewayMetrics(apiMetrics.registry(), traffic);
    this.materializer = Materializer.matFromSystem(system);
    this.models = new GatewayModels(identity, modelCreated);
    this.bodies = new ChatBodies(settings, materializer);
    this.turnRecording = new TurnRecording(new TurnRecorder(collector, desensitizer, maxTextLength), knownSessions,
        turns, system.executionContext(), metrics, apiMetrics);
    this.forwarding = new ChatForwarding(system, settings, router, stableRoute, metrics, turnRecording, knownSessions,
        materializer);
  }

  /**
   * The chat route waits {@link GatewaySettings#answerTimeout}: the server's request-timeout (20 s,
   * for the API's quick calls) answered a model that took longer 503 "retry the request", where docs
   * promise 504 after gateway.timeout.
   */
  private FiniteDuration answerTimeout() {
    return answerTimeout;
  }

  /**
   * {@link #answerTimeout()}, computed once: the route's inner directives are built again for every
   * request, and {@link java.time.Duration#multipliedBy} divides BigIntegers (a JFR profile of W8 found it
   * on every call).
   */
  private final FiniteDuration answerTimeout;

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
            completeWithFuture(guardAsync(() -> models.list(request)))))))),
        // An agent's client owns these paths whatever the method: another method (the SDK's
        // models.delete) is OpenAI's 405; it fell through to the API's routes, whose 405 in the API's
        // shape the SDK read as "405: null".
        pathPrefix(segment("models").slash(GatewayModels.LOGICAL_MODEL), () -> pathEndOrSingleSlash(() ->
            extractRequest(request -> identity.callsAsAgent(request)
                ? identified(request, () -> sealed(get(() -> completeWithFuture(guardAsync(() -> models.retrieve(request))))))
                : reject()))),
        pathPrefix(segment("models").slash(segment()), id -> pathEndOrSingleSlash(() ->
            extractRequest(request -> identity.callsAsAgent(request) && !id.equals(models.agentOrNull(request))
                ? identified(request, () -> sealed(get(() -> complete(guard(() -> models.unknown(request, id))))))
                : reject()))),
        pathPrefix(PathMatchers.segment(GatewayModels.OPENAI_ELSEWHERE), name -> extractRequest(request ->
            complete(GatewayModels.notServed(request, name)))));
  }

  /**
   * Whether {@link #route} answers this {@code /v1/models/{x}} (canonical path) rather than the API's
   * {@code GET /v1/models/{agentId}}: from an agent's client, {@code default} or a name other than the agent's
   * own. The same test as the route's, for the node-wide refusals' shape (RequestGuard), which come before it.
   */
  public boolean answersModelPath(HttpRequest request) {
    String prefix = "/v1/models/";
    String path = request.getUri().path();
    if (!path.startsWith(prefix)) return false;
    String id = path.substring(prefix.length());
    if (id.isEmpty() || id.indexOf('/') >= 0 || !identity.callsAsAgent(request)) return false;
    return id.equals(GatewayModels.LOGICAL_MODEL) || !id.equals(models.agentOrNull(request));
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
          "the gateway has " + settings.maxInFlight() + " calls in flight (gateway.max-in-flight); retry shortly").response());
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
      // The stream holds the slot until it ends, whoever runs it. pekko-http drops a response without
      // running its body when the connection is cut first (a reset before the model's first byte), so
      // then the node reads it (recorded aborted, the model server's connection freed). Not at the
      // client's FIN: a client that half-closes after its request reads on, and claimed there it read
      // an empty 200 while its answer, drained, no longer counted in max-in-flight (review of t156).
      Source<ByteString, NotUsed> stream = entity.getDataBytes().watchTermination((mat, done) -> {
        done.whenComplete((ok, err) -> {
          release.run();
          watch.close();
        });
        return NotUsed.getInstance();
      });
      AtomicBoolean claimed = new AtomicBoolean();
      watch.dropped().thenRun(() -> {
        if (claimed.compareAndSet(false, true)) stream.runWith(Sink.ignore(), materializer);
      });
      Source<ByteString, NotUsed> body = Source.<ByteString, NotUsed>lazySource(
              () -> claimed.compareAndSet(false, true) ? stream : Source.<ByteString>empty())
          .mapMaterializedValue(m -> NotUsed.getInstance());
      return r.withEntity(HttpEntities.createChunked(entity.getContentType(), body));
    });
  }

  /**
   * {@code inner} for a request whose agent is known: a wrong key is the gateway's 401 (a mismatched
   * {@code X-Agent-Id} its 403) whatever the method, before another method's 405.
   */
  private Route identified(HttpRequest request, java.util.function.Supplier<Route> inner) {
    try {
      identity.identify(request);
    } catch (RuntimeException e) {
      return complete(GatewayErrors.toResponse(e));
    }
    return inner.get();
  }

  /** As {@link #guard}, for an answer that comes later: a failure of it (an ask timeout) in OpenAI's object too. */
  private static CompletionStage<HttpResponse> guardAsync(
      java.util.function.Supplier<CompletionStage<HttpResponse>> handler) {
    try {
      return handler.get().exceptionally(GatewayErrors::toResponse);
    } catch (RuntimeException e) {
      return java.util.concurrent.CompletableFuture.completedFuture(GatewayErrors.toResponse(e));
    }
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
            // A session id holding an API key is refused before anything claims, routes or logs it; one a
            // session already has (an earlier build's journal) keeps working.
            String sessionKey = known == null && !generated ? Ids.keyProblem(sessionParam, session) : null;
            if (sessionKey != null) throw OpenAiError.invalid(sessionParam, sessionKey);
            // A session unknown so far is claimed before it is routed: its owner reaches memory and
            // journal only with the recording, after the answer, so another agent's call in between was
            // forwarded (docs/gateway.md promises 403, nothing forwarded); and claimed after routing,
            // two first calls of two agents both routed, the loser's v0 registered by a refused call
            // (review). The claim holds no version until the route gives one; a failed route drops it.
            // A new session that sampling drops will store nothing and so has no owner: claimed, it was
            // another agent's 403 for as long as one call of it was in flight (trial t111).
            boolean claimed = known == null && !generated && sampler.keep(session);
            KnownSessions.Entry found = claimed ? knownSessions.claim(session, agent, null) : known;
            if (found != null) checkOwner(found.owner(), agent, session, sessionParam);
            boolean ours = claimed && found == null;
            return router.route(agent, session, startedOn(found, agent)).handle((d, routeFailure) -> {
              if (routeFailure != null) {
                if (ours) knownSessions.unclaim(session, agent);
                Throwable cause = GatewayErrors.unwrap(routeFailure);
                // The agent's entity refuses to register an agent whose id holds a key (design §7.1's
                // 400, pointing at the header): nothing is registered, labelled or logged under it.
                String agentKey = cause instanceof io.otl.core.api.ModelRouter.InvalidRouteException
                    ? Ids.keyProblem(AGENT_HEADER, agent) : null;
                throw new CompletionException(agentKey != null ? OpenAiError.invalid(AGENT_HEADER, agentKey) : cause);
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
      log.info("gateway: agent {} session {} is completed; this call is forwarded but not recorded", Ids.shown(agent),
          Ids.shown(session));
    }
    Instant receivedAt = Instant.now().minusNanos(System.nanoTime() - start);
    CompletableFuture<HttpResponse> answer = forwarding.attempt(new ChatCall(agent, session, request, known, entry == null,
        d.version(), d.servedModel(), start, receivedAt, !completed, new AtomicLong(), clientGone), d, null).toCompletableFuture();
    // An agent whose client gives up on a slow model is what an operator looks for first; from here on
    // no retry or fallback is made for the call.
    clientGone.thenRun(() -> {
      if (!answer.isDone()) {
        log.info("gateway: agent {} session {} version {}: the agent's connection ended before its answer",
            Ids.shown(agent), Ids.shown(session), d.version());
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
        log.warn("gateway: the journal did not say who owns session {} ({}); asking the session", Ids.shown(sessionId),
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
          "session " + Ids.shown(sessionId) + " belongs to another agent; agent " + Ids.shown(agent)
              + " may not write to it");
    }
  }
}
