package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A node whose trinity-endpoint is a port nothing listens on (a new user's first mistake): the
 * submission fails "connection refused" and is retried; cancelling the job sends the stop a bounded
 * number of times, then ends the job CANCELLED with what is unknown, and the agent's next trigger
 * is accepted instead of answering 409 until the trainer comes up.
 */
class CancelUnreachableTrainerTest {

  @Test
  void cancellingAJobTheTrainerNeverAcknowledgedCompletesAndTheNextTriggerIsAccepted() throws Exception {
    int deadPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort();
    }
    Path work = TestDatabases.outputDir("cancel-unreachable");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trinity-endpoint", "http://127.0.0.1:" + deadPort,
            "agentscope.training.training-runner.trigger.type", "manual",
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.training-runner.submit-retry.min-backoff", "50ms",
            "agentscope.training.training-runner.submit-retry.max-backoff", "200ms",
            "agentscope.training.read-side.rescan-interval", "1s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      completeSession(http, "dead-trainer", "dead-s0", 0);
      Await.until("the pool to hold 1", () -> okJson(http.get("/v1/training/dead-trainer")),
          t -> t.get("poolSize").asInt() == 1);
      Http.Response trigger = http.post("/v1/training/dead-trainer/trigger", null);
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      Await.until("a refused submission", () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> j.get("status").asText().equals("REQUESTED") && j.get("history").toString().contains("failed"));

      Http.Response cancel = http.post("/v1/jobs/" + jobId + "/cancel", null);
      assertEquals(202, cancel.status(), cancel.body());
      JsonNode cancelled = Await.until("the cancelled job", () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> j.get("status").asText().equals("CANCELLED"));
      String error = cancelled.get("error").asText();
      assertTrue(error.startsWith("cancelled without the backend's confirmation"), cancelled.toString());
      assertTrue(error.contains(jobId), error);
      JsonNode history = cancelled.get("history");
      assertTrue(history.get(history.size() - 1).get("detail").asText().contains("failed stop attempts"),
          history.toString());
      assertTrue(okJson(http.get("/v1/training/dead-trainer")).get("activeJob").isNull());

      completeSession(http, "dead-trainer", "dead-s1", 1);
      Await.until("the pool to hold 1 again", () -> okJson(http.get("/v1/training/dead-trainer")),
          t -> t.get("poolSize").asInt() == 1);
      Http.Response next = http.post("/v1/training/dead-trainer/trigger", null);
      assertEquals(202, next.status(), next.body());
      assertNotEquals(jobId, next.json().get("jobId").asText());
    }
  }

  private static JsonNode okJson(Http.Response r) {
    return r.status() == 200 ? r.json() : null;
  }
}
