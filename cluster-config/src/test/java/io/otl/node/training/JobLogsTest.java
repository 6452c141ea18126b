package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * GET /v1/jobs/{jobId}/logs through a real node (H2 journal) and the Trinity simulator's Ray Jobs
 * API over loopback: the trainer's lines, paged by line, with its step/loss figures parsed.
 */
class JobLogsTest {

  @Test
  void aJobsRayLogsArePagedByLineWithStepLossPoints() throws Exception {
    Path work = TestDatabases.outputDir("job-logs");
    ActorTestKit kit = ActorTestKit.create("logs-simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(work.resolve("simulator")).withDurations(Duration.ofMillis(100), Duration.ofMillis(300)));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 2,
            "agentscope.training.training-runner.poll-interval", "200ms",
            "agentscope.training.read-side.rescan-interval", "1s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 2; i++) completeSession(http, "logs-agent", "logs-s" + i, i);
      JsonNode job = Await.until("a succeeded job", () -> {
        Http.Response r = http.get("/v1/jobs?agentId=logs-agent");
        return r.status() != 200 || r.json().get("jobs").isEmpty() ? null : r.json().get("jobs").get(0);
      }, j -> j.get("status").asText().equals("SUCCEEDED"));
      String jobId = job.get("jobId").asText();

      Http.Response all = http.get("/v1/jobs/" + jobId + "/logs");
      assertEquals(200, all.status(), all.body());
      JsonNode page = all.json();
      assertEquals(jobId, page.get("jobId").asText());
      assertEquals("ray-jobs", page.get("backend").asText());
      int total = page.get("totalLines").asInt();
      assertEquals(total, page.get("lines").size(), page.toString());
      assertEquals(total, page.get("nextOffset").asInt());
      assertTrue(page.get("lines").get(0).asText().contains("submitted to the Trinity simulator"), page.toString());
      assertTrue(page.get("note").isNull(), page.toString());
      JsonNode points = page.get("points");
      assertEquals(3, points.size(), page.toString());
      for (int step = 1; step <= 3; step++) {
        assertEquals(step, points.get(step - 1).get("step").asLong());
        assertEquals(1.0 / (step + 1), points.get(step - 1).get("loss").asDouble(), 1e-4);
      }

      JsonNode second = http.get("/v1/jobs/" + jobId + "/logs?offset=1&limit=2").json();
      assertEquals(2, second.get("lines").size(), second.toString());
      assertEquals(page.get("lines").get(1), second.get("lines").get(0));
      assertEquals(page.get("lines").get(2), second.get("lines").get(1));
      assertEquals(3, second.get("nextOffset").asInt());
      assertEquals(total, second.get("totalLines").asInt());
      JsonNode past = http.get("/v1/jobs/" + jobId + "/logs?offset=" + (total + 5)).json();
      assertEquals(0, past.get("lines").size(), past.toString());

      for (String bad : new String[] {"limit=abc", "limit=5000", "offset=-1"}) {
        Http.Response r = http.get("/v1/jobs/" + jobId + "/logs?" + bad);
        assertEquals(400, r.status(), bad + ": " + r.body());
        assertTrue(r.json().get("message").asText().contains(bad.substring(0, bad.indexOf('='))), r.body());
      }
      // Optional query parameters sent empty (design §7.1 writes the filters ?agentId=&status=) are
      // not sent: no filter, the default page; a value that is given is still checked.
      JsonNode jobs = http.get("/v1/jobs").json();
      assertEquals(1, jobs.get("jobs").size(), jobs.toString());
      assertEquals(jobs, http.get("/v1/jobs?agentId=&status=").json());
      assertEquals(jobs, http.get("/v1/jobs?agentId=logs-agent&status=").json());
      assertEquals(jobs, http.get("/v1/jobs?agentId=&status=SUCCEEDED").json());
      assertEquals(0, http.get("/v1/jobs?agentId=&status=RUNNING").json().get("jobs").size());
      assertEquals(400, http.get("/v1/jobs?agentId=&status=BOGUS").status());
      JsonNode emptyParams = http.get("/v1/jobs/" + jobId + "/logs?offset=&limit=").json();
      assertEquals(page.get("lines"), emptyParams.get("lines"));
      assertEquals(0, emptyParams.get("offset").asInt());
      Http.Response audit = http.get("/v1/audit/job/" + jobId + "?asOf=&after=&limit=");
      assertEquals(200, audit.status(), audit.body());
      assertEquals(http.get("/v1/audit/job/" + jobId).json(), audit.json());
      assertTrue(!audit.json().has("stateAsOf"), "an empty asOf asks for no state: " + audit.body());

      Http.Response unknown = http.get("/v1/jobs/job-99-logs-agent/logs");
      assertEquals(404, unknown.status(), unknown.body());
      assertEquals("not_found", unknown.json().get("error").asText());
      assertEquals(404, http.get("/v1/jobs/job-1-nobody-here/logs").status());
      assertEquals(404, http.get("/v1/jobs/not-a-job/logs").status());
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }
}
