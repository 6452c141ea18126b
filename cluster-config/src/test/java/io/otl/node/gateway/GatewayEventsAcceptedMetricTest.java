package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code otl_events_accepted_total} (and {@code otl_journal_write_seconds}) counts the events the gateway records per turn, as it counts
 * the events API's: it counted only the explicit API (and OTLP), so a node fed by the gateway alone
 * showed 0 accepted events while its sessions filled up.
 */
class GatewayEventsAcceptedMetricTest {

  private static double accepted(GatewayTestNode g, String series) {
    for (String line : g.api.get("/metrics").body().lines().toList()) {
      if (line.startsWith(series + " ")) return Double.parseDouble(line.substring(series.length() + 1));
    }
    throw new AssertionError(series + " is not in the scrape");
  }

  /** The counter once it reached {@code n} (it moves when the session's reply arrives, just after the view). */
  private static double awaitAccepted(GatewayTestNode g, double n) throws InterruptedException {
    for (int i = 0; i < 50 && accepted(g, "otl_events_accepted_total") < n; i++) Thread.sleep(100);
    return accepted(g, "otl_events_accepted_total");
  }

  private static void call(GatewayTestNode g, String messages) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(g.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "counted").header("X-Session-Id", "counted-1").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":" + messages + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
  }

  private static String answerOf(GatewayTestNode g, int messages) throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      Http.Response r = g.api.get("/v1/sessions/counted-1");
      if (r.status() == 200 && r.json().path("messages").size() == messages) {
        JsonNode m = r.json().path("messages");
        return m.get(messages - 1).path("content").asText();
      }
      Thread.sleep(100);
    }
    throw new AssertionError("session counted-1 never had " + messages + " messages");
  }

  @Test
  void eachTurnsRecordedEventsCountAsAccepted() throws Exception {
    try (GatewayTestNode g = GatewayTestNode.start("gateway-accepted", Map.of()).serving("counted")) {
      assertEquals(0, accepted(g, "otl_events_accepted_total"), "nothing recorded yet");
      call(g, "[{\"role\":\"user\",\"content\":\"first question\"}]");
      String first = answerOf(g, 2);
      // The session's start, the user's message and the answer.
      assertEquals(3, awaitAccepted(g, 3));

      // The next turn resends the history: only the new question and its answer are stored.
      call(g, "[{\"role\":\"user\",\"content\":\"first question\"},{\"role\":\"assistant\",\"content\":"
          + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(first)
          + "},{\"role\":\"user\",\"content\":\"second question\"}]");
      answerOf(g, 4);
      assertEquals(5, awaitAccepted(g, 5));
      // Each turn's write is timed as the events API's are: the histogram was missing from the scrape
      // of a node fed by the gateway alone.
      assertEquals(2, accepted(g, "otl_journal_write_seconds_count"), "two turns written");
    }
  }
}
