package io.otl.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ParserSettings;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.TLSProtocol.SslTlsInbound;
import org.apache.pekko.stream.TLSProtocol.SslTlsOutbound;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.TLSPlacebo;
import org.apache.pekko.stream.javadsl.Tcp;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds the routes and unbinds them gracefully on coordinated shutdown: new connections are
 * refused, in-flight requests get {@code hardDeadline} to finish. Each request knows when its
 * connection ends ({@link ClientConnection}).
 *
 * <p>It binds TCP itself and runs pekko-http's HTTP layer per connection, as pekko-http's own binding does,
 * to put {@link RequestFraming} below pekko-http's parser: two kinds of request head that parser mishandled
 * (an HTTP/1.0 chunked request answered 500, a byte that is not UTF-8 in the last header left unanswered until
 * idle-timeout) can only be seen in the bytes. It keeps what that binding gave: max-connections, backlog and
 * socket options, idle-timeout, the client's address on the connection, and a graceful stop.
 */
public final class HttpServer {
  private static final Logger log = LoggerFactory.getLogger(HttpServer.class);

  private HttpServer() {}

  /**
   * The URL the start-up line shows. The JVM reports a wildcard bind as IPv6's any address, which read
   * {@code http://0:0:0:0:0:0:0:0:8080}, no URL a browser takes, for the documented {@code 0.0.0.0}: a
   * wildcard shows the host as configured, and an IPv6 address is bracketed.
   */
  static String listenUrl(String configuredHost, InetSocketAddress bound) {
    boolean wildcard = bound.getAddress() != null && bound.getAddress().isAnyLocalAddress();
    String host = wildcard ? configuredHost : bound.getHostString();
    if (host.contains(":") && !host.startsWith("[")) host = "[" + host + "]";
    return "http://" + host + ":" + bound.getPort();
  }

  /** A listener without a per-address connection cap (tests' auxiliary servers). */
  public static CompletionStage<Listening> start(
      ActorSystem<?> system, String host, int port, Route route, Duration hardDeadline) {
    return start(system, host, port, route, hardDeadline, 0);
  }

  /**
   * @param maxConnectionsPerAddress connections one client address may hold open (0: no cap); see
   *     {@link ConnectionGate}
   */
  public static CompletionStage<Listening> start(ActorSystem<?> system, String host, int port, Route route,
      Duration hardDeadline, int maxConnectionsPerAddress) {
    return start(system, host, port, route, hardDeadline, maxConnectionsPerAddress, null);
  }

  /**
   * @param maxConnectionsPerAddress connections one client address may hold open (0: no cap); see
   *     {@link ConnectionGate}
   * @param metrics where the cap's refusals are counted ({@code route="overloaded"}, status 429); null: not
   */
  public static CompletionStage<Listening> start(ActorSystem<?> system, String host, int port, Route route,
      Duration hardDeadline, int maxConnectionsPerAddress, ApiMetrics metrics) {
    return start("HTTP API", system, host, port, route, hardDeadline, maxConnectionsPerAddress, metrics);
  }

  /**
   * @param name the listener as its start and stop lines name it: a node has a second one, the OTLP
   *     receiver's own port, which was logged as a second "HTTP API" (trial t177)
   */
  public static CompletionStage<Listening> start(String name, ActorSystem<?> system, String host, int port,
      Route route, Duration hardDeadline, int maxConnectionsPerAddress, ApiMetrics metrics) {
    // The gate reads the client's address from the connection's attributes, present only with this on.
    ServerSettings settings = ServerSettings.create(system.classicSystem()).withRemoteAddressAttribute(true);
    ConnectionGate gate = new ConnectionGate(maxConnectionsPerAddress, settings.getMaxConnections(), metrics);
    AnswersInProgress answers = new AnswersInProgress();
    Flow<HttpRequest, HttpResponse, NotUsed> handler = gate.guard(ClientConnection.flow(system, route, answers));
    SharedKillSwitch connections = KillSwitches.shared(name);
    LoggingAdapter pekkoLog = Logging.getLogger(system.classicSystem(), HttpServer.class);
    int maxHead = maxHead(settings);
    return Tcp.get(system).bind(host, port, settings.getBacklog(), settings.getSocketOptions(), false,
            idleTimeout(settings))
        // At most max-connections served at once; further ones wait to be accepted, as pekko-http's own binding does.
        .mapAsyncUnordered(settings.getMaxConnections(), incoming -> serve(incoming, handler, settings, pekkoLog,
            maxHead, connections, system))
        .to(Sink.ignore())
        .run(system)
        .thenApply(tcp -> {
          InetSocketAddress addr = tcp.localAddress();
          log.info("{} listening on {}", name, listenUrl(host, addr));
          Listening binding = new Listening(addr, () -> tcp.unbind().thenApply(u -> Done.getInstance()));
          CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceUnbind(), "http-unbind",
              binding::unbind);
          // Answers in progress first, then the connections closed: closing them cuts an answer whose body is
          // still streaming, so only what is still running at the deadline is cut.
          CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "http-drain",
              () -> answers.settled(system, hardDeadline).thenApply(left -> {
                connections.shutdown();
                log.info("{} on port {} closed: in-flight requests finished or reached the deadline",
                    name, addr.getPort());
                return Done.getInstance();
              }));
          return binding;
        });
  }

  /** A listener's address, and how to stop accepting connections on it. */
  public record Listening(InetSocketAddress localAddress, Supplier<CompletionStage<Done>> unbinder) {
    public CompletionStage<Done> unbind() {
      return unbinder.get();
    }
  }

  /**
   * One connection, served as pekko-http's own binding serves it (its HTTP layer over the TCP bytes, the client's
   * address on the connection's attributes), with {@link RequestFraming} between the bytes and the HTTP layer's
   * parser. Completes when the connection ends, however it ends.
   */
  private static CompletionStage<Done> serve(Tcp.IncomingConnection incoming,
      Flow<HttpRequest, HttpResponse, NotUsed> handler, ServerSettings settings, LoggingAdapter pekkoLog,
      int maxHead, SharedKillSwitch connections, ActorSystem<?> system) {
    BidiFlow<HttpResponse, ByteString, ByteString, HttpRequest, NotUsed> layers =
        Http.get(system).serverLayer(settings, Optional.of(incoming.remoteAddress()), pekkoLog)
            .atop(plainBytes())
            .atop(BidiFlow.fromFlows(Flow.of(ByteString.class), framing(maxHead)))
            .atop(BidiFlow.fromFlows(connections.<ByteString>flow(), connections.<ByteString>flow()));
    try {
      return handler.join(layers)
          .watchTermination(Keep.right())
          .addAttributes(Attributes.apply(
              new org.apache.pekko.http.impl.engine.server.HttpAttributes.RemoteAddress(incoming.remoteAddress())))
          .addAttributes(delayedCancellation(settings))
          .join(incoming.flow())
          .run(system)
          // A connection's failure (a reset, idle-timeout) ends that connection only, never the listener.
          .exceptionally(e -> Done.getInstance());
    } catch (RuntimeException e) {
      log.error("could not serve a connection: {}", e.toString());
      return CompletableFuture.completedFuture(Done.getInstance());
    }
  }

  /** The client's bytes, each request head read by {@link RequestFraming} before pekko-http's parser. */
  static Flow<ByteString, ByteString, NotUsed> framing(int maxHead) {
    return Flow.of(ByteString.class)
        .statefulMap(() -> new RequestFraming(maxHead), (framing, bytes) -> Pair.create(framing, framing.next(bytes)),
            framing -> Optional.of(framing.finish()))
        .filter(bytes -> !bytes.isEmpty());
  }

  /** The longest head the parser accepts: a request line and the most headers of the longest names and values. */
  static int maxHead(ServerSettings settings) {
    ParserSettings p = settings.getParserSettings();
    long most = p.getMaxMethodLength() + p.getMaxUriLength() + 16L
        + (long) p.getMaxHeaderCount() * (p.getMaxHeaderNameLength() + p.getMaxHeaderValueLength() + 4L) + 2;
    return (int) Math.min(most, 16L << 20);
  }

  /** Without TLS, the HTTP layer's TLS side is the bytes as they are (pekko-http's own binding does the same). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static BidiFlow<SslTlsOutbound, ByteString, ByteString, SslTlsInbound, NotUsed> plainBytes() {
    return (BidiFlow) TLSPlacebo.getInstance();
  }

  /**
   * pekko-http's stream-cancellation-delay over the whole connection, as its own binding sets it: a stage whose
   * output is cancelled waits that long, so that an error answer already on its way is still sent.
   */
  private static Attributes delayedCancellation(ServerSettings settings) {
    scala.concurrent.duration.FiniteDuration delay = settings.getStreamCancellationDelay();
    return Attributes.apply(new Attributes.CancellationStrategy(delay.toNanos() == 0
        ? Attributes.cancellationStrategyFailStage()
        : Attributes.cancellationStrategyAfterDelay(delay, Attributes.cancellationStrategyFailStage())));
  }

  /** pekko-http's idle-timeout, on the TCP connection (its own binding times idle connections out the same way). */
  private static Optional<Duration> idleTimeout(ServerSettings settings) {
    scala.concurrent.duration.Duration idle = settings.getTimeouts().idleTimeout();
    return idle.isFinite() ? Optional.of(Duration.ofNanos(idle.toNanos())) : Optional.empty();
  }
}
