package io.otl.http;

import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * Requests pekko-http cannot even parse (URI too long 414, headers too large 431, a malformed
 * request line or header) never reach a route; this gives them the same JSON error body as
 * everything else. Set as {@code pekko.http.server.parsing.error-handler} in otl-node.conf.
 *
 * <p>Always the API's shape, also for the gateway's OpenAI paths: pekko-http calls the handler with the
 * status and the parse error only, never the request (a 414's request line was not even read to its end;
 * a 431's path was parsed but is not passed on), so which door the client meant is unknown here.
 *
 * <p>pekko-http's default handler logs the parse error with its details, which can quote the
 * offending header value (a bearer token, an e-mail). Here the message is fixed per status and
 * only a rate-limited count is logged: nothing the client sent reaches the log or the answer.
 */
public final class JsonParsingErrorHandler extends ParsingErrorHandler {
  private static final String TOO_MANY_HEADERS = "HTTP message contains more than the configured limit of";
  /**
   * Answers by status, shown as {@code otl_http_requests_total{route="unparsable"}} ({@link ApiMetrics}):
   * these never reach a route, so a flood of 414/431/400s was invisible on /metrics. pekko-http creates
   * the handler from its class name, with nothing that tells one node from another, so the count is
   * per JVM (one node per JVM outside tests).
   */
  static final java.util.Map<Integer, java.util.concurrent.atomic.LongAdder> ANSWERED =
      new java.util.concurrent.ConcurrentHashMap<>();

  public JsonParsingErrorHandler() {}

  @Override
  public HttpResponse handle(StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
    // Everything here is about what the client sent, so never a 5xx: pekko-http answers 505 to a
    // request line it cannot split (spaces in the path) and 501 to an unknown method or transfer
    // coding; those become 400 like the other malformed requests.
    int code = status.intValue() >= 500 ? 400 : status.intValue();
    // Too many headers is a 400 from pekko-http, answered "malformed"; it is what 431 means (header
    // fields too large, collectively), and the docs promise 431 naming the limit. pekko-http tells
    // it apart only by its summary, a fixed text without anything the client sent.
    if (code == 400 && info.summary().startsWith(TOO_MANY_HEADERS)) code = 431;
    ApiRoutes.CLIENT_ERRORS.record(code + " unparsable request");
    ANSWERED.computeIfAbsent(code, c -> new java.util.concurrent.atomic.LongAdder()).increment();
    return Json.error(org.apache.pekko.http.javadsl.model.StatusCodes.get(code), ApiErrors.codeFor(code),
        message(code, info, settings));
  }

  private static String message(int code, ErrorInfo info, ServerSettings settings) {
    var parsing = settings.getParserSettings();
    return switch (code) {
      case 414 -> "the request URI is longer than " + parsing.getMaxUriLength() + " characters";
      case 431 -> "the request headers are too large (at most " + parsing.getMaxHeaderCount() + " headers of "
          + parsing.getMaxHeaderValueLength() + " bytes each)";
      case 413 -> "the request body is larger than the limit";
      // Matched in pekko-http's summaries, never echoed (one of them quotes the path): an HTTP/1.0
      // health check without a Host header was told its request line was malformed.
      default -> info.summary().contains("missing required `Host` header")
          || info.summary().contains("missing a `Host` header")
          ? "the request has no Host header; HTTP/1.1 requires one, and this node asks it of HTTP/1.0 requests too"
          : info.summary().contains("more than one Host header") ? "the request has more than one Host header"
          : info.summary().contains("expected HEXDIG")
          ? "the request URI has a % not followed by two hex digits (send a literal % as %25)"
          : "the request is not valid HTTP/1.1 (the request line, its method, version or a header is malformed)";
    };
  }
}
