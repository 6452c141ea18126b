package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/audit/job/{jobId}/timeline} (and {@code audit job <id>}) shows the job's own events,
 * but its pool figures are the agent's: the timeline built the coordinator's state from the job's
 * events alone, so "→ pool" counted only what the job took back and the closing line said
 * "now: pool 0, 1 jobs" for an agent whose pool held 61 trajectories.
 */
class JobTimelinePoolTest {
  private static final String AGENT = "timeline-agent";

  @Test
  void aJobsTimelineCountsTheAgentsWholePool() throws Exception {
    Path work = TestDatabases.outputDir("job-timeline");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.type", "manual",
            "agentscope.training.training-runner.trigger.min-samples", 2,
            "agentscope.training.read-side.rescan-interval", "1s",
            "agentscope.training.agents." + AGENT + ".base-model", "file-model"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 3; i++) completeSession(http, AGENT, "timeline-a" + i, i);
      awaitPool(http, 3);
      Http.Response trigger = http.post("/v1/training/" + AGENT + "/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      for (int i = 0; i < 2; i++) completeSession(http, AGENT, "timeline-b" + i, i);
      awaitPool(http, 2);

      String timeline = http.get("/v1/audit/job/" + jobId + "/timeline").body();
      assertTrue(timeline.contains("REQUESTED by the manual trigger"), timeline);
      assertTrue(timeline.contains(": 3 trajectories"), timeline);
      assertTrue(timeline.lines().noneMatch(l -> l.contains("pooled ")), "only the job's own events: " + timeline);
      assertTrue(timeline.contains("now: job " + jobId + " "), timeline);
      assertTrue(timeline.contains("its agent's pool 2"), timeline);
    }
  }

  private static void awaitPool(Http http, int size) throws InterruptedException {
    Await.until("pool of " + size, () -> {
      Http.Response r = http.get("/v1/training/" + AGENT);
      return r.status() == 200 ? r.json() : null;
    }, t -> t.get("poolSize").asInt() == size);
  }
}
