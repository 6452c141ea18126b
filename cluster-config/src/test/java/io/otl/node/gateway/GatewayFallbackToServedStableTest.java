package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * The fallback to the stable goes where the stable is served. A version loaded into the model server
 * (a job's checkpoint, or a hand-registered adapter directory, under {@code vllm-lora}) is served at
 * the server's URL under its adapter name; the fallback took the endpoint it was registered with (a
 * trained version's: its checkpoint URI) and no served name, so once a trained version had been
 * promoted, every call a failing candidate handed to the stable was a 502 ("no HTTP serving endpoint").
 */
class GatewayFallbackToServedStableTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "fallback-served";

  @Test
  void aFailedCandidateCallIsAnsweredByTheLoadedStable() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "gateway-fallback-" + UUID.randomUUID()));
    Path adapter = Files.createDirectories(dir.resolve("adapter-v1"));
    ActorTestKit kit = ActorTestKit.create("fallback-simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.serving.backend", "vllm-lora",
            "agentscope.training.serving.vllm.url", simulator.baseUrl(),
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", java.util.List.of(1.0)))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)))) {
      Http api = new Http(node.httpPort());
      // v1: an adapter directory, loaded into the (simulated) vLLM server, canaried against its base
      // model v0, then promoted; the endpoint it is registered with is not where it is served
      // (docs/api.md: "its endpoint is then not used").
      Http.Response v1 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v1\",\"artifact\":\""
          + adapter.toUri() + "\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
      assertEquals(201, v1.status(), v1.body());
      awaitState(api, "v1", "CANARY");
      Http.Response promote = api.post("/v1/models/" + AGENT + "/versions/v1/promote", "");
      assertEquals(202, promote.status(), promote.body());
      awaitState(api, "v1", "STABLE");
      // v2: a candidate whose server is gone.
      Http.Response v2 = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v2\",\"artifact\":\"dead\","
          + "\"endpoint\":\"http://127.0.0.1:9/v1\",\"servedModel\":\"dead\"}");
      assertEquals(201, v2.status(), v2.body());
      awaitState(api, "v2", "CANARY");

      int onCandidate = 0;
      for (int i = 0; i < 20; i++) {
        String session = "fallback-" + i;
        if (!api.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json().path("version").asText()
            .equals("v2")) {
          continue;
        }
        onCandidate++;
        HttpResponse<String> r = chat(node.httpPort(), session);
        assertEquals(200, r.statusCode(), session + ": " + r.body());
        assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(""), r.body());
      }
      assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  private static void awaitState(Http api, String version, String state) throws InterruptedException {
    String last = "";
    for (int i = 0; i < 200; i++) {
      for (JsonNode v : api.get("/v1/models/" + AGENT).json().path("versions")) {
        if (v.path("version").asText().equals(version)) last = v.path("state").asText();
      }
      if (last.equals(state)) return;
      Thread.sleep(100);
    }
    assertEquals(state, last, api.get("/v1/models/" + AGENT).body());
  }

  private static HttpResponse<String> chat(int port, String session) throws Exception {
    String body = JSON.createObjectNode().put("model", "default")
        .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", "hi")))
        .toString();
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
