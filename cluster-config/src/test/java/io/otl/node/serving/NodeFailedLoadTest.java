package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A load slower than {@code serving.vllm.request-timeout}: every attempt times out, the adapter lands
 * on the model server anyway, and the version ends DEPLOY_FAILED. The node then unloads it; before,
 * the adapter stayed loaded on vLLM for good. Real HTTP throughout: the node's API, the vllm-lora
 * backend and the simulator's vLLM face, whose load answers are delayed.
 */
class NodeFailedLoadTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static Config settings(Path dir) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.simulator.enabled", true,
            "agentscope.training.simulator.port", 0,
            "agentscope.training.simulator.work-dir", dir.resolve("sim").toString(),
            "agentscope.training.serving.backend", "vllm-lora",
            "agentscope.training.serving.vllm.request-timeout", "300ms",
            "agentscope.training.serving.retry.min-backoff", "50ms",
            "agentscope.training.serving.retry.max-attempts", 2,
            "agentscope.training.training-runner.base-model", "base-7b"))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true));
  }

  private static JsonNode version(Http http, String agent, String v) {
    for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  private static HttpResponse<String> simulator(String root, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(root + path));
    b = body == null ? b.GET() : b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAdapterWhoseLoadTimedOutIsUnloadedFromTheModelServer() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-failed-load");
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1"));
    String agent = "slow-load-bot";
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(dir), java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      String modelServer = http.get("/v1/models/" + agent + "/route?sessionId=probe").json().get("endpoint").asText();
      String root = modelServer.substring(0, modelServer.length() - "/v1".length());
      assertEquals(400, simulator(root, "/simulator/models/load-delay", "{\"ms\":-1}").statusCode());
      assertEquals(200, simulator(root, "/simulator/models/load-delay", "{\"ms\":3000}").statusCode());

      Http.Response reg = http.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
          + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}");
      assertEquals(201, reg.status(), reg.body());
      JsonNode failed = Await.until("v1 DEPLOY_FAILED", Duration.ofSeconds(30), () -> version(http, agent, "v1"),
          x -> x.get("state").asText().equals("DEPLOY_FAILED"));
      String served = failed.path("deployment").path("servedModel").asText();
      assertTrue(failed.path("history").toString().contains("timed out") || failed.path("history").toString()
          .contains("imeout"), failed.toString());

      JsonNode gone = Await.until("v1's adapter unloaded", Duration.ofSeconds(30), () -> version(http, agent, "v1"),
          x -> x.path("deployment").path("status").asText().equals("UNDEPLOYED"));
      assertEquals("DEPLOY_FAILED", gone.get("state").asText());
      JsonNode stats = MAPPER.readTree(simulator(root, "/simulator/models", null).body());
      assertTrue(stats.path("loads").path(served).asLong() >= 1, "the slow load did land: " + stats);
      assertFalse(stats.path("loaded").toString().contains("\"" + served + "\""), "and it is unloaded: " + stats);
    }
  }
}
