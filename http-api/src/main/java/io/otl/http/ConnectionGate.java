package io.otl.http;

import io.otl.http.gateway.OpenAiError;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.impl.engine.server.HttpAttributes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.stream.javadsl.Flow;

/**
 * Caps the connections one client address holds open on a listener ({@code
 * http.max-connections-per-address}). pekko-http accepts at most {@code max-connections} (1024)
 * connections and leaves further ones waiting unanswered; without a per-address cap, one client
 * holding 1024 idle keep-alive connections (or trickling their headers) locked every other client
 * out. Once the listener has half of max-connections open, a connection from an address that already
 * holds the cap is not handed to the routes: its first request is answered 429 {@code
 * too_many_connections} with {@code Connection: close}, and one that sends nothing is closed after
 * {@link #REFUSED_GRACE}, so it gives its slot back at once. Below half, an address may hold more:
 * java.net.http and other clients open one connection per concurrent request, and a burst of 300
 * requests from one client on an idle node is not an attack (GracefulShutdownTest sends one).
 *
 * <p>The handler flow is materialized when pekko-http accepts the connection, before any request:
 * the gate counts there, from the remote address pekko-http puts on the connection's attributes
 * ({@code remote-address-attribute}, turned on by {@link HttpServer}), and counts down when the
 * connection's handler terminates, however it ends.
 */
final class ConnectionGate {
  /**
   * How long a refused connection may take to send the request that gets the 429. It holds one of
   * pekko-http's max-connections slots meanwhile: at 1 s, a client reconnecting ~1,000 times a
   * second kept every slot busy; a client sends its request right after connecting, well within this.
   */
  static final Duration REFUSED_GRACE = Duration.ofMillis(100);

  private final int maxPerAddress;
  /** Open connections on the listener from which the cap applies: half of pekko-http's max-connections. */
  private final int capFrom;
  private final Map<InetAddress, Integer> open = new ConcurrentHashMap<>();
  private final AtomicInteger total = new AtomicInteger();
  private final ClientErrorLog errorLog = new ClientErrorLog(Duration.ofSeconds(10));
  /** Where a refusal is counted on /metrics; null: only the log line (tests' auxiliary servers). */
  private final ApiMetrics metrics;

  /**
   * @param maxPerAddress 0: no cap
   * @param maxConnections pekko-http's max-connections for the listener
   * @param metrics counts each refusal as {@code otl_http_requests_total{route="overloaded",status="429"}},
   *     as the API's other 429s; null: not counted
   */
  ConnectionGate(int maxPerAddress, int maxConnections, ApiMetrics metrics) {
    this.maxPerAddress = maxPerAddress;
    this.capFrom = maxConnections / 2;
    this.metrics = metrics;
  }

  /** The per-connection handler: {@code routes} for a connection within the cap, a refusal otherwise. */
  Flow<HttpRequest, HttpResponse, NotUsed> guard(Flow<HttpRequest, HttpResponse, NotUsed> routes) {
    if (maxPerAddress <= 0) return routes;
    return Flow.fromMaterializer((mat, attributes) -> {
      InetAddress client = attributes.getAttribute(HttpAttributes.RemoteAddress.class)
          .map(a -> a.address()).map(InetSocketAddress::getAddress).orElse(null);
      if (client == null) return routes; // no address known: nothing to count it against
      if (!tryOpen(client)) return refused();
      return routes.watchTermination((notUsed, done) -> {
        done.whenComplete((d, e) -> close(client)); // completes once per connection, however it ends
        return notUsed;
      });
    }).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  private boolean tryOpen(InetAddress client) {
    boolean[] admitted = new boolean[1];
    open.compute(client, (k, n) -> {
      int count = n == null ? 0 : n;
      admitted[0] = count < maxPerAddress || total.get() < capFrom;
      return admitted[0] ? count + 1 : n;
    });
    if (admitted[0]) total.incrementAndGet();
    return admitted[0];
  }

  private void close(InetAddress client) {
    total.decrementAndGet();
    open.computeIfPresent(client, (k, n) -> n <= 1 ? null : n - 1);
  }

  private Flow<HttpRequest, HttpResponse, NotUsed> refused() {
    String message = "this address has " + maxPerAddress + " or more connections open to a busy node "
        + "(http.max-connections-per-address); reuse them or close some, then retry";
    return Flow.of(HttpRequest.class)
        .takeWithin(REFUSED_GRACE)
        .take(1)
        .map(request -> {
          // Counted like the API's other refusals; the address is not logged (it can be personal data).
          errorLog.record("429 too many connections from one address");
          // On /metrics too: only in the log, a flood of connections from one address did not show there
          // (trial t111), where the API's other 429s do.
          if (metrics != null) metrics.request("overloaded", 429, 0);
          boolean openAi = request.getUri().path().endsWith("/chat/completions");
          // An OTLP export's in the Status the OTLP/HTTP specification asks for, as the routes' errors are.
          HttpResponse r = openAi
              ? new OpenAiError(429, "rate_limit_exceeded", null, "too_many_connections", message).response()
              : io.otl.http.otlp.OtlpRoutes.asOtlpError(request,
                  Json.error(StatusCodes.TOO_MANY_REQUESTS, "too_many_connections", message)
                      .addHeader(RetryAfter.create(1L)));
          return r.addHeader(Connection.create("close"));
        });
  }
}
