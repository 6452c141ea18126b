package io.otl.http;

import java.util.Map;
import java.util.function.Supplier;

/** The figures the HTTP edge reports on {@code /metrics} (issue: HTTP API, metrics list). */
public final class ApiMetrics {
  static final double[] LATENCY_BUCKETS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  private static final String REQUESTS_HELP = "HTTP requests by route and status";
  private final MetricsRegistry registry;

  public ApiMetrics(MetricsRegistry registry) {
    this.registry = registry;
    // Shown at 0 from the start: a counter that appears only at its first increment is missing from the
    // scrape docs/api.md lists, and Prometheus' rate() and alerts see no series rather than a zero.
    eventsAccepted(0, 0);
    eventsRejected(0);
    // Requests pekko-http could not parse (414, 431, a malformed request line) never reach a route;
    // counted by JsonParsingErrorHandler, read at scrape time beside the routes' series.
    registry.counterSeries("otl_http_requests_total", REQUESTS_HELP, "route=\"unparsable\"", () -> {
      Map<String, Double> byStatus = new java.util.HashMap<>();
      JsonParsingErrorHandler.ANSWERED.forEach((status, n) ->
          byStatus.put(MetricsRegistry.labels("route", "unparsable", "status", String.valueOf(status)), n.doubleValue()));
      return byStatus;
    });
  }

  public MetricsRegistry registry() {
    return registry;
  }

  public void eventsAccepted(int accepted, int duplicates) {
    registry.inc("otl_events_accepted_total", "Session events stored in the journal", "", accepted);
    registry.inc("otl_events_duplicate_total", "Session events acknowledged as duplicates", "", duplicates);
  }

  /** Time from handing a batch to its session until the journal acknowledged it. */
  public void journalWrite(double seconds) {
    registry.observe("otl_journal_write_seconds", "Session batch persisted: request to journal acknowledgement",
        "", seconds, LATENCY_BUCKETS);
  }

  public void eventsRejected(int count) {
    registry.inc("otl_events_rejected_total", "Session events refused by the session after parsing (nothing stored); "
        + "requests refused while parsing count only as HTTP 400s in otl_http_requests_total", "", count);
  }

  public void request(String route, int status, double seconds) {
    registry.observe("otl_http_request_duration_seconds", "HTTP request latency by route",
        MetricsRegistry.labels("route", route), seconds, LATENCY_BUCKETS);
    registry.inc("otl_http_requests_total", REQUESTS_HELP,
        MetricsRegistry.labels("route", route, "status", String.valueOf(status)), 1);
  }

  public void gauge(String name, String help, Supplier<Map<String, Double>> values) {
    registry.gauge(name, help, values);
  }

  /** A count kept elsewhere, read at scrape time ({@link MetricsRegistry#counter}). */
  public void counter(String name, String help, Supplier<Map<String, Double>> values) {
    registry.counter(name, help, values);
  }
}
