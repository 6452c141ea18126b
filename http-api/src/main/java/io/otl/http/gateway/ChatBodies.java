package io.otl.http.gateway;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;

/** A chat request's body: read whole within the gateway's limits, or refused with OpenAI's 4xx. */
final class ChatBodies {
  private final GatewaySettings settings;
  private final Materializer materializer;

  ChatBodies(GatewaySettings settings, Materializer materializer) {
    this.settings = settings;
    this.materializer = materializer;
  }

  /** Bodies declared up to this size (or twice the limit, if more) are read to the end before the 413. */
  private static final long DRAIN_LIMIT = 8L * 1024 * 1024;

  /**
   * 413 for a body declared over the limit. Answered at once, the connection closes under a client
   * still uploading, which then reads a reset instead of OpenAI's error (seen under load); so a body
   * of moderate size is read and discarded first, within the gateway's timeout, as the API does.
   */
  CompletionStage<HttpResponse> refuseOversized(HttpRequest http, long declared) {
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
  CompletionStage<HttpEntity.Strict> readBody(HttpRequest http) {
    return http.entity().withSizeLimit(settings.maxBodyBytes())
        .toStrict(settings.timeout().toMillis(), materializer)
        .handle((strict, err) -> {
          if (err == null) return CompletableFuture.completedFuture(strict);
          Throwable e = GatewayErrors.unwrap(err);
          if (e instanceof TimeoutException) {
            throw new OpenAiError(408, "invalid_request_error", null, "request_timeout",
                "the request body did not arrive within " + settings.timeout().toMillis() + " ms (gateway.timeout)");
          }
          if (io.otl.http.ApiErrors.chunkTooLarge(e)) throw tooLarge();
          if (io.otl.http.ApiErrors.malformedChunks(e)) {
            throw new OpenAiError(400, "invalid_request_error", null, "invalid_value", io.otl.http.ApiErrors.MALFORMED_CHUNKS);
          }
          if (io.otl.http.ApiErrors.isBrokenUpload(e)) {
            throw new OpenAiError(400, "invalid_request_error", null, "incomplete_body",
                "the connection closed before the request body was complete");
          }
          return CompletableFuture.<HttpEntity.Strict>failedFuture(e);
        })
        .thenCompose(stage -> stage);
  }

  private OpenAiError tooLarge() {
    return new OpenAiError(413, "invalid_request_error", null, "request_too_large",
        "the request body is larger than the gateway's limit of " + settings.maxBodyBytes()
            + " bytes (gateway.max-body-bytes)");
  }
}
