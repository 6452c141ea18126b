package io.otl.http.gateway;

import io.otl.core.Ids;
import io.otl.core.api.ModelRouter;
import io.otl.core.api.StableRoute;
import io.otl.core.model.ModelVersion;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One gateway call upstream (design §7.5): the routed version's server is called (again after a pause
 * while its {@code max-retries} allow), a candidate's failure counts against it and, with
 * {@code fallback-to-stable}, the call is tried once more on the stable; the answer goes back whole or
 * streamed as it arrives, and the turn is recorded when it is out. {@link GatewayRoutes} decides whose
 * call it is and where it goes; this calls the model server and answers.
 */
final class ChatForwarding {
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);

  private final ActorSystem<?> system;
  private final GatewaySettings settings;
  private final ModelRouter router;
  private final StableRoute stableRoute;
  private final Upstream upstream;
  private final GatewayMetrics metrics;
  private final TurnRecording turnRecording;
  private final KnownSessions knownSessions;
  private final Materializer materializer;

  ChatForwarding(ActorSystem<?> system, GatewaySettings settings, ModelRouter router, StableRoute stableRoute,
      GatewayMetrics metrics, TurnRecording turnRecording, KnownSessions knownSessions, Materializer materializer) {
    this.system = system;
    this.settings = settings;
    this.router = router;
    this.stableRoute = stableRoute;
    this.upstream = new Upstream(system, settings.longestAttempt());
    this.metrics = metrics;
    this.turnRecording = turnRecording;
    this.knownSessions = knownSessions;
    this.materializer = materializer;
  }

  /** Calls one version; on an upstream failure, once more on the stable when allowed. */
  CompletionStage<HttpResponse> attempt(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom) {
    long upStart = System.nanoTime();
    metrics.call(c.agent(), d.version());
    CompletionStage<HttpResponse> sent;
    try {
      Upstream.target(d);
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
      if (GatewayHop.refusedAsLoop(resp)) {
        // Another gateway (or this one) refused the call it was forwarded: the version's endpoint is a
        // gateway, not a model server. Its failure, as an unreachable server is (fallback, counted against it).
        resp.discardEntityBytes(materializer);
        return failed(c, d, fallbackFrom, "status", loopMessage(d.endpoint()), upStart);
      }
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
      if (c.request().stream() && isJson(resp)) return notAStream(c, d, fallbackFrom, resp, upStart);
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
        log.info("gateway: agent {} session {} version {}: upstream {}, retry {} of {}", Ids.shown(c.agent()), Ids.shown(c.sessionId()),
            d.version(), err != null ? GatewayErrors.unwrap(err).getClass().getSimpleName()
                : "HTTP " + resp.status().intValue(), n, calls.maxRetries());
        return sendRetrying(c, d, calls, tried);
      });
    }).thenCompose(x -> x);
  }

  private static boolean clientLeft(ChatCall c, ModelVersion.RouteDecision d, int retried) {
    if (!c.clientGone().toCompletableFuture().isDone()) return false;
    log.info("gateway: agent {} session {} version {}: the agent's connection ended; not retried after try {}",
        Ids.shown(c.agent()), Ids.shown(c.sessionId()), d.version(), retried + 1);
    return true;
  }

  /** How often a failed call was tried, for its error message; nothing when it was tried once. */
  private static String tries(int tried) {
    return tried <= 1 ? "" : " (tried " + tried + " times: agentscope.model.max-retries)";
  }

  private static boolean isJson(HttpResponse resp) {
    var type = resp.entity().getContentType().mediaType();
    return type.mainType().equals("application") && type.subType().equals("json");
  }

  /**
   * A streamed call answered 200 with one JSON body, not an event stream (a proxy's error object in a 200, a
   * server that does not stream): the version's failure, as that body is for a call not streamed. Passed
   * through, the 200 with no {@code data:} events was an empty stream to the agent's SDK, no error raised, and
   * the turn was recorded as an empty answer the agent had left (trial-gw).
   */
  private CompletionStage<HttpResponse> notAStream(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom,
      HttpResponse resp, long upStart) {
    return resp.entity().toStrict(settings.callsTo(d.endpoint()).timeout().toMillis(), materializer)
        .handle((strict, err) -> {
          String why = "the model server answered a streamed call (stream: true) with one JSON body "
              + "(application/json), not an event stream (text/event-stream)";
          if (err == null) {
            try {
              String notAnAnswer = Completion.notAnAnswer(Json.MAPPER.readTree(strict.getData().toArray()));
              if (notAnAnswer != null) why = notAnAnswer;
            } catch (java.io.IOException e) {
              // Not JSON either: the content type's failure stands.
            }
          }
          return failed(c, d, fallbackFrom, "status", why, upStart);
        }).thenCompose(x -> x);
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
    long failedAt = System.nanoTime();
    metrics.upstreamError(c.agent(), d.version(), kind);
    log.warn("gateway: agent {} session {} version {}: upstream {} failure: {}", Ids.shown(c.agent()), Ids.shown(c.sessionId()),
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
        log.info("gateway: agent {} session {}: candidate {} failed, retrying once on stable {}", Ids.shown(c.agent()),
            Ids.shown(c.sessionId()), d.version(), s.get().version());
        // Waiting for the failed candidate (up to gateway.timeout) is not latency the gateway adds; finding the
        // stable is (it was counted as the candidate's, which the metric's HELP and docs did not say).
        c.failedUpstreamNanos().addAndGet(failedAt - upStart);
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
        var tree = Json.MAPPER.readTree(strict.getData().toArray());
        // An error object in a 200 fails the call as a 5xx does (the agent gets a 502, or the stable's
        // answer): passed through, the agent's SDK returned a completion without choices.
        String notAnAnswer = Completion.notAnAnswer(tree);
        if (notAnAnswer != null) return failed(c, d, fallbackFrom, "status", notAnAnswer, upStart);
        answer = Completion.ofResponse(tree, settings.captureTokens());
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
    // An agent gone before the answer was whole never read it. pekko-http still writes the stream into a
    // connection the client half-closed (its timeout before the first token), so the stream ends whole:
    // it was recorded as an answer the agent had read (trial t104). Read before each chunk is passed on,
    // and only until the answer is whole: a client that stops reading at the finish reason (openai's
    // loops break there) and leaves before [DONE] or a usage chunk read the whole answer.
    AtomicBoolean goneBeforeLastChunk = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<String> cutShort = new java.util.concurrent.atomic.AtomicReference<>();
    Source<ByteString, Object> answerStream = resp.entity().getDataBytes()
        .idleTimeout(settings.callsTo(d.endpoint()).timeout())
        .map(bytes -> {
          if (!answer.finished()) goneBeforeLastChunk.set(c.clientGone().toCompletableFuture().isDone());
          answer.feed(bytes.toArray(), System.nanoTime());
          return bytes;
        })
        // Pulled only when the model server's stream has ended (not when the agent cancels it): one that ended
        // before the answer was whole (no finish reason, no [DONE], no error event of its own) was cut short by
        // the server. It reached the agent as a clean end, which the SDKs read as a whole answer, and was recorded
        // as the agent's abort, counted against nothing (trial-gw); it ends with OpenAI's error event now.
        .concatLazy(Source.lazySource(() -> {
          if (answer.finished() || answer.upstreamError() != null) return Source.<ByteString>empty();
          OpenAiError e = new OpenAiError(502, "upstream_error", null, "upstream_unavailable",
              "the model server ended its stream before the answer was whole (no finish reason, no [DONE])");
          cutShort.set(e.getMessage());
          return Source.single(ByteString.fromString(answer.separatorBeforeNextEvent() + e.sseEvent()));
        }))
        .watchTermination((mat, done) -> {
          done.whenComplete((ok, err) ->
              streamEnded(c, d, fallbackFrom, answer, upStart, err, turn, goneBeforeLastChunk.get(), cutShort.get()));
          return mat;
        });
    // A response pekko-http drops unsent (its connection cut before the model's first byte) is still
    // read to its end and recorded aborted: GatewayRoutes#limited runs it then (trial t156).
    Source<ByteString, Object> body = answerStream
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
      long upStart, Throwable err, TurnsInFlight.Turn turn, boolean clientGone, String cutShort) {
    long end = System.nanoTime();
    long totalMs = (end - upStart) / 1_000_000;
    long firstMs = answer.firstTokenNanos() == 0 ? totalMs : (answer.firstTokenNanos() - upStart) / 1_000_000;
    String error = null;
    boolean aborted = false;
    if (answer.upstreamError() != null) {
      // The server failed the answer itself, in its stream (vLLM: an error event, then [DONE]): it went to
      // the agent as sent, and the agent's SDK raised it. Recorded as a whole answer (vLLM) or as the
      // client's abort (OpenAI's, without [DONE]) before, counted against nothing, and exported as text.
      error = answer.upstreamError();
      metrics.upstreamError(c.agent(), d.version(), "stream");
    } else if (!answer.finished()) {
      Throwable e = err == null ? null : GatewayErrors.unwrap(err);
      if (e instanceof TimeoutException) {
        error = "the model server went silent for " + timeoutAsConfigured(d.endpoint()) + " mid-stream";
        metrics.upstreamError(c.agent(), d.version(), "timeout");
      } else if (e != null && fromUpstream(e)) {
        error = "the model server's stream broke: " + e.getClass().getSimpleName();
        metrics.upstreamError(c.agent(), d.version(), "stream");
      } else if (cutShort != null && !clientGone && !c.clientGone().toCompletableFuture().isDone()) {
        error = cutShort;
        metrics.upstreamError(c.agent(), d.version(), "stream");
      } else {
        aborted = true;
        metrics.aborted(c.agent(), d.version());
      }
    } else if (clientGone) {
      aborted = true;
      metrics.aborted(c.agent(), d.version());
    }
    observe(c, d, answer, end - upStart, firstMs * 1_000_000);
    turnRecording.record(c, d, fallbackFrom, new TurnRecorder.Outcome(answer, aborted, error, firstMs, totalMs), turn);
  }

  /**
   * Why a version's call looped, naming the setting to change: v0's server is the AgentScope model
   * section's base URL (the only endpoint with calls of its own configured), any other a registered endpoint.
   */
  private String loopMessage(String endpoint) {
    boolean baseUrl = settings.endpointCalls().containsKey(GatewaySettings.normalized(endpoint));
    String where = baseUrl ? "the AgentScope model section's base_url (agentscope.model.base-url)"
        : "the version's registered endpoint";
    return "loop detected: " + where + " points at an OTL node's gateway, which refused the call this gateway "
        + "forwarded (HTTP " + GatewayHop.STATUS + " Misdirected Request, " + GatewayHop.HEADER + ": refused); " + GatewayHop.FIX;
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
    h.add(RawHeader.create(GatewayRoutes.SESSION_HEADER, c.sessionId()));
    h.add(RawHeader.create(GatewayRoutes.VERSION_HEADER, d.version()));
    return r.addHeaders(h);
  }
}
