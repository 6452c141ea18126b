package io.otl.http;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
 * answer as delivered. Served through {@link #flow}, every request carries its connection as an
 * attribute, and a route that needs to know watches it ({@link #watch}) until its answer is out.
 *
 * <p>Each watch is the request's own and the connection forgets it when it is closed. One future
 * per connection, on which every request hung its callbacks, kept each call's request, answer and
 * stream (~20 KB) for as long as its client kept the connection open: a load generator's pooled
 * connections served a whole run, and a node at -Xmx512m filled its heap after ~25,000 gateway calls
 * and stalled in GC (trial t51).
 */
public final class ClientConnection {
  private static final AttributeKey<Tag> TAG = AttributeKey.create("otl-client-connection", Tag.class);
  /** Watches the connections of this JVM hold open (for tests: they must not grow with the calls served). */
  private static final java.util.concurrent.atomic.AtomicInteger OPEN = new java.util.concurrent.atomic.AtomicInteger();

  private ClientConnection() {}

  /** A request's connection, and whether the request asked to close it after its answer. */
  private record Tag(Watched connection, boolean closesAfterAnswer) {}

  /**
   * One request's watch on its connection. {@link #gone} completes when its client is gone: when the
   * connection's requests end (the client closed it: pekko-http still holds the connection open for
   * the answer in progress, and only finds it closed when writing), unless the request itself asked
   * to close after its answer ({@code Connection: close}, HTTP/1.0): then the requests end at once
   * with the client still waiting, and only the connection's end counts. {@link #close} once nothing
   * waits for it any more (the answer is out): the connection forgets it, and its callbacks with it.
   */
  public static final class Watch implements AutoCloseable {
    private final CompletableFuture<Done> gone = new CompletableFuture<>();
    private final Watched connection;
    private final boolean closesAfterAnswer;

    private Watch(Watched connection, boolean closesAfterAnswer) {
      this.connection = connection;
      this.closesAfterAnswer = closesAfterAnswer;
    }

    public CompletionStage<Done> gone() {
      return gone;
    }

    @Override
    public void close() {
      if (connection != null) connection.forget(this);
    }
  }

  /** A connection's open watches; completed when its requests or the connection end. */
  private static final class Watched {
    private final Set<Watch> open = new HashSet<>();
    private boolean requestsEnded;
    private boolean ended;

    Watch watch(boolean closesAfterAnswer) {
      Watch w = new Watch(this, closesAfterAnswer);
      boolean goneAlready;
      synchronized (this) {
        goneAlready = ended || requestsEnded && !closesAfterAnswer;
        if (!goneAlready && open.add(w)) OPEN.incrementAndGet();
      }
      if (goneAlready) w.gone.complete(Done.getInstance());
      return w;
    }

    synchronized void forget(Watch w) {
      if (open.remove(w)) OPEN.decrementAndGet();
    }

    void requestsEnded() {
      List<Watch> now = new ArrayList<>();
      synchronized (this) {
        requestsEnded = true;
        for (Watch w : open) if (!w.closesAfterAnswer) now.add(w);
        now.forEach(open::remove);
        OPEN.addAndGet(-now.size());
      }
      now.forEach(w -> w.gone.complete(Done.getInstance()));
    }

    void ended() {
      List<Watch> now;
      synchronized (this) {
        ended = true;
        now = new ArrayList<>(open);
        open.clear();
        OPEN.addAndGet(-now.size());
      }
      now.forEach(w -> w.gone.complete(Done.getInstance()));
    }
  }

  /**
   * The route as a connection's handler flow, materialized once per connection: each request is tagged
   * with it, and counted in {@code answers} until its answer is out.
   */
  static Flow<HttpRequest, HttpResponse, NotUsed> flow(ClassicActorSystemProvider system, Route route,
      AnswersInProgress answers) {
    Flow<HttpRequest, HttpResponse, NotUsed> handler = route.flow(system);
    return Flow.fromMaterializer((mat, attributes) -> {
      Watched connection = new Watched();
      AnswersInProgress.Connection answering = answers.connection();
      return Flow.<HttpRequest>create()
          .map(request -> {
            answering.begun();
            return request.addAttribute(TAG, new Tag(connection, closesAfterAnswer(request)));
          })
          .watchTermination((notUsed, done) -> {
            done.whenComplete((d, e) -> connection.requestsEnded());
            return notUsed;
          })
          .via(handler)
          .map(answering::untilSent)
          .watchTermination((notUsed, done) -> {
            done.whenComplete((d, e) -> {
              connection.ended();
              answering.ended();
            });
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

  /**
   * A watch on the request's connection, to be closed once the answer is out; for a request not served
   * by {@link #flow}, one that never completes.
   */
  public static Watch watch(HttpRequest request) {
    return request.getAttribute(TAG).map(t -> t.connection().watch(t.closesAfterAnswer()))
        .orElseGet(() -> new Watch(null, false));
  }

  /** Watches all connections of this JVM hold open now; for tests. */
  public static int openWatches() {
    return OPEN.get();
  }
}
