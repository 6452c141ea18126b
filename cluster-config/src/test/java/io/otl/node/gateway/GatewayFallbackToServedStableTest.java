package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fallback to the stable goes where the stable is served. A version loaded into the model server
 * (a job's checkpoint, or a hand-registered adapter directory, under {@code vllm-lora}) is served at
 * the server's URL under its adapter name; the fallback took the endpoint it was registered with (a
 * trained version's: its checkpoint URI) and no served name, so once a trained version had been
 * promoted, every call a failing candidate handed to the stable was a 502 ("no HTTP serving endpoint").
 */
class GatewayFallbackToServedStableTest {
  private static final String AGENT = "fallback-served";

  @Test
  void aFailedCandidateCallIsAnsweredByTheLoadedStable() throws Exception {
    try (GatewayTestNode gateway = GatewayTestNode.start("gateway-fallback", simulator -> Map.of(
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.serving.backend", "vllm-lora",
            "agentscope.training.serving.vllm.url", simulator.baseUrl(),
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(1.0)))) {
      Http api = gateway.api;
      Path adapter = Files.createDirectories(gateway.dir.resolve("adapter-v1"));
      // v1: an adapter directory, loaded into the (simulated) vLLM server, canaried against its base
      // model v0, then promoted; the endpoint it is registered with is not where it is served
      // (docs/api.md: "its endpoint is then not used").
      Http.Response v1 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v1\",\"artifact\":\""
          + adapter.toUri() + "\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
      assertEquals(201, v1.status(), v1.body());
      gateway.awaitState(AGENT, "v1", "CANARY");
      Http.Response promote = api.post("/v1/models/" + AGENT + "/versions/v1/promote", "");
      assertEquals(202, promote.status(), promote.body());
      gateway.awaitState(AGENT, "v1", "STABLE");
      // v2: a candidate whose server is gone.
      Http.Response v2 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v2\",\"artifact\":\"dead\","
          + "\"endpoint\":\"http://127.0.0.1:9/v1\",\"servedModel\":\"dead\"}");
      assertEquals(201, v2.status(), v2.body());
      gateway.awaitState(AGENT, "v2", "CANARY");

      int onCandidate = 0;
      for (int i = 0; i < 20; i++) {
        String session = "fallback-" + i;
        if (!api.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json().path("version").asText()
            .equals("v2")) {
          continue;
        }
        onCandidate++;
        Http.Response r = api.chat(AGENT, session, "hi", false);
        assertEquals(200, r.status(), session + ": " + r.body());
        assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(""), r.body());
        if (onCandidate == 1) sessionNamesItsRoutedVersion(api, session);
      }
      assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    }
  }

  /**
   * The session of a call that fell back names one version: its {@code modelVersion} is the version it
   * is routed to (v2), and so is its {@code metadata.servedModel} (v2's "dead"); the answer's own
   * inference says the stable answered it. The metadata named the stable's model beside modelVersion v2
   * (trial: {@code "modelVersion":"v1"} with v0's {@code "servedModel":"qwen2.5-7b-instruct"}).
   */
  private static void sessionNamesItsRoutedVersion(Http api, String session) throws Exception {
    JsonNode stored = Await.until("the turn of " + session + " recorded", Duration.ofSeconds(20),
        () -> api.get("/v1/sessions/" + session),
        r -> r.status() == 200 && r.json().path("messages").size() == 2).json();
    assertEquals("v2", stored.path("modelVersion").asText(), stored.toString());
    assertEquals("dead", stored.path("metadata").path("servedModel").asText(), stored.toString());
    JsonNode inference = stored.path("messages").get(1).path("inference");
    assertEquals("v1", inference.path("modelVersion").asText(), stored.toString());
    assertEquals("v2", inference.path("fallbackFrom").asText(), stored.toString());
    assertNotEquals("dead", inference.path("servedModel").asText(), stored.toString());
  }
}
