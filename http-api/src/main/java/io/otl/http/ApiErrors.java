package io.otl.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Allow;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.pattern.AskTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps every failure to the JSON error body of design §7.1. Client mistakes are 4xx; a journal
 * that does not answer in time is 503 with Retry-After; anything else is a bug, logged, and 500.
 */
public final class ApiErrors {
  private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

  private ApiErrors() {}

  public static HttpResponse toResponse(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof BadRequest b) return Json.error(StatusCodes.get(b.status()), b.code(), b.getMessage());
    if (e instanceof EntityStreamSizeException s) {
      return Json.error(StatusCodes.PAYLOAD_TOO_LARGE, "payload_too_large",
          "the request body is larger than the limit of " + s.limit() + " bytes");
    }
    if (e instanceof org.apache.pekko.http.scaladsl.model.EntityStreamException f) {
      if (chunkTooLarge(f)) {
        return Json.error(StatusCodes.PAYLOAD_TOO_LARGE, "payload_too_large", CHUNK_TOO_LARGE);
      }
      return malformedChunks(f) ? Json.error(StatusCodes.BAD_REQUEST, "invalid_request", MALFORMED_CHUNKS)
          : incompleteBody();
    }
    if (e instanceof AskTimeoutException || e instanceof TimeoutException) {
      // Worded for a write here; RequestGuard, which knows the method and path, words it for what was asked.
      return unavailable(timeoutMessage(false, "")).addAttribute(TIMED_OUT, Boolean.TRUE);
    }
    java.sql.SQLException sql = databaseCause(e);
    if (sql != null) {
      // Design §7.1: 503 when the journal is unreachable. The routes that read the journal directly
      // (training, jobs, policy, agents, logs, route: the journal directory, the session owners) failed
      // with a JDBC error under their own exception and answered 500 with an ERROR per request (trial t69).
      // One WARN a minute names the SQLState: a revoked grant or a dropped table is no outage (review t70).
      DatabaseFailures.seen(sql);
      return unavailable("the journal database failed the request (SQLState " + sql.getSQLState()
          + "): unreachable, overloaded or misconfigured; retry the request");
    }
    log.error("unexpected failure while serving a request", e);
    return Json.error(StatusCodes.INTERNAL_SERVER_ERROR, "internal_error", "unexpected failure: " + e.getClass().getSimpleName());
  }

  /**
   * A JDBC failure in the chain, or null: the journal's database, not the node, failed the request. The
   * first that has an SQLState, else the first: a wrapper without one named no state ("SQLState null").
   */
  public static java.sql.SQLException databaseCause(Throwable e) {
    java.sql.SQLException first = null;
    Throwable c = e;
    for (int depth = 0; c != null && depth < 32; depth++, c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof java.sql.SQLException sql) {
        if (sql.getSQLState() != null) return sql;
        if (first == null) first = sql;
      }
    }
    return first;
  }

  /**
   * A request body that stopped arriving because the client's connection ended: closed (FIN), which
   * pekko-http reports as an {@code EntityStreamException}, or reset (RST: a client killed mid-upload,
   * a proxy or a NAT dropping it), which it reports as the TCP stage's {@code StreamTcpException}. The
   * reset was a 500 with an ERROR line per request, so anyone could fill the log and the 5xx series
   * by resetting uploads. Only asked of failures of reading the request's own body.
   */
  public static boolean isBrokenUpload(Throwable t) {
    Throwable e = unwrap(t);
    return e instanceof org.apache.pekko.http.scaladsl.model.EntityStreamException f
        && !(e instanceof EntityStreamSizeException) && !malformedChunks(f) && !chunkTooLarge(f)
        || e instanceof org.apache.pekko.stream.StreamTcpException;
  }

  /** The answer to a chunked body framed wrongly (the connection is still open: the client reads it). */
  public static final String MALFORMED_CHUNKS = "the request body's chunked transfer coding is malformed (a chunk size"
      + " that is not hexadecimal, a chunk not ended by CRLF or a malformed trailer); nothing was stored";
  /** The answer to a chunk larger than pekko-http takes (the gateway's and OTLP's body limits, ChunkSizeLimit). */
  public static final String CHUNK_TOO_LARGE = "a chunk of the request body is larger than this node takes in one"
      + " piece (pekko.http.server.parsing.max-chunk-size, the largest of the gateway's and OTLP's body limits);"
      + " send the body in smaller chunks or with a Content-Length; nothing was stored";

  /**
   * Whether the client framed its chunked body wrongly, rather than its connection ending mid-body:
   * pekko-http fails the body with an {@code EntityStreamException} for both, and every such failure was
   * answered "the connection closed before the body was complete" (trial t156: a chunk size {@code zz}, a
   * chunk not ended by CRLF, while the client waited on the open connection). Only the truncation, whose
   * summary pekko-http 1.3.0 words "Entity stream truncation", is a connection that ended.
   */
  public static boolean malformedChunks(Throwable t) {
    Throwable e = unwrap(t);
    if (!(e instanceof org.apache.pekko.http.scaladsl.model.EntityStreamException f)
        || e instanceof EntityStreamSizeException || chunkTooLarge(f)) {
      return false;
    }
    String summary = f.info().summary();
    return summary != null && !summary.startsWith("Entity stream truncation");
  }

  /**
   * pekko-http's refusal of a chunk above {@code max-chunk-size} ("HTTP chunk of N bytes exceeds the
   * configured limit", "HTTP chunk size exceeds Integer.MAX_VALUE"); the node raises that setting to the
   * gateway's and OTLP's body limits (ChunkSizeLimit), so such a chunk is too large for them: a 413.
   */
  public static boolean chunkTooLarge(Throwable t) {
    Throwable e = unwrap(t);
    if (!(e instanceof org.apache.pekko.http.scaladsl.model.EntityStreamException f)) return false;
    String summary = f.info().summary();
    return summary != null && summary.startsWith("HTTP chunk") && summary.contains("exceeds")
        && !summary.contains("extension");
  }

  /** The client closed the connection mid-upload: nobody reads this answer, nothing was stored. */
  static HttpResponse incompleteBody() {
    return Json.error(StatusCodes.BAD_REQUEST, "incomplete_body", "the connection closed before the body was complete");
  }

  /** Marks the 503 of an ask or query that timed out (never rendered on the wire). */
  static final AttributeKey<Boolean> TIMED_OUT = AttributeKey.create("otl-timed-out", Boolean.class);

  /**
   * The message of a timed-out request. An ask times out when the entity does not answer: in a
   * fail-over that is because its node was killed and its shards are not yet placed elsewhere,
   * not because the journal is slow, which the message said whatever happened (trial t6: a GET of
   * a route answered "the journal did not answer in time; nothing is guaranteed stored"). A read
   * stores nothing, so only a write's message speaks of storage.
   */
  static String timeoutMessage(boolean read, String path) {
    String who;
    if (path.startsWith("/v1/sessions/") || path.startsWith("/v1/feedback/") || path.startsWith("/feedback/")
        || path.equals("/v1/traces")) {
      who = "the session";
    } else if (path.startsWith("/v1/models/")) {
      who = "the agent's model versions";
    } else if (path.startsWith("/v1/training/") || path.startsWith("/v1/jobs")) {
      who = "the agent's training coordinator";
    } else if (path.startsWith("/v1/")) {
      who = null;
    } else {
      who = "the entity";
    }
    String what = who == null ? "the journal did not answer in time"
        : who + " did not answer in time (the node holding it may be down, or moving it to another node"
            + (read ? ")" : ", or the journal slow)");
    return what + (read ? "; retry the request" : "; nothing is guaranteed stored, retry the request");
  }

  static HttpResponse timedOut(boolean read, String path) {
    return unavailable(timeoutMessage(read, path));
  }

  public static HttpResponse unavailable(String message) {
    return Json.error(StatusCodes.SERVICE_UNAVAILABLE, "unavailable", message).addHeader(RetryAfter.create(2L));
  }

  /**
   * The handlers are immutable values: built once, not per request (RequestGuard wraps every request
   * in both, and building them was ~0.5 % of the node's CPU in W2, issue #18).
   */
  private static final ExceptionHandler EXCEPTION_HANDLER = ExceptionHandler.newBuilder()
      .match(Throwable.class, e -> org.apache.pekko.http.javadsl.server.Directives.complete(toResponse(e)))
      .build();
  private static final String API_ROUTES = "GET /v1/openapi.json lists them; docs/api.md";
  private static final RejectionHandler REJECTION_HANDLER = buildRejectionHandler(API_ROUTES);
  /** The separate OTLP port (otlp.port) serves no OpenAPI document: its 404 pointed at one. */
  private static final RejectionHandler OTLP_PORT_REJECTION_HANDLER =
      buildRejectionHandler("this port, otlp.port, takes only POST /v1/traces; docs/connect-opentelemetry.md");

  public static ExceptionHandler exceptionHandler() {
    return EXCEPTION_HANDLER;
  }

  /** Pekko's own rejections (404, 405, 413, 415 …) with our JSON body instead of plain text. */
  public static RejectionHandler rejectionHandler() {
    return REJECTION_HANDLER;
  }

  /** {@link #rejectionHandler()} for the OTLP port, whose only route is {@code POST /v1/traces}. */
  public static RejectionHandler otlpPortRejectionHandler() {
    return OTLP_PORT_REJECTION_HANDLER;
  }

  private static RejectionHandler buildRejectionHandler(String routesHint) {
    return RejectionHandler.defaultHandler().mapRejectionResponse(response -> {
      if (response.entity().getContentType().mediaType().isApplication()
          && response.entity().getContentType().mediaType().subType().equals("json")) {
        return response;
      }
      String text = response.entity() instanceof org.apache.pekko.http.javadsl.model.HttpEntity.Strict strict
          ? strict.getData().decodeString(StandardCharsets.UTF_8) : response.status().reason();
      Iterable<HttpHeader> headers = withHeadBesideGet(response.getHeaders());
      return Json.error(response.status(), codeFor(response.status().intValue()),
              withRouteHint(notEchoingTheBody(allowedIn(text, headers)), routesHint))
          .withHeaders(headers);
    });
  }

  private static final String NO_ROUTE = "The requested resource could not be found.";

  /**
   * pekko's 404 for a path no route takes said only "The requested resource could not be found.", so
   * a typo ({@code /v1/session/s-1}) read like an unknown session (trial t18). An unknown entity has
   * its own 404 naming it; this one says no route matched and where the routes are listed. The path
   * is not repeated: it may hold an id that is personal data.
   */
  static String withRouteHint(String text) {
    return withRouteHint(text, API_ROUTES);
  }

  private static String withRouteHint(String text, String routesHint) {
    if (!text.equals(NO_ROUTE)) return text;
    return "The requested resource could not be found: no route of this node takes this method and path"
        + " (" + routesHint + ")";
  }

  private static final String MALFORMED = "The request content was malformed:";
  private static final java.util.regex.Pattern WHERE = java.util.regex.Pattern.compile("\\(line \\d+, column \\d+\\)");

  /**
   * pekko's message for a form body it cannot parse (rate and thumbs read forms) ends with the whole
   * body and a caret under the bad character: {@code … (line 1, column 60): sessionId=s1&note=alice@…}.
   * Error messages never echo what could be personal data, so it is cut after the position, which is
   * enough to find the mistake, and kept to its first line.
   */
  static String notEchoingTheBody(String text) {
    if (!text.startsWith(MALFORMED)) return text;
    String cause = text.substring(MALFORMED.length()).strip();
    var where = WHERE.matcher(cause);
    if (where.find()) cause = cause.substring(0, where.end());
    int line = cause.indexOf('\n');
    if (line >= 0) cause = cause.substring(0, line);
    if (cause.length() > 200) cause = cause.substring(0, 200) + "…";
    if (cause.contains("Invalid input '\uFFFD'")) {
      // pekko decodes the form as UTF-8 and names a byte it cannot decode by U+FFFD, which a client
      // reading the answer as Latin-1 (a console, a proxy's log) saw as 'ï¿½' (review t164).
      var position = WHERE.matcher(cause);
      String at = position.find() ? " " + position.group() : "";
      return "the form body is not valid UTF-8" + at + ": percent-encode bytes outside ASCII (%FF), as "
          + "application/x-www-form-urlencoded requires; nothing was stored";
    }
    return "the form body is malformed: " + cause;
  }

  /**
   * The server answers HEAD on every GET route (pekko-http's transparent HEAD), so a 405's
   * {@code Allow} names HEAD wherever it names GET, as the probe routes' explicit HEAD does.
   */
  private static Iterable<HttpHeader> withHeadBesideGet(Iterable<HttpHeader> headers) {
    List<HttpHeader> out = new ArrayList<>();
    for (HttpHeader h : headers) {
      if (h instanceof Allow allow) {
        List<HttpMethod> methods = new ArrayList<>();
        allow.getMethods().forEach(methods::add);
        boolean get = methods.stream().anyMatch(m -> m.equals(HttpMethods.GET));
        if (get && methods.stream().noneMatch(m -> m.equals(HttpMethods.HEAD))) methods.add(HttpMethods.HEAD);
        out.add(Allow.create(methods.toArray(HttpMethod[]::new)));
      } else {
        out.add(h);
      }
    }
    return out;
  }

  /** A 405's message lists the methods of its {@code Allow} header (HEAD included), not pekko's own list. */
  private static String allowedIn(String text, Iterable<HttpHeader> headers) {
    for (HttpHeader h : headers) {
      if (h instanceof Allow allow && text.startsWith("HTTP method not allowed")) {
        List<String> names = new ArrayList<>();
        allow.getMethods().forEach(m -> names.add(m.name()));
        return "HTTP method not allowed, supported methods: " + String.join(", ", names);
      }
    }
    return text;
  }

  /** The error code for a status: the one mapping the API's and the gateway's rejections share. */
  public static String codeFor(int status) {
    return switch (status) {
      case 400 -> "invalid_request";
      case 401 -> "unauthorized";
      case 404 -> "not_found";
      case 405 -> "method_not_allowed";
      case 408 -> "request_timeout";
      case 409 -> "conflict";
      case 413 -> "payload_too_large";
      case 414 -> "uri_too_long";
      case 415 -> "unsupported_media_type";
      case 429 -> "overloaded";
      case 431 -> "headers_too_large";
      case 503 -> "unavailable";
      default -> status < 500 ? "invalid_request" : "internal_error";
    };
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  static HttpResponse ok(Object body) {
    return Json.ok(body);
  }
}
