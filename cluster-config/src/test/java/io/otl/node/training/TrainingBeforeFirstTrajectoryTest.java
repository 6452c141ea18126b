package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What docs/api.md says a user sees before an agent's first completed trajectory (found by the
 * new-user trials: sessions were stored, yet the training view answered 404): the coordinator
 * knows the agent only once a trajectory completes (or a policy is set for it).
 */
class TrainingBeforeFirstTrajectoryTest {
  private static final String EXPECTED = "agent early-bot has no training coordinator yet (no completed trajectory)";

  @Test
  void theTrainingRoutesAnswer404UntilTheFirstTrajectoryCompletes(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());
      assertEquals(202, http.post("/v1/sessions/s-early/events", "{\"agentId\":\"early-bot\",\"events\":["
          + "{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"hi\"}]}").status());
      assertEquals(200, http.get("/v1/sessions/s-early").status(), "the session is stored");
      for (Http.Response r : new Http.Response[] {http.get("/v1/training/early-bot"),
          http.post("/v1/training/early-bot/trigger", null), http.get("/v1/training/early-bot/policy")}) {
        assertEquals(404, r.status(), r.body());
        assertEquals(EXPECTED, r.json().get("message").asText());
      }
      assertEquals(0, http.get("/v1/jobs?agentId=early-bot").json().get("jobs").size());

      assertEquals(202, http.post("/v1/sessions/s-early/events", "{\"agentId\":\"early-bot\",\"events\":["
          + "{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}").status());
      Http.Response known = Await.until("the coordinator of early-bot", () -> http.get("/v1/training/early-bot"),
          r -> r.status() == 200);
      assertEquals(1, known.json().get("poolSize").asInt(), known.body());
    }
  }
}
