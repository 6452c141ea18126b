package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The audit's coordinator "as of T" answers the {@code nextScheduledRun} that GET
 * /v1/training/{agentId} answered then (design §7.1's training shape): it was left out, so "what
 * did the coordinator know at 02:00" could not say when it meant to train next.
 */
class CoordinatorAsOfNextRunTest {
  private static final String AGENT = "asof-cron-agent";

  @Test
  void theStateAsOfATimeNamesTheNextScheduledRunOfThatTime() throws Exception {
    Path work = TestDatabases.outputDir("coordinator-asof-next-run");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.type", "threshold",
            // nothing listens there: no job runs in this test
            "agentscope.training.training-runner.trinity-endpoint", "http://127.0.0.1:9"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      Http.Response put = http.send("PUT", "/v1/training/" + AGENT + "/policy",
          "{\"trigger.type\": \"scheduled\", \"trigger.cron\": \"0 0 2 1 1 ?\"}");
      assertEquals(200, put.status(), put.body());
      JsonNode live = http.get("/v1/training/" + AGENT).json();
      String next = live.get("nextScheduledRun").asText();
      assertFalse(live.get("nextScheduledRun").isNull(), live.toString());

      Http.Response now = http.get("/v1/audit/coordinator/" + AGENT + "?asOf=" + Instant.now());
      assertEquals(200, now.status(), now.body());
      assertEquals(next, now.json().get("stateAsOf").path("nextScheduledRun").asText(), now.body());

      Http.Response future = http.get("/v1/audit/coordinator/" + AGENT + "?asOf=2999-01-01T00:00:00Z");
      assertEquals(200, future.status(), future.body());
      assertEquals(next, future.json().get("stateAsOf").path("nextScheduledRun").asText(),
          "a future time is the current state: " + future.body());
    }
  }
}
