package io.otl.http.gateway;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractMaterializer;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway that calls a gateway. Every call the gateway forwards carries {@link #HEADER}; a node that
 * receives a request carrying it refuses it at once with {@link #STATUS}, before its guard, its auth, the
 * body, the session or the recording: a model version's endpoint (or v0's base URL) that points back at
 * an OTL node would otherwise re-enter a gateway. Trial t121: the inner gateway answered 400
 * {@code missing_agent} (the forwarded call names no agent), which went to the agent as its own error,
 * counted against nothing, so the candidate was never rolled back; with {@code gateway.default-agent}
 * set, the call was routed to the same version again and recursed until {@code gateway.max-in-flight}.
 * The calling gateway reads the refusal as its version's upstream failure ({@link #refusedAsLoop}).
 */
public final class GatewayHop {
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);
  /** Sent on every forwarded call; a model server ignores it, an OTL node refuses the request. */
  public static final String HEADER = "X-OTL-Gateway-Hop";
  /**
   * 421 Misdirected Request (RFC 9110 §15.5.20): the request reached a server that will not answer it, a
   * gateway where a model server was meant. A 4xx, because whoever sent it is this node's client and no
   * request a client can send gets a 5xx here; the calling gateway tells this refusal from a model server's
   * own 421 by the header it carries back ({@link #HEADER}: {@code refused}), not by the status.
   */
  public static final int STATUS = 421;
  static final String CODE = "gateway_loop";
  static final String REFUSED_METRIC = "otl_gateway_loops_refused_total";
  /** What to do about it, in both the refusal and the calling gateway's message. */
  static final String FIX = "set it to the model server itself (the OpenAI-compatible base URL of vLLM, "
      + "OpenAI …), never to an OTL node's /v1";
  private static final HttpHeader MARK = RawHeader.create(HEADER, "1");
  private static final HttpHeader REFUSED = RawHeader.create(HEADER, "refused");
  private static final long LOG_EVERY_NANOS = 60_000_000_000L;
  private static final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

  private GatewayHop() {}

  /** The header a forwarded call carries. */
  static HttpHeader mark() {
    return MARK;
  }

  /**
   * {@code inner} for every request not forwarded by a gateway; a forwarded one gets the refusal, whatever
   * its path (an endpoint with a path of its own reaches the node elsewhere than {@code /v1/chat/completions}).
   */
  public static Route refuseForwarded(io.otl.http.MetricsRegistry metrics, Supplier<Route> inner) {
    Route routes = inner.get();
    return extractRequest(request -> request.getHeader(HEADER).isEmpty() ? routes : extractMaterializer(mat -> {
      request.discardEntityBytes(mat);
      // Counted here, where the calling node's operator cannot see it: someone's version points at this node.
      metrics.inc(REFUSED_METRIC, "Calls forwarded by a gateway (X-OTL-Gateway-Hop) refused as a loop (421)", "", 1);
      long now = System.nanoTime();
      long last = lastLogged.get();
      // Once a minute at most: a looping version fails every call routed to it.
      if (now - last >= LOG_EVERY_NANOS && lastLogged.compareAndSet(last, now)) {
        log.warn("gateway: refused {} {} forwarded by a gateway ({}): a model version's endpoint or "
            + "agentscope.model.base-url points at this node; {}", request.method().value(),
            request.getUri().path(), HEADER, FIX);
      }
      return complete(refusal());
    }));
  }

  static HttpResponse refusal() {
    return new OpenAiError(STATUS, "invalid_request_error", null, CODE, "loop detected: this OTL node's gateway was "
        + "called by a gateway (" + HEADER + "), so a model version's endpoint, or v0's base URL (the AgentScope "
        + "model section's base_url), points back at an OTL gateway; " + FIX).response().addHeader(REFUSED);
  }

  /** Whether an upstream's answer is a gateway's refusal of a forwarded call. */
  static boolean refusedAsLoop(HttpResponse response) {
    return response.getHeader(HEADER).map(h -> h.value().equals("refused")).orElse(false);
  }
}
