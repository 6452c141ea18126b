package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the third new-user trial: AgentScope's settings.json and config.toml set
 * {@code trinityEndpoint: http://127.0.0.1:8080}, the node's own default HTTP port. A job then failed
 * with only "POST /api/jobs/ returned 404: not_found", which did not say the endpoint is no Ray
 * dashboard. The failure now names the key and where it should point.
 */
class EndpointIsTheNodeItselfTest {

  @Test
  void aJobSubmittedToTheNodesOwnApiSaysTheEndpointIsNoRayDashboard(@TempDir Path dir) throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    String endpoint = "http://127.0.0.1:" + port;
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.http.port", port,
            "agentscope.training.training-runner.trinity-endpoint", endpoint))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true)))) {
      Http http = new Http(node.httpPort());
      assertEquals(port, node.httpPort());
      node.dataCollector().record("s-1", "bot",
              new SessionInput.Message("e1", null, "user", "hi", null, null),
              new SessionInput.Message("e2", null, "assistant", "hello", null, 100L),
              new SessionInput.Result("e3", null, "SUCCESS", null))
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      Await.until("bot has a coordinator", () -> http.get("/v1/training/bot").status(), s -> s == 200);

      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      Http.Response job = Await.until("job " + jobId + " ends",
          () -> http.get("/v1/jobs/" + jobId), r -> r.body().contains("\"status\":\"FAILED\""));
      String error = job.json().get("error").asText();
      assertTrue(error.startsWith("submission refused by the backend: Ray Jobs API POST /api/jobs/ at " + endpoint
          + " returned 404: there is no Ray Jobs API at agentscope.training.training-runner.trinity-endpoint;"
          + " point it at the Ray head's dashboard (port 8265 by default)"), error);
    }
  }
}
