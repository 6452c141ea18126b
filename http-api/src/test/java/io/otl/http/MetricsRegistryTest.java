package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The exposition's TYPE lines. The node's Kafka figures ({@code otl_kafka_records_recorded_total},
 * {@code otl_kafka_dead_lettered_total}, {@code otl_kafka_ingest_restarts_total}) are counts read at
 * scrape time and were registered as gauges: {@code # TYPE otl_kafka_records_recorded_total gauge},
 * which promtool flags and which makes {@code rate()} misread a node restart.
 */
class MetricsRegistryTest {

  @Test
  void aCountReadAtScrapeTimeIsTypedCounterAndReadAfresh() {
    MetricsRegistry registry = new MetricsRegistry();
    AtomicLong recorded = new AtomicLong(5);
    registry.counter("otl_kafka_records_recorded_total", "agent-events records stored in the journal",
        () -> Map.of("", (double) recorded.get()));
    registry.counter("otl_kafka_dead_lettered_total", "agent-events records sent to the dead-letter topic",
        () -> Map.of(MetricsRegistry.labels("code", "not_json"), 2.0));
    recorded.addAndGet(3);
    String text = registry.scrape();
    assertTrue(text.contains("# TYPE otl_kafka_records_recorded_total counter\notl_kafka_records_recorded_total 8\n"),
        text);
    assertTrue(text.contains("# TYPE otl_kafka_dead_lettered_total counter\n"
        + "otl_kafka_dead_lettered_total{code=\"not_json\"} 2\n"), text);
  }

  /**
   * The request guard counts its header refusals as {@code route="unparsable",status="400"} on the node's metrics, and
   * the parser's error handler its own beside them, read at scrape time: the scrape printed that series twice
   * ({@code … 20} and {@code … 10}), which Prometheus takes as one series with a duplicate sample.
   */
  @Test
  void aCounterSeriesCountedInTwoPlacesIsPrintedOnceWithTheSum() {
    MetricsRegistry registry = new MetricsRegistry();
    String unparsable = MetricsRegistry.labels("route", "unparsable", "status", "400");
    registry.counterSeries("otl_http_requests_total", "HTTP requests", "route=\"unparsable\"",
        () -> Map.of(unparsable, 20.0, MetricsRegistry.labels("route", "unparsable", "status", "431"), 10.0));
    registry.inc("otl_http_requests_total", "HTTP requests", unparsable, 10);
    registry.inc("otl_http_requests_total", "HTTP requests", MetricsRegistry.labels("route", "GET /metrics", "status",
        "200"), 1);
    String text = registry.scrape();
    assertTrue(text.contains("# TYPE otl_http_requests_total counter\n"
        + "otl_http_requests_total{route=\"GET /metrics\",status=\"200\"} 1\n"
        + "otl_http_requests_total{route=\"unparsable\",status=\"400\"} 30\n"
        + "otl_http_requests_total{route=\"unparsable\",status=\"431\"} 10\n"), text);
  }

  @Test
  void aGaugeCannotTakeACountersName() {
    MetricsRegistry registry = new MetricsRegistry();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> registry.gauge("otl_things_total", "help", Map::of));
    assertTrue(e.getMessage().contains("otl_things_total"), e.getMessage());
  }

  @Test
  void bucketBoundsArePlainNumbers() {
    MetricsRegistry registry = new MetricsRegistry();
    registry.observe("otl_added_seconds", "help", "", 0.0003, new double[] {0.0002, 0.0005, 0.001, 0.25});
    String text = registry.scrape();
    assertTrue(text.contains("otl_added_seconds_bucket{le=\"0.0002\"} 0\n"), text);
    assertTrue(text.contains("otl_added_seconds_bucket{le=\"0.0005\"} 1\n"), text);
    assertTrue(text.contains("otl_added_seconds_bucket{le=\"0.001\"} 1\n"), text);
  }
}
