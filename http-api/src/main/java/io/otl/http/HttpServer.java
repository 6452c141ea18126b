package io.otl.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds the routes and unbinds them gracefully on coordinated shutdown: new connections are
 * refused, in-flight requests get {@code hardDeadline} to finish. Each request knows when its
 * connection ends ({@link ClientConnection}).
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
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, String host, int port, Route route, Duration hardDeadline) {
    return start(system, host, port, route, hardDeadline, 0);
  }

  /**
   * @param maxConnectionsPerAddress connections one client address may hold open (0: no cap); see
   *     {@link ConnectionGate}
   */
  public static CompletionStage<ServerBinding> start(ActorSystem<?> system, String host, int port, Route route,
      Duration hardDeadline, int maxConnectionsPerAddress) {
    return start(system, host, port, route, hardDeadline, maxConnectionsPerAddress, null);
  }

  /**
   * @param maxConnectionsPerAddress connections one client address may hold open (0: no cap); see
   *     {@link ConnectionGate}
   * @param metrics where the cap's refusals are counted ({@code route="overloaded"}, status 429); null: not
   */
  public static CompletionStage<ServerBinding> start(ActorSystem<?> system, String host, int port, Route route,
      Duration hardDeadline, int maxConnectionsPerAddress, ApiMetrics metrics) {
    return start("HTTP API", system, host, port, route, hardDeadline, maxConnectionsPerAddress, metrics);
  }

  /**
   * @param name the listener as its start and stop lines name it: a node has a second one, the OTLP
   *     receiver's own port, which was logged as a second "HTTP API" (trial t177)
   */
  public static CompletionStage<ServerBinding> start(String name, ActorSystem<?> system, String host, int port,
      Route route, Duration hardDeadline, int maxConnectionsPerAddress, ApiMetrics metrics) {
    int maxConnections = system.settings().config().getInt("pekko.http.server.max-connections");
    ConnectionGate gate = new ConnectionGate(maxConnectionsPerAddress, maxConnections, metrics);
    AnswersInProgress answers = new AnswersInProgress();
    return Http.get(system).newServerAt(host, port)
        // The gate reads the client's address from the connection's attributes, present only with this on.
        .adaptSettings(s -> s.withRemoteAddressAttribute(true))
        .bindFlow(gate.guard(ClientConnection.flow(system, route, answers)))
        .thenApply(binding -> {
          InetSocketAddress addr = binding.localAddress();
          log.info("{} listening on {}", name, listenUrl(host, addr));
          CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceUnbind(), "http-unbind",
              () -> binding.unbind().thenApply(d -> Done.getInstance()));
          // Answers in progress first (terminate cuts a response whose body is still streaming), then
          // terminate with what is left of the deadline for the connections.
          CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "http-drain",
              () -> answers.settled(system, hardDeadline)
                  .thenCompose(left -> binding.terminate(left.isZero() ? Duration.ofMillis(1) : left))
                  .thenApply(t -> {
                    log.info("{} on port {} closed: in-flight requests finished or reached the deadline",
                        name, addr.getPort());
                    return Done.getInstance();
                  }));
          return binding;
        });
  }
}
