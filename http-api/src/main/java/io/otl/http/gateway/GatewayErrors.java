package io.otl.http.gateway;

import io.otl.core.api.ModelRouter;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.pattern.AskTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A failed gateway call as OpenAI's error object: the client's 4xx, the node's 503, never a stack trace. */
final class GatewayErrors {
  // The gateway's one logger name, which operators filter on.
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);

  private GatewayErrors() {}

  static HttpResponse toResponse(Throwable t) {
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

  static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
