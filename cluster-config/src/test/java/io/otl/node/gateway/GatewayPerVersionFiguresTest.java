package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.model.RoutingTable;
import io.otl.node.testing.Await;
import io.otl.node.testing.FreePorts;
import io.otl.node.testing.Http;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Trial t88 (an operator auditing a canary whose model server was down): every call of the candidate
 * fell back to the stable. The console's traffic table showed the candidate's calls and a 100 % error
 * rate, but /metrics counted those calls only under the stable's {@code otl_gateway_requests_total}
 * (the version that answered), so the candidate had errors and no requests there and its error rate
 * could not be read off /metrics; and the session's audit timeline named the candidate it was routed
 * to, never the stable that answered. The traffic table's "aborted" (clients gone mid-answer) had no
 * series on /metrics either.
 */
class GatewayPerVersionFiguresTest {
  private static final String AGENT = "figures-agent";

  @Test
  void aFailingCandidatesCallsAreOnMetricsAsOnTheTrafficTableAndTheTimelineNamesWhoAnswered() throws Exception {
    try (GatewayTestNode gateway = GatewayTestNode.start("gateway-figures", Map.of(
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(0.75, 1.0))).serving(AGENT)) {
      Http.Response v2 = gateway.api.post("/v1/models/" + AGENT + "/versions",
          "{\"version\":\"v2\",\"artifact\":\"hf-org/v2\",\"servedModel\":\"v2-model\",\"endpoint\":\"http://127.0.0.1:"
              + FreePorts.take() + "/v1\"}");
      assertEquals(201, v2.status(), v2.body());
      gateway.awaitState(AGENT, "v2", "CANARY");
      String fellBack = null;
      String stableSession = null;
      int onCandidate = 0;
      int onStable = 0;
      for (int i = 0; (onCandidate < 3 || onStable < 2) && i < 200; i++) {
        String session = "figures-" + i;
        boolean candidate = RoutingTable.bucket(session) < 0.5;
        if (candidate ? onCandidate == 3 : onStable == 2) continue;
        Http.Response r = gateway.api.chat(AGENT, session, "hello", false);
        assertEquals(200, r.status(), r.body());
        assertEquals("v1", r.headers().firstValue("X-Model-Version").orElseThrow(), "the stable answered");
        if (candidate) {
          onCandidate++;
          fellBack = session;
        } else {
          onStable++;
          stableSession = session;
        }
      }
      assertEquals(3, onCandidate);

      Map<String, Long> calls = new HashMap<>();
      for (JsonNode v : gateway.api.get("/v1/models/" + AGENT + "/traffic").json().path("versions")) {
        calls.put(v.path("version").asText(), v.path("calls").asLong());
      }
      assertEquals(Map.of("v1", 5L, "v2", 3L), calls, "traffic: 3 failed calls of v2, 3 fallbacks and 2 calls of v1");
      String metrics = gateway.api.get("/metrics").body();
      for (Map.Entry<String, Long> c : calls.entrySet()) {
        String series = "otl_gateway_upstream_calls_total{agent=\"" + AGENT + "\",version=\"" + c.getKey() + "\"} ";
        assertTrue(metrics.lines().anyMatch(l -> l.equals(series + c.getValue())),
            series + c.getValue() + " in " + metrics.lines().filter(l -> l.startsWith("otl_gateway_")).toList());
      }
      assertTrue(metrics.contains("# TYPE otl_gateway_upstream_calls_total counter"), "a counter");

      // A client that leaves a stream: the traffic table's "aborted", and now a series on /metrics.
      try (Socket s = new Socket("127.0.0.1", gateway.node.httpPort())) {
        byte[] body = ("{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":500,\"messages\":"
            + "[{\"role\":\"user\",\"content\":\"a long answer, please, of many words\"}]}").getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Agent-Id: " + AGENT + "\r\nX-Session-Id: " + stableSession + "\r\nContent-Length: " + body.length
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        assertTrue(new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200"));
      }
      String aborted = "otl_gateway_aborted_total{agent=\"" + AGENT + "\",version=\"v1\"} 1";
      Await.until("the abort counted on /metrics", Duration.ofSeconds(30), () -> gateway.api.get("/metrics").body(),
          m -> m.lines().anyMatch(aborted::equals));
      JsonNode v1 = null;
      for (JsonNode v : gateway.api.get("/v1/models/" + AGENT + "/traffic").json().path("versions")) {
        if (v.path("version").asText().equals("v1")) v1 = v;
      }
      assertEquals(1, v1.path("aborted").asLong(), "the traffic table agrees: " + v1);

      String timeline = "";
      for (int i = 0; i < 100 && !timeline.contains("assistant:"); i++) {
        Thread.sleep(100);
        timeline = gateway.api.get("/v1/audit/session/" + fellBack + "/timeline").body();
      }
      assertTrue(timeline.contains("model v2"), timeline);
      assertTrue(timeline.contains("(version v1, fallback from v2)"), timeline);
    }
  }
}
