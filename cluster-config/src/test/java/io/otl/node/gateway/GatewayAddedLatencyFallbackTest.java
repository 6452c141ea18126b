package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.model.RoutingTable;
import io.otl.node.testing.Http;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/gateway.md "Per-version figures": {@code addedLatencyMs} (and
 * {@code otl_gateway_added_latency_seconds}) is the gateway's own time. A call whose candidate did
 * not answer within {@code gateway.timeout} and was answered by the stable counted the wait for the
 * candidate as latency the gateway added (found by the new-user trial: a candidate killed mid-call put
 * a non-streaming call in the 1 s bucket of the gateway's added latency).
 */
class GatewayAddedLatencyFallbackTest {
  private static final String AGENT = "added-agent";

  @Test
  void theWaitForAFailedCandidateIsNotLatencyTheGatewayAdds() throws Exception {
    // A model server that takes the connection (the kernel's backlog) and never answers.
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        GatewayTestNode gateway = GatewayTestNode.start("gateway-added", Map.of(
            "agentscope.training.gateway.timeout", "1500ms",
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(0.75, 1.0))).serving(AGENT)) {
      Http.Response v2 = gateway.api.post("/v1/models/" + AGENT + "/versions",
          "{\"version\":\"v2\",\"artifact\":\"hf-org/v2\",\"servedModel\":\"v2-model\",\"endpoint\":\"http://127.0.0.1:"
              + silent.getLocalPort() + "/v1\"}");
      assertEquals(201, v2.status(), v2.body());
      gateway.awaitState(AGENT, "v2", "CANARY");
      int fellBack = 0;
      for (int i = 0; fellBack < 2 && i < 200; i++) {
        String session = "added-" + i;
        if (RoutingTable.bucket(session) >= 0.5) continue;
        boolean stream = fellBack == 1;
        Http.Response r = gateway.api.chat(AGENT, session, "hello", stream);
        assertEquals(200, r.status(), r.body());
        assertEquals("v1", r.headers().firstValue("X-Model-Version").orElseThrow(), "answered by the stable");
        fellBack++;
      }
      assertEquals(2, fellBack);
      JsonNode added = gateway.api.get("/v1/models/" + AGENT + "/traffic").json().path("addedLatencyMs");
      // Bucket upper bounds: the candidate's 1.5 s wait counted put both calls at 2,500 ms or more.
      assertTrue(added.path("whole").path("p99").asDouble() <= 500, added.toString());
      assertTrue(added.path("stream").path("p99").asDouble() <= 500, added.toString());
      String metrics = gateway.api.get("/metrics").body();
      assertTrue(metrics.contains("otl_gateway_added_latency_seconds_bucket{stream=\"false\",le=\"0.5\"} 1")
          || metrics.contains("otl_gateway_added_latency_seconds_bucket{stream=\"false\",le=\"0.25\"} 1"),
          metrics.lines().filter(l -> l.startsWith("otl_gateway_added")).toList().toString());
      helpSaysWhatDocsSay(metrics);
    }
  }

  /**
   * The HELP line ("before the response head") and docs/gateway.md ("before the upstream call and after its
   * answer") described the measure differently (operator trial): the docs state the HELP text word for word.
   */
  private static void helpSaysWhatDocsSay(String metrics) throws java.io.IOException {
    String prefix = "# HELP otl_gateway_added_latency_seconds ";
    String help = metrics.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length());
    assertTrue(help.contains("upstream call is sent") && help.contains("whole answer") && help.contains("fallback"),
        "says where the measure starts and ends: " + help);
    String docs = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "gateway.md"));
    assertTrue(docs.replaceAll("\\s+", " ").contains(help), "docs/gateway.md states the HELP text: " + help);
  }
}
