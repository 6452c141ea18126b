package io.otl.http;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpProtocols;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.javadsl.Flow;

/**
 * When a request's connection ends. pekko-http tells a route nothing when its client goes away
 * while the answer is being prepared, and drops the late answer unsent: the gateway recorded such an
 * answer as delivered. Served through {@link #flow}, every request carries its connection's end as
 * an attribute ({@link #closedOf}).
 */
public final class ClientConnection {
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static final AttributeKey<CompletionStage<Done>> CLOSED =
      (AttributeKey) AttributeKey.create("otl-client-connection-closed", CompletionStage.class);
  private static final CompletionStage<Done> NEVER = new CompletableFuture<>();

  private ClientConnection() {}

  /**
   * The route as a connection's handler flow, materialized once per connection: each request is
   * tagged with a future that completes when its client is gone. That is when the connection's
   * requests end (the client closed it: pekko-http still holds the connection open for the answer
   * in progress, and only finds it closed when writing), unless the request itself asked to close
   * after its answer ({@code Connection: close}, HTTP/1.0): then the requests end at once with the
   * client still waiting, and only the connection's end counts.
   */
  public static Flow<HttpRequest, HttpResponse, NotUsed> flow(ClassicActorSystemProvider system, Route route) {
    Flow<HttpRequest, HttpResponse, NotUsed> handler = route.flow(system);
    return Flow.fromMaterializer((mat, attributes) -> {
      CompletableFuture<Done> requestsEnded = new CompletableFuture<>();
      CompletableFuture<Done> ended = new CompletableFuture<>();
      CompletableFuture<Done> gone = requestsEnded.applyToEither(ended, d -> d);
      return Flow.<HttpRequest>create()
          .map(request -> request.addAttribute(CLOSED, closesAfterAnswer(request) ? ended : gone))
          .watchTermination((notUsed, done) -> {
            done.whenComplete((d, e) -> requestsEnded.complete(Done.getInstance()));
            return notUsed;
          })
          .via(handler)
          .watchTermination((notUsed, done) -> {
            done.whenComplete((d, e) -> ended.complete(Done.getInstance()));
            return notUsed;
          });
    }).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  private static boolean closesAfterAnswer(HttpRequest request) {
    boolean close = request.getHeader(Connection.class).map(c -> {
      for (String token : c.getTokens()) {
        if (token.equalsIgnoreCase("close")) return true;
      }
      return false;
    }).orElse(false);
    return close || request.protocol().equals(HttpProtocols.HTTP_1_0);
  }

  /** Completes when the request's connection has ended; never, for a request not served by {@link #flow}. */
  public static CompletionStage<Done> closedOf(HttpRequest request) {
    return request.getAttribute(CLOSED).orElse(NEVER);
  }
}
