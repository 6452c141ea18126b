package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the second new-user trial, on a node fresh from {@code java -jar otl-node.jar}: a scrape
 * showed none of the event counters docs/api.md lists as long as nothing had been refused
 * ({@code otl_events_rejected_total} appeared only at the first refusal, {@code otl_otlp_spans_total}
 * at the first span), and {@code GET /v1/audit/lineage/widget/x} answered that the allowed kinds include
 * {@code coordinator}, which the lineage route then refuses.
 */
class ScrapeAndLineageAnswersTest {

  @Test
  void aFreshNodeShowsItsCountersAtZeroAndTheLineageRouteNamesItsOwnKinds(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());

      String scrape = http.get("/metrics").body();
      for (String series : List.of("otl_events_accepted_total 0", "otl_events_duplicate_total 0",
          "otl_events_rejected_total 0", "otl_otlp_spans_total{outcome=\"received\"} 0",
          "otl_otlp_spans_total{outcome=\"mapped\"} 0", "otl_otlp_spans_total{outcome=\"ignored\"} 0",
          "otl_otlp_spans_total{outcome=\"refused\"} 0", "otl_otlp_messages_ignored_total 0")) {
        assertTrue(scrape.lines().anyMatch(series::equals), series + " missing from\n" + scrape);
      }
      assertTrue(scrape.contains("# TYPE otl_events_rejected_total counter"), scrape);

      Http.Response unknown = http.get("/v1/audit/lineage/widget/x");
      assertEquals(400, unknown.status(), unknown.body());
      String message = unknown.json().get("message").asText();
      assertTrue(message.startsWith("lineage kinds are model, session and job"), message);
      assertFalse(message.contains("allowed: session, coordinator"), message);
      Http.Response coordinator = http.get("/v1/audit/lineage/coordinator/bot");
      assertEquals(400, coordinator.status(), coordinator.body());
      assertEquals(message, coordinator.json().get("message").asText());
      assertEquals(404, http.get("/v1/audit/lineage/model/bot").status(), "the route's own kinds still pass");
    }
  }
}
