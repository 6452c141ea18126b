package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.http.MetricsRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Per-version figures, and the bound on the gateway's /metrics label sets. */
class GatewayTrafficTest {

  @Test
  void labelSetsAreCappedAndLaterPairsAreSummedAsOther() {
    GatewayTraffic t = new GatewayTraffic(Instant.EPOCH);
    MetricsRegistry registry = new MetricsRegistry();
    GatewayMetrics m = new GatewayMetrics(registry, t);
    for (int i = 0; i < GatewayTraffic.MAX_LABEL_SETS + 50; i++) m.request("agent-" + i, "v1", 200);
    String scrape = registry.scrape();
    long series = scrape.lines().filter(l -> l.startsWith("otl_gateway_requests_total{")).count();
    assertEquals(GatewayTraffic.MAX_LABEL_SETS + 1, series, "capped, plus one 'other' series");
    assertTrue(scrape.contains("otl_gateway_requests_total{agent=\"other\",version=\"other\",status=\"200\"} 50"), scrape);
    assertArrayEquals(new String[] {"agent-0", "v1"}, t.labels("agent-0", "v1"), "admitted pairs keep their labels");
  }

  /**
   * Trial t88: an agent labelled early (v0 and a rolled-back v1) got a new candidate v2 after other agents had
   * taken the remaining pairs; v2's calls went to agent="other",version="other", and the canary being watched
   * had no series of its own on /metrics while the traffic table showed them.
   */
  @Test
  void aLaterVersionOfALabelledAgentKeepsItsLabelsAfterTheFirstPairsAreTaken() {
    GatewayTraffic t = new GatewayTraffic(Instant.EPOCH);
    MetricsRegistry registry = new MetricsRegistry();
    GatewayMetrics m = new GatewayMetrics(registry, t);
    m.request("support-bot", "v0", 200);
    for (int i = 0; i < GatewayTraffic.MAX_LABEL_SETS + 50; i++) m.request("agent-" + i, "v0", 200);
    m.request("support-bot", "v2", 200);
    m.request("agent-300", "v1", 200);  // an agent that never had labels stays summed
    String scrape = registry.scrape();
    assertTrue(scrape.contains("otl_gateway_requests_total{agent=\"support-bot\",version=\"v2\",status=\"200\"} 1"),
        scrape);
    assertTrue(scrape.contains("otl_gateway_requests_total{agent=\"other\",version=\"other\",status=\"200\"} 52"),
        scrape);
    // Bounded still: later versions of labelled agents have their own, fixed number of pairs.
    for (int i = 0; i < GatewayTraffic.MAX_LATER_VERSIONS + 10; i++) m.request("agent-0", "v" + (i + 1), 200);
    long series = registry.scrape().lines().filter(l -> l.startsWith("otl_gateway_requests_total{")).count();
    assertEquals(GatewayTraffic.MAX_LABEL_SETS + GatewayTraffic.MAX_LATER_VERSIONS + 1, series);
  }

  @Test
  void theViewHasCallsErrorsTokensAndLatencyPerVersion() {
    GatewayTraffic t = new GatewayTraffic(Instant.parse("2026-12-01T00:00:00Z"));
    GatewayMetrics m = new GatewayMetrics(new MetricsRegistry(), t);
    for (int i = 0; i < 10; i++) {
      m.call("a", "v0");
      m.latency("a", "v0", 0.004, 0.001);
      m.tokens("a", "v0", 7, 3);
    }
    m.call("a", "v1");
    m.upstreamError("a", "v1", "connect");
    m.fallback("a", "v1");
    Map<String, Object> view = t.view("a");
    assertEquals("2026-12-01T00:00:00Z", view.get("since"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> versions = (List<Map<String, Object>>) view.get("versions");
    assertEquals(2, versions.size());
    Map<String, Object> v0 = versions.get(0);
    assertEquals("v0", v0.get("version"));
    assertEquals(10L, v0.get("calls"));
    assertEquals(70L, v0.get("promptTokens"));
    assertEquals(30L, v0.get("completionTokens"));
    assertEquals(5.0, ((Map<?, ?>) v0.get("latencyMs")).get("p99"), "4 ms falls in the bucket up to 5 ms");
    Map<String, Object> v1 = versions.get(1);
    assertEquals(1L, v1.get("errors"));
    assertEquals(1.0, v1.get("errorRate"));
    assertEquals(1L, v1.get("fallbacks"));
    assertEquals(List.of(), t.view("unknown").get("versions"));
  }
}
