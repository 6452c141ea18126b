package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Http;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The model timeline ({@code GET /v1/audit/model/{agentId}/timeline}, what {@code audit model} prints)
 * of a version registered by hand without {@code servedModel}: the gateway then sends the agent's own
 * model name, and the timeline printed "DEPLOYING to static as null".
 */
class ModelTimelineTest {
  private static final String AGENT = "timeline-agent";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    // As on the embedded default (vllm-lora, v0 the base model): a version registered by hand with
    // its own endpoint and an artifact that is no local adapter directory is deployed "static" for
    // its canary, which the timeline shows. Nothing here calls the vLLM URL.
    gateway = GatewayTestNode.start("model-timeline", Map.of(
        "agentscope.training.serving.backend", "vllm-lora",
        "agentscope.training.serving.vllm.url", "http://127.0.0.1:9"));
  }

  @AfterAll
  static void stop() {
    gateway.close();
  }

  @Test
  void aVersionWithoutServedModelIsDeployedAsTheAgentsOwnModelName() {
    Http.Response v1 = gateway.api.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"v1\",\"artifact\":\"registry:models/v1\",\"endpoint\":\"" + gateway.simulator.baseUrl() + "/v1\"}");
    assertEquals(201, v1.status(), v1.body());
    Http.Response r = gateway.api.get("/v1/audit/model/" + AGENT + "/timeline");
    assertEquals(200, r.status(), r.body());
    assertTrue(r.body().contains("DEPLOYING to static as the agent's own model name"), r.body());
    assertTrue(r.body().contains("deployment confirmed at " + gateway.simulator.baseUrl() + "/v1"), r.body());
    assertFalse(r.body().contains("null"), r.body());
  }
}
