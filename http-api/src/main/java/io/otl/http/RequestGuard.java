package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractMaterializer;
import static org.apache.pekko.http.javadsl.server.Directives.extractParserSettings;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.handleExceptions;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.mapRejections;
import static org.apache.pekko.http.javadsl.server.Directives.mapRequestContext;
import static org.apache.pekko.http.javadsl.server.Directives.mapRequest;
import static org.apache.pekko.http.javadsl.server.Directives.mapResponse;
import static org.apache.pekko.http.javadsl.server.Directives.mapRouteResultFuture;
import static org.apache.pekko.http.javadsl.server.Directives.onComplete;

import io.otl.http.gateway.OpenAiError;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.TimeoutAccess;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.javadsl.server.Complete;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.util.ByteString;

/**
 * The one guard around the whole sealed route (issue #14.1). A request takes an in-flight slot when
 * it enters and gives it back exactly once, on whichever comes first: the sealed route's result
 * (a response, a rejection turned into a 404/405/413, a failure turned into a 5xx, a client that
 * went away mid-upload), or pekko-http's request timeout. Errors and rejections are handled
 * inside the guard, so no completion path can skip the release.
 *
 * <p>Bodies are collected here, bounded by the request timeout: pekko-http starts its request
 * timer only when the last byte of the body has arrived, so a body trickled one byte at a time
 * would otherwise hold a slot for as long as the client likes. Health and {@code /metrics} take
 * no slot: probes and scrapes must answer while the node sheds load.
 */
public final class RequestGuard {
  static final String UNMATCHED = "unmatched";

  private final AtomicInteger inFlight = new AtomicInteger();
  private final int maxInFlight;
  private final ApiMetrics metrics;
  private final BooleanSupplier stopping;
  private final ClientErrorLog errorLog;
  /** Paths whose route reads its body itself, with a limit and an error shape of its own. */
  private final java.util.Set<String> ownBodies;
  /** Paths whose bodies may exceed the server's limit, with theirs (ApiRoutes.build). */
  private final Map<String, Long> bodyLimits;
  /** A refusal the headers alone decide (the token's 401), answered before a slot is taken or the body read. */
  private final Function<HttpRequest, Optional<HttpResponse>> beforeBody;
  private final java.util.function.Predicate<HttpRequest> gatewayAnswers;

  /**
   * @param ownBodies paths left to read their own bodies: the gateway's chat completions take up
   *     to {@code gateway.max-body-bytes} (4 MiB by default, above the API's 1 MiB) and answer an
   *     oversized body with OpenAI's error object, bounded in time by {@code gateway.timeout}
   */
  RequestGuard(int maxInFlight, ApiMetrics metrics, BooleanSupplier stopping, ClientErrorLog errorLog,
      java.util.Set<String> ownBodies, Map<String, Long> bodyLimits,
      Function<HttpRequest, Optional<HttpResponse>> beforeBody) {
    this(maxInFlight, metrics, stopping, errorLog, ownBodies, bodyLimits, beforeBody, request -> false);
  }

  /**
   * @param gatewayAnswers requests outside the gateway's fixed paths that the gateway answers all the same
   *     (an agent's {@code GET /v1/models/default}), so its refusals come in OpenAI's error object too
   */
  RequestGuard(int maxInFlight, ApiMetrics metrics, BooleanSupplier stopping, ClientErrorLog errorLog,
      java.util.Set<String> ownBodies, Map<String, Long> bodyLimits,
      Function<HttpRequest, Optional<HttpResponse>> beforeBody,
      java.util.function.Predicate<HttpRequest> gatewayAnswers) {
    this.gatewayAnswers = gatewayAnswers;
    this.ownBodies = ownBodies;
    this.bodyLimits = bodyLimits;
    this.beforeBody = beforeBody;
    this.maxInFlight = maxInFlight;
    this.metrics = metrics;
    this.stopping = stopping;
    this.errorLog = errorLog;
    metrics.gauge("otl_http_in_flight", "API requests holding an in-flight slot (health and /metrics take none)",
        () -> Map.of("", (double) inFlight.get()));
  }

  /**
   * Paths are made {@link ApiRoutes#canonical canonical} here and nowhere else, before routing, so
   * {@code /v1/sessions/x/events/} is {@code /v1/sessions/x/events} for the routes, the auth's list
   * of documented paths, the in-flight exemptions and the metric labels alike.
   */
  Route wrap(Route api) {
    return mapResponse(Auth::challenged, () ->
        mapRequestContext(RequestGuard::canonical, () -> guarded(api)));
  }


  static org.apache.pekko.http.javadsl.server.RequestContext canonical(
      org.apache.pekko.http.javadsl.server.RequestContext ctx) {
    HttpRequest request = ctx.getRequest();
    String raw = request.getUri().getPathString();
    String canonical = ApiRoutes.canonical(raw);
    if (canonical.equals(raw)) return ctx;
    return ctx.withRequest(request.withUri(request.getUri().path(canonical)))
        .withUnmatchedPath(ApiRoutes.canonical(ctx.getUnmatchedPath()));
  }

  /**
   * The name of the first header whose value holds a character outside printable ASCII (pekko-http decodes
   * a byte of 0x80 or more as the lead of a UTF-8 sequence, taking the bytes after it unchecked: {@code E9}
   * took the line end, and the next header became part of this one's value), or null. A name that is not
   * plain letters, digits and dashes is not named back.
   */
  static String headerNotAscii(HttpRequest request) {
    for (org.apache.pekko.http.javadsl.model.HttpHeader h : request.getHeaders()) {
      String v = h.value();
      for (int i = 0; i < v.length(); i++) {
        if (v.charAt(i) > 0x7E) return h.name().matches("[A-Za-z0-9-]{1,40}") ? h.name() : "(a header)";
      }
    }
    return null;
  }

  private static String notAsciiMessage(String header) {
    return "the header " + header + " holds a character outside ASCII; send header values as ASCII "
        + "(percent-encode other text): such a byte is read as the start of a UTF-8 sequence, which can take in "
        + "the headers after it, so this request was not read further";
  }

  static final String UNMET_EXPECTATION = "the Expect header asks for an expectation this node does not meet "
      + "(it meets 100-continue only, RFC 9110 section 10.1.1); the request was not processed: send it without that "
      + "expectation";

  /**
   * True when an {@code Expect} header holds an expectation other than {@code 100-continue} (which pekko-http
   * meets). RFC 9110 §10.1.1 lets a server refuse those with 417; the node ignored them and processed the
   * request, so a client that made its request depend on one had it stored all the same.
   */
  static boolean unmetExpectation(HttpRequest request) {
    for (org.apache.pekko.http.javadsl.model.HttpHeader h : request.getHeaders()) {
      if (!h.is("expect")) continue;
      for (String expectation : h.value().split(",")) {
        String e = expectation.strip();
        if (!e.isEmpty() && !e.equalsIgnoreCase("100-continue")) return true;
      }
    }
    return false;
  }

  /** A refusal from the headers alone: a body still arriving is not read, so the connection closes after it. */
  private static HttpResponse closedUnlessRead(HttpRequest request, HttpResponse refusal) {
    return request.entity() instanceof HttpEntity.Strict ? refusal
        : refusal.addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close"));
  }

  /**
   * {@link #unmetExpectation}'s 417 for a listener without this guard (the OTLP port, {@code otlp.port}), in the
   * API's shape (the OTLP routes make it a {@code google.rpc.Status}).
   */
  public static Route withMetExpectations(java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> unmetExpectation(request)
        ? complete(closedUnlessRead(request, Json.error(StatusCodes.EXPECTATION_FAILED, "expectation_failed",
            UNMET_EXPECTATION)))
        : inner.get());
  }

  /**
   * {@link #headerNotAscii}'s refusal, and an HTTP/1.0 chunked request's ({@link RequestHead}), for a listener
   * without this guard (the OTLP port, {@code otlp.port}): a 400 in the API's shape (the OTLP routes make it a {@code google.rpc.Status}). The connection closes: a header swallowed
   * that way may be the Content-Length, and the body read as the next request (a non-ASCII byte before
   * Content-Length made the body a second request, answered: trial t131, review t135).
   */
  public static Route withAsciiHeaders(java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> {
      if (RequestHead.refusedHttp10Chunked(request)) {
        return complete(closedUnlessRead(request, Json.error(StatusCodes.BAD_REQUEST, "invalid_request",
            RequestHead.HTTP10_CHUNKED_MESSAGE)));
      }
      String header = headerNotAscii(request);
      return header == null ? inner.get() : complete(Json.error(StatusCodes.BAD_REQUEST, "invalid_request",
          notAsciiMessage(header)).addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close")));
    });
  }

  private Route guarded(Route api) {
    return extractRequest(request -> {
      String path = request.getUri().path();
      boolean exempt = path.startsWith("/health") || path.equals("/metrics");
      String method = request.method().name();
      // The gateway's paths answer in OpenAI's error shape: its clients read error.message there, and
      // showed only "unavailable" for the API's shape. Its chat path is the one reading its own body (so
      // in ownBodies when the gateway is on); its model list, GET /v1/models, is a gateway path too
      // (trial t94: its 429 came in the API's shape). /v1/models/{x} may be the API's agent read: it is
      // OpenAI's only when the gateway answers it (an agent's models.retrieve("default"), trial t101).
      boolean openAi = ownBodies.contains(path)
          || path.equals(ApiRoutes.GATEWAY_MODEL_LIST) && ownBodies.contains(ApiRoutes.GATEWAY_CHAT)
          || path.startsWith(ApiRoutes.GATEWAY_MODEL_LIST + "/") && gatewayAnswers.test(request);
      if (stopping.getAsBoolean() && !path.startsWith("/health")) {
        String message = "the node is stopping; retry on another node";
        // Closing the connection sends a pooled client elsewhere: kept open, it went on sending here, and
        // the stop waited for those refusals as for answers in progress (review t63).
        HttpResponse refusal = openAi ? new OpenAiError(503, "service_unavailable", null, "node_stopping", message).response()
            : ApiErrors.unavailable(message);
        return complete(refusal.addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close")));
      }
      if (RequestHead.refusedHttp10Chunked(request)) {
        metrics.request("unparsable", 400, 0);
        errorLog.record("400 HTTP/1.0 request with a chunked body");
        return complete(closedUnlessRead(request, openAi
            ? new OpenAiError(400, "invalid_request_error", "Transfer-Encoding", "invalid_value",
                RequestHead.HTTP10_CHUNKED_MESSAGE).response()
            : Json.error(StatusCodes.BAD_REQUEST, "invalid_request", RequestHead.HTTP10_CHUNKED_MESSAGE)));
      }
      String notAscii = headerNotAscii(request);
      if (notAscii != null) {
        metrics.request("unparsable", 400, 0);
        errorLog.record("400 header not ASCII");
        String message = notAsciiMessage(notAscii);
        return complete((openAi ? new OpenAiError(400, "invalid_request_error", notAscii, "invalid_value", message).response()
            : Json.error(StatusCodes.BAD_REQUEST, "invalid_request", message))
            .addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close")));
      }
      if (unmetExpectation(request)) {
        metrics.request("unparsable", 417, 0);
        errorLog.record("417 expectation not met");
        return complete(closedUnlessRead(request, openAi
            ? new OpenAiError(417, "invalid_request_error", "Expect", "expectation_failed", UNMET_EXPECTATION).response()
            : Json.error(StatusCodes.EXPECTATION_FAILED, "expectation_failed", UNMET_EXPECTATION)));
      }
      Optional<HttpResponse> refused = beforeBody.apply(request);
      if (refused.isPresent()) {
        metrics.request("unauthorized", refused.get().status().intValue(), 0);
        errorLog.record(refused.get().status().intValue() + " unauthorized");
        // A body still arriving is not read: the connection closes after the answer, as it must.
        return complete(closedUnlessRead(request, refused.get()));
      }
      if (!exempt && inFlight.incrementAndGet() > maxInFlight) {
        inFlight.decrementAndGet();
        metrics.request("overloaded", 429, 0);
        errorLog.record("429 overloaded");
        String message = "the node has " + maxInFlight + " requests in flight; retry shortly";
        return complete(openAi ? new OpenAiError(429, "rate_limit_exceeded", null, "overloaded", message).response()
            : Json.error(StatusCodes.TOO_MANY_REQUESTS, "overloaded", message).addHeader(RetryAfter.create(1L)));
      }
      Slot slot = new Slot(exempt ? null : inFlight, System.nanoTime());
      AtomicBoolean unmatched = new AtomicBoolean();
      Optional<TimeoutAccess> timeout = request.getHeader(
          org.apache.pekko.http.javadsl.model.headers.TimeoutAccess.class).map(h -> h.timeoutAccess());
      timeout.ifPresent(t -> t.updateHandler(r -> {
        // pekko-http's timer outlives a connection reset before the answer was read: a request already answered
        // was logged as timed out (AnsweredRequestTimeoutTest). Only one the timeout ends is counted.
        if (slot.finish()) {
          record(slot, "timeout", 503);
          errorLog.record("503 request timeout");
        }
        String message = "the request took longer than the request timeout; nothing is guaranteed stored, retry the "
            + "request";
        return openAi ? new OpenAiError(503, "service_unavailable", null, "request_timeout", message).response()
            : ApiErrors.unavailable(message);
      }));
      Route inner = timeoutsWorded(method, path, handleExceptions(ApiErrors.exceptionHandler(), () ->
          handleRejections(ApiErrors.rejectionHandler(), () -> mapRejections(rejections -> {
            // No rejection at all: no route's path matched (404). A 405 (method rejections only) is
            // left to its route's label: the path matched, the method was wrong, and a dashboard
            // should show which route clients call wrongly, not one bucket with every typo.
            if (rejections.isEmpty()) unmatched.set(true);
            return rejections;
          }, () -> ownBodies.contains(path) ? api
              : strictBody(request, timeout, bodyLimits.get(path), api)))));
      return mapRouteResultFuture(result -> result.whenComplete((r, failure) -> {
        if (!slot.finish()) return;
        int status = r instanceof Complete c ? c.getResponse().status().intValue() : failure != null ? 500 : 404;
        String label = unmatched.get() ? UNMATCHED : status == 401 ? "unauthorized"
            : ApiRoutes.routeLabel(method, path);
        record(slot, label, status);
        if (status >= 400 && status < 500) errorLog.record(status + " " + (unmatched.get() ? UNMATCHED : label));
      }), () -> inner);
    });
  }

  /**
   * A timed-out ask is mapped to its 503 where the route catches it, without the request; here the
   * method and path say whether it was a read and which entity did not answer.
   */
  private static Route timeoutsWorded(String method, String path, Route inner) {
    boolean read = method.equals("GET") || method.equals("HEAD") || path.startsWith("/v1/exports/");
    return mapResponse(r -> r.getAttribute(ApiErrors.TIMED_OUT).isPresent() ? ApiErrors.timedOut(read, path) : r,
        () -> inner);
  }

  private void record(Slot slot, String label, int status) {
    metrics.request(label, status, (System.nanoTime() - slot.start) / 1e9);
  }

  /**
   * The API's body reading ({@link #strictBody}: its limit, its 413 after draining a moderate
   * excess, its 408) for a listener that has no guard, the OTLP port: it answered an oversized
   * body at once and closed, and the client, still sending, read a reset instead of the 413.
   */
  public static Route withStrictBody(long pathLimit, java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> strictBody(request,
        request.getHeader(org.apache.pekko.http.javadsl.model.headers.TimeoutAccess.class).map(h -> h.timeoutAccess()),
        pathLimit, inner.get()));
  }

  /**
   * Collects a streamed body within the request timeout, so the routes see a strict entity. The
   * stream is cut by completing it (takeWithin) rather than failing it, so the 408 is an ordinary
   * answer; pekko-http then closes the connection, since the rest of the body was never read.
   */
  private static Route strictBody(HttpRequest request, Optional<TimeoutAccess> timeout, Long pathLimit, Route inner) {
    if (request.entity() instanceof HttpEntity.Strict) return inner;
    long millis = timeout.map(TimeoutAccess::getTimeout).filter(d -> d.isFinite()).map(d -> d.toMillis())
        .orElse(Long.MAX_VALUE / 4);
    HttpEntity entity = request.entity();
    long start = System.nanoTime();
    long declared = entity.getContentLengthOption().orElse(-1);
    return extractParserSettings(parser -> {
      // A path's own limit only ever raises the server's (a small otlp.max-decoded-bytes bounds gzip alone).
      long limit = pathLimit != null ? Math.max(pathLimit, parser.getMaxContentLength()) : parser.getMaxContentLength();
      return declared > limit
        ? tooLarge(entity, declared, limit, millis)
        : extractMaterializer(mat -> onComplete(() -> entity.withSizeLimit(limit).getDataBytes()
        .takeWithin(java.time.Duration.ofMillis(millis))
        .runFold(ByteString.emptyByteString(), ByteString::concat, mat), body -> {
      if (body.isFailure()) {
        Throwable failure = body.failed().get();
        return complete(ApiErrors.isBrokenUpload(failure) ? ApiErrors.incompleteBody() : ApiErrors.toResponse(failure));
      }
      ByteString bytes = body.get();
      boolean cut = entity.getContentLengthOption().isPresent()
          ? bytes.size() < entity.getContentLengthOption().getAsLong()
          : System.nanoTime() - start >= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(millis);
      if (cut) {
        return complete(Json.error(StatusCodes.REQUEST_TIMEOUT, "request_timeout",
            "the request body did not arrive within " + millis + " ms (pekko.http.server.request-timeout)")
            .addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close")));
      }
      RequestEntity strict = HttpEntities.create(entity.getContentType(), bytes);
      return mapRequest(r -> r.withEntity(strict), () -> inner);
    }));
    });
  }

  /** Bodies declared up to this far past their limit are read to the end before the 413 ({@link #tooLarge}). */
  private static final long DRAIN_LIMIT = 8L * 1024 * 1024;

  /**
   * 413 for a body declared over the limit. Answering at once and closing makes the client, still
   * uploading, see a connection reset instead of the 413; so a body of moderate size is read and
   * discarded first (within the request timeout), and only larger ones are cut right away. Measured
   * from the limit: with a fixed 8 MiB, every body over OTLP's 8 MiB limit was cut, and an exporter
   * (or OtlpLargeBatchTest's client, now and then in CI) read a reset where the docs promise a 413.
   */
  private static Route tooLarge(HttpEntity entity, long declared, long limit, long millis) {
    Route answer = complete(Json.error(StatusCodes.PAYLOAD_TOO_LARGE, "payload_too_large",
        "the request body is larger than the limit of " + limit + " bytes"));
    if (declared > limit + DRAIN_LIMIT) return answer;
    return extractMaterializer(mat -> onComplete(() -> entity.withoutSizeLimit().getDataBytes()
        .takeWithin(java.time.Duration.ofMillis(millis))
        .runWith(org.apache.pekko.stream.javadsl.Sink.ignore(), mat), drained -> answer));
  }

  /** One request's slot: released, and its metric recorded, by the first completion path only. */
  private static final class Slot {
    private final AtomicInteger counter;
    private final long start;
    private final AtomicBoolean done = new AtomicBoolean();

    Slot(AtomicInteger counter, long start) {
      this.counter = counter;
      this.start = start;
    }

    boolean finish() {
      if (!done.compareAndSet(false, true)) return false;
      if (counter != null) counter.decrementAndGet();
      return true;
    }
  }

}
