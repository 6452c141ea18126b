package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.training.TrainingBackendException;
import io.otl.core.training.TrainingBackendException.Kind;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.http.javadsl.settings.ConnectionPoolSettings;
import org.apache.pekko.stream.Materializer;

/**
 * The few things both Trinity clients need from HTTP: JSON in and out, a bound on each request,
 * and failures that say which call failed and why — as {@link TrainingBackendException}s the
 * domain understands.
 */
final class JsonHttpClient {

  /** How much of an error body goes into an exception message (Ray sends whole tracebacks). */
  static final int BODY_EXCERPT_CHARS = 500;

  /** A response that arrived, whatever its status. */
  record Reply(int status, String body) {
    boolean isSuccess() {
      return status >= 200 && status < 300;
    }
  }

  private final ActorSystem<?> system;
  private final Materializer materializer;
  private final ConnectionPoolSettings poolSettings;
  private final TrinityEndpoint endpoint;
  private final ObjectMapper mapper;
  private final String apiName;

  JsonHttpClient(ActorSystem<?> system, TrinityEndpoint endpoint, ObjectMapper mapper, String apiName) {
    this.system = system;
    this.materializer = Materializer.matFromSystem(system);
    // A server that accepts and never answers would otherwise hold a pool connection for the
    // default idle timeout (60 s) after our caller has given up; close it at our own bound instead.
    // One pool retry covers a keep-alive connection the server closed; retrying a dead server with
    // the pool's growing backoff (default 5 retries, seconds) is left to our callers' own backoff.
    this.poolSettings =
        ConnectionPoolSettings.create(system.classicSystem())
            .withMaxRetries(1)
            .withConnectionSettings(
                ClientConnectionSettings.create(system.classicSystem())
                    .withIdleTimeout(endpoint.requestTimeout().plusMillis(100)));
    this.endpoint = endpoint;
    this.mapper = mapper;
    this.apiName = apiName;
  }

  TrinityEndpoint endpoint() {
    return endpoint;
  }

  ObjectMapper mapper() {
    return mapper;
  }

  CompletionStage<Reply> get(String path) {
    return send(HttpRequest.GET(endpoint.url(path)), "GET", path);
  }

  CompletionStage<Reply> post(String path, Object jsonBody) {
    HttpRequest request = HttpRequest.POST(endpoint.url(path));
    if (jsonBody != null) {
      try {
        request = request.withEntity(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(jsonBody));
      } catch (Exception e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    return send(request, "POST", path);
  }

  /** Like {@link #get}/{@link #post} but any non-2xx reply becomes a failed stage. */
  CompletionStage<JsonNode> expectJson(CompletionStage<Reply> call, String method, String path) {
    return call.thenApply(
        reply -> {
          if (!reply.isSuccess()) {
            throw statusError(method, path, reply);
          }
          return parse(method, path, reply);
        });
  }

  JsonNode parse(String method, String path, Reply reply) {
    try {
      return reply.body().isBlank() ? mapper.nullNode() : mapper.readTree(reply.body());
    } catch (Exception e) {
      throw new TrainingBackendException(
          Kind.UNAVAILABLE,
          reply.status(),
          apiName + " " + method + " " + path + " returned a body that is not JSON: " + excerpt(reply.body()),
          e);
    }
  }

  TrainingBackendException statusError(String method, String path, Reply reply) {
    Kind kind =
        reply.status() == 404
            ? Kind.NOT_FOUND
            : reply.status() >= 500 || reply.status() == 408 || reply.status() == 429
                ? Kind.UNAVAILABLE
                : Kind.REJECTED;
    return new TrainingBackendException(
        kind,
        reply.status(),
        apiName + " " + method + " " + path + " returned " + reply.status() + ": " + excerpt(reply.body()),
        null);
  }

  private CompletionStage<Reply> send(HttpRequest request, String method, String path) {
    HttpRequest withAuth =
        endpoint.bearerToken().map(t -> request.addHeader(Authorization.oauth2(t))).orElse(request);
    long timeoutMillis = endpoint.requestTimeout().toMillis();
    CompletableFuture<Reply> result = new CompletableFuture<>();
    Http http = Http.get(system);
    http.singleRequest(withAuth, http.defaultClientHttpsContext(), poolSettings, system.classicSystem().log())
        .thenCompose(
            response ->
                response
                    .entity()
                    .toStrict(timeoutMillis, materializer)
                    .thenApply(
                        strict -> new Reply(response.status().intValue(), strict.getData().utf8String())))
        .whenComplete(
            (reply, error) -> {
              if (error == null) {
                result.complete(reply);
              } else {
                result.completeExceptionally(transportError(method, path, error));
              }
            });
    // The pool keeps its own connection timeouts; this bounds what our caller waits for.
    return result
        .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
        .exceptionally(
            e -> {
              Throwable cause = unwrap(e);
              if (cause instanceof TimeoutException) {
                throw new TrainingBackendException(
                    Kind.UNAVAILABLE,
                    0,
                    apiName + " " + method + " " + path + " at " + endpoint.shown()
                        + " timed out after " + endpoint.requestTimeout().toMillis() + " ms",
                    cause);
              }
              throw cause instanceof RuntimeException re ? re : new CompletionException(cause);
            });
  }

  private TrainingBackendException transportError(String method, String path, Throwable error) {
    Throwable cause = unwrap(error);
    String what = apiName + " " + method + " " + path + " at " + endpoint.shown();
    if (isConnectionRefused(cause)) {
      return new TrainingBackendException(
          Kind.UNAVAILABLE,
          0,
          what + " failed: connection refused (is the service running and reachable at "
              + endpoint.shown() + "?)",
          cause);
    }
    return new TrainingBackendException(
        Kind.UNAVAILABLE, 0, what + " failed: " + cause.getClass().getSimpleName() + ": " + cause.getMessage(), cause);
  }

  private static boolean isConnectionRefused(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConnectException) {
        return true;
      }
      // pekko-stream reports a failed connect as StreamTcpException with the reason in its text.
      if (c.getMessage() != null && c.getMessage().contains("Connection refused")) {
        return true;
      }
    }
    return false;
  }

  static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while (c instanceof CompletionException && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  static String excerpt(String body) {
    if (body == null || body.isBlank()) {
      return "<empty body>";
    }
    String text = body.strip();
    if (text.length() <= BODY_EXCERPT_CHARS) {
      return text;
    }
    // Keep both ends: Ray answers errors with a Python traceback whose last line is the reason.
    int head = BODY_EXCERPT_CHARS / 3;
    int tail = BODY_EXCERPT_CHARS - head;
    return text.substring(0, head) + " … " + text.substring(text.length() - tail)
        + " (" + text.length() + " chars)";
  }
}
