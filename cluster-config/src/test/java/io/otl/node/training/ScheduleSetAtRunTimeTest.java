package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A scheduled trigger turned on by {@code PUT …/policy} fires its first slot. The schedule used to
 * be armed only by the tick that woke for that slot, from after it, so the slot (for a daily cron,
 * the whole day) passed without a job and {@code nextScheduledRun} jumped to the next day.
 */
class ScheduleSetAtRunTimeTest {
  private static final String AGENT = "cron-agent";

  @Test
  void theFirstSlotOfAScheduleSetByPutFires() throws Exception {
    Path work = TestDatabases.outputDir("schedule-set-at-run-time");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.read-side.rescan-interval", "1s",
            // nothing listens there: the job is not the point, and 8265 may be someone else's trainer
            "agentscope.training.training-runner.trinity-endpoint", "http://127.0.0.1:9"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      completeSession(http, AGENT, "cron-s1", 1);
      Await.until("the pool to hold 1", () -> {
        Http.Response r = http.get("/v1/training/" + AGENT);
        return r.status() == 200 ? r.json() : null;
      }, t -> t.get("poolSize").asInt() == 1);

      // One slot a day, a few seconds from now: a lost first slot means no job today.
      ZonedDateTime slot = ZonedDateTime.ofInstant(Instant.now().plusSeconds(4), ZoneOffset.UTC).withNano(0);
      String cron = slot.getSecond() + " " + slot.getMinute() + " " + slot.getHour() + " * * ?";
      Http.Response put = http.send("PUT", "/v1/training/" + AGENT + "/policy",
          "{\"trigger.type\": \"scheduled\", \"trigger.cron\": \"" + cron + "\"}");
      assertEquals(200, put.status(), put.body());
      assertEquals(slot.toInstant().toString(),
          http.get("/v1/training/" + AGENT).json().get("nextScheduledRun").asText());

      JsonNode jobs = Await.until("the scheduled job", () -> http.get("/v1/jobs?agentId=" + AGENT).json(),
          j -> j.get("jobs").size() == 1);
      assertEquals("scheduled", jobs.get("jobs").get(0).get("trigger").asText(), jobs.toString());
      String timeline = http.get("/v1/audit/coordinator/" + AGENT + "?limit=100").body();
      assertEquals(true, timeline.contains("\"slot\":\"" + slot.toInstant() + "\""), timeline);
    }
  }
}
