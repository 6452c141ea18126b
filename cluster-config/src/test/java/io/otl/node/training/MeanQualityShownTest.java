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
 * {@code GET /v1/training/{agentId}} showed the pool's {@code meanQuality} with the binary noise of its sum:
 * two sessions of quality 0.8 and three of 1.0 read {@code 0.9200000000000002}, where every other number of the
 * API reads as the decimal it is (a stable's share of a 70 % step is 0.3, not 0.30000000000000004).
 */
class MeanQualityShownTest {
  private static final String AGENT = "mean-bot";

  @TempDir
  Path dir;

  @Test
  void theMeanQualityReadsAsTheDecimalItIs() throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());
      for (int i = 1; i <= 5; i++) {
        String session = "s-" + i;
        Http.Response events = http.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"" + AGENT
            + "\",\"events\":[{\"type\":\"start\"},{\"type\":\"message\",\"role\":\"user\",\"content\":\"What is 7 times"
            + " 6, exactly?\"},{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"It is 42, the product of 7 and"
            + " 6.\"},{\"type\":\"result\",\"status\":\"success\"}]}");
        assertEquals(202, events.status(), events.body());
        if (i > 2) { // a rating of 4 makes the quality 1.0; without one it is 0.8
          Http.Response rated = http.post("/v1/sessions/" + session + "/feedback", "{\"kind\":\"RATING\",\"value\":4}");
          assertEquals(202, rated.status(), rated.body());
        }
      }
      for (int i = 1; i <= 5; i++) {
        String session = "s-" + i;
        double expected = i > 2 ? 1.0 : 0.8;
        Await.until(session + " has its quality score", () -> http.get("/v1/sessions/" + session).json()
            .path("qualityScore").asDouble(), q -> q == expected);
      }
      String training = Await.until("the pool holds the five sessions with their qualities",
          () -> http.get("/v1/training/" + AGENT).body(),
          body -> body.contains("\"poolSize\":5") && body.contains("\"meanQuality\":0.9"));
      assertEquals(true, training.contains("\"meanQuality\":0.92,"), training);
    }
  }
}
