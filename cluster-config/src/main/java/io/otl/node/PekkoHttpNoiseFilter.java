package io.otl.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.otl.http.ClientErrorLog;
import java.time.Duration;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Turns a failure pekko-http 1.3.0 logs for a client's malformed request into the rate-limited
 * client-error summary. An {@code HTTP/1.0} request with {@code Transfer-Encoding: chunked} passes
 * its parser and then fails the request model's check ("HTTP/1.0 requests must not have a chunked
 * entity") before any handler of the node runs: pekko-http answers 500 and logs two ERROR lines
 * with stack traces, about 50 lines per request (200 requests in a second wrote 10,400 lines). Only
 * events carrying that exception are dropped. The node's API and OTLP ports answer that pair 400 before
 * pekko-http's parser ({@code io.otl.http.RequestFraming}); this is for the listeners served by pekko-http's
 * own binding, the simulator's (docs/http-edge.md). Installed once per JVM's logging context, for the jar and
 * for nodes embedded in a JVM alike.
 */
final class PekkoHttpNoiseFilter extends TurboFilter {
  static final String HTTP10_CHUNKED = "HTTP/1.0 requests must not have a chunked entity";
  private static final String NAME = "otl-pekko-http-noise";

  private final ClientErrorLog summary = new ClientErrorLog(Duration.ofSeconds(10));

  static void install() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) return;
    synchronized (PekkoHttpNoiseFilter.class) {
      if (ctx.getTurboFilterList().stream().anyMatch(f -> NAME.equals(f.getName()))) return;
      PekkoHttpNoiseFilter filter = new PekkoHttpNoiseFilter();
      filter.setName(NAME);
      filter.start();
      ctx.addTurboFilter(filter);
    }
  }

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (t == null || level != Level.ERROR || !isHttp10Chunked(t)) return FilterReply.NEUTRAL;
    // pekko-http logs each such request twice (the stage's failure, then its 500): count the 500.
    if (format != null && format.startsWith("Internal server error")) {
      summary.record("500 HTTP/1.0 request with a chunked body (answered by pekko-http)");
    }
    return FilterReply.DENY;
  }

  private static boolean isHttp10Chunked(Throwable t) {
    for (Throwable e = t; e != null; e = e.getCause() == e ? null : e.getCause()) {
      if (e instanceof IllegalArgumentException && e.getMessage() != null && e.getMessage().contains(HTTP10_CHUNKED)) {
        return true;
      }
    }
    return false;
  }
}
