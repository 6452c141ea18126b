package io.otl.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpProtocols;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;

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
    private final CompletableFuture<Done> dropped = new CompletableFuture<>();
    private final Watched connection;
    private final boolean closesAfterAnswer;

    private Watch(Watched connection, boolean closesAfterAnswer) {
      this.connection = connection;
      this.closesAfterAnswer = closesAfterAnswer;
    }

    public CompletionStage<Done> gone() {
      return gone;
    }

    /**
     * Completes when pekko-http will not send an answer body it has not started by then: at once when the
     * connection is cut before its answers were handed over (a reset, a failed write, the server stopping:
     * pekko-http drops a pending response without running its body), or {@link #UNSTARTED_GRACE} after
     * the connection ended normally (its answers handed over, which pekko-http runs at once; this covers a
     * reset in between). Not at a client's FIN: a client that half-closes after its request still reads
     * its answer, and {@link #gone} cannot tell it from one that closed both ways.
     */
    public CompletionStage<Done> dropped() {
      return dropped;
    }

    @Override
    public void close() {
      if (connection != null) connection.forget(this);
    }
  }

  /** How long after a connection's normal end an answer body pekko-http has not started is taken as dropped. */
  static final Duration UNSTARTED_GRACE = Duration.ofSeconds(10);
  private static final java.util.concurrent.Executor AFTER_GRACE =
      CompletableFuture.delayedExecutor(UNSTARTED_GRACE.toMillis(), TimeUnit.MILLISECONDS);

  /** A connection's open watches; completed when its requests or the connection end. */
  private static final class Watched {
    private final Set<Watch> open = new HashSet<>();
    /** Watches gone at the client's FIN whose answers may still be sent; until closed or the connection ends. */
    private final Set<Watch> halfClosed = new HashSet<>();
    private boolean requestsEnded;
    private boolean ended;

    Watch watch(boolean closesAfterAnswer) {
      Watch w = new Watch(this, closesAfterAnswer);
      boolean goneAlready;
      boolean endedAlready;
      synchronized (this) {
        endedAlready = ended;
        goneAlready = ended || requestsEnded && !closesAfterAnswer;
        if (!goneAlready && open.add(w)) OPEN.incrementAndGet();
      }
      if (goneAlready) w.gone.complete(Done.getInstance());
      if (endedAlready) w.dropped.complete(Done.getInstance());
      return w;
    }

    synchronized void forget(Watch w) {
      if (open.remove(w)) OPEN.decrementAndGet();
      halfClosed.remove(w);
    }

    void requestsEnded() {
      List<Watch> now = new ArrayList<>();
      synchronized (this) {
        requestsEnded = true;
        for (Watch w : open) if (!w.closesAfterAnswer) now.add(w);
        now.forEach(open::remove);
        halfClosed.addAll(now);
        OPEN.addAndGet(-now.size());
      }
      now.forEach(w -> w.gone.complete(Done.getInstance()));
    }

    /** {@code cut}: the connection was torn down before its answers were handed over. */
    void ended(boolean cut) {
      List<Watch> now;
      List<Watch> unsent = new ArrayList<>();
      synchronized (this) {
        ended = true;
        now = new ArrayList<>(open);
        open.clear();
        OPEN.addAndGet(-now.size());
        // A watch whose requests ended earlier (gone at the FIN) may still wait for its answer's body.
        unsent.addAll(now);
        unsent.addAll(halfClosed);
        halfClosed.clear();
      }
      now.forEach(w -> w.gone.complete(Done.getInstance()));
      Runnable drop = () -> unsent.forEach(w -> w.dropped.complete(Done.getInstance()));
      if (cut) drop.run();
      else if (!unsent.isEmpty()) AFTER_GRACE.execute(drop);
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
          .via(new Ends<>(cut -> {
            connection.ended(cut);
            answering.ended();
          }));
    }).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  /**
   * Tells how a connection's answers ended: handed over in full (the handler completed after the client's
   * last request: pekko-http sends them), or cut (pekko-http cancelled them, or they failed: the connection
   * was torn down, and a pending answer is dropped unsent). watchTermination completes alike for both.
   */
  private static final class Ends<T> extends GraphStage<FlowShape<T, T>> {
    private final Inlet<T> in = Inlet.create("ClientConnection.Ends.in");
    private final Outlet<T> out = Outlet.create("ClientConnection.Ends.out");
    private final FlowShape<T, T> shape = FlowShape.of(in, out);
    private final Consumer<Boolean> ended;

    Ends(Consumer<Boolean> ended) {
      this.ended = ended;
    }

    @Override
    public FlowShape<T, T> shape() {
      return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes attributes) {
      AtomicBoolean told = new AtomicBoolean();
      Consumer<Boolean> tell = cut -> {
        if (told.compareAndSet(false, true)) ended.accept(cut);
      };
      return new GraphStageLogic(shape) {
        {
          setHandler(in, new AbstractInHandler() {
            @Override
            public void onPush() {
              push(out, grab(in));
            }

            @Override
            public void onUpstreamFinish() {
              tell.accept(false);
              completeStage();
            }

            @Override
            public void onUpstreamFailure(Throwable e) {
              tell.accept(true);
              failStage(e);
            }
          });
          setHandler(out, new AbstractOutHandler() {
            @Override
            public void onPull() {
              pull(in);
            }

            @Override
            public void onDownstreamFinish(Throwable cause) throws Exception {
              tell.accept(true);
              super.onDownstreamFinish(cause);
            }
          });
        }

        @Override
        public void postStop() {
          tell.accept(true); // torn down otherwise (the materializer stopped)
        }
      };
    }
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
