package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole loop over real HTTP and the PostgreSQL journal: completed sessions fill an agent's
 * pool, the threshold starts exactly one job, the dataset is exported, the job runs on the
 * Trinity simulator (Ray Jobs API over loopback), and the trained model becomes a version.
 */
class TrainingLoopTest {
  private static SimulatedTrinity trinity;
  private static TrinitySimulator simulator;
  private static Path work;

  @BeforeAll
  static void startSimulator() throws Exception {
    trinity = SimulatedTrinity.start("otl-loop-");
    simulator = trinity.simulator;
    work = trinity.work;
  }

  @AfterAll
  static void stopSimulator() {
    if (trinity != null) trinity.close();
  }

  private static Config node(Map<String, Object> overrides) {
    return trinity.node(5, overrides);
  }

  static void completeSession(Http http, String agent, String session, int i) {
    Http.Response r = http.post("/v1/sessions/" + session + "/events", """
        {"agentId":"%s","events":[
          {"type":"start","modelVersion":"base"},
          {"type":"message","role":"user","content":"question %d"},
          {"type":"message","role":"assistant","content":"answer %d","latencyMs":500},
          {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%d"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(agent, i, i, i));
    assertEquals(202, r.status(), r.body());
  }

  @Test
  void thresholdStartsExactlyOneJobWhoseModelBecomesAVersion() throws Exception {
    try (TrainingNode node = TrainingNode.start(node(Map.of()))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 4; i++) completeSession(http, "loop-agent", "loop-s" + i, i);
      JsonNode training = Await.until("the pool to hold 4", () -> okJson(http.get("/v1/training/loop-agent")),
          t -> t.get("poolSize").asInt() == 4);
      assertEquals(5, training.get("minSamples").asInt());
      assertTrue(training.get("activeJob").isNull(), training.toString());
      assertEquals(0, http.get("/v1/jobs?agentId=loop-agent").json().get("jobs").size());

      completeSession(http, "loop-agent", "loop-s4", 4);
      completeSession(http, "loop-agent", "loop-s0", 0); // a retry: must not count twice
      JsonNode job = Await.until("a succeeded job", () -> {
        JsonNode jobs = okJson(http.get("/v1/jobs?agentId=loop-agent"));
        return jobs == null || jobs.get("jobs").isEmpty() ? null : jobs.get("jobs").get(0);
      }, j -> j.get("status").asText().equals("SUCCEEDED")
          // The hand-over to ModelVersion is the job's last history entry, a moment after SUCCEEDED: compared
          // before it, the list and the single read below could see the job on either side of it.
          && j.get("history").get(j.get("history").size() - 1).get("detail").asText().startsWith("handed over"));
      String jobId = job.get("jobId").asText();
      assertEquals("threshold", job.get("trigger").asText().toLowerCase());
      assertEquals("sft", job.get("algorithm").asText());
      assertEquals(5, job.get("dataset").get("count").asInt());
      assertEquals(64, job.get("dataset").get("sha256").asText().length());
      assertTrue(Files.exists(Path.of(job.get("dataset").get("path").asText())));
      assertEquals("ray-jobs", job.get("backend").get("type").asText());
      assertFalse(job.get("outputModel").isNull(), job.toString());
      assertTrue(job.get("history").size() >= 4, job.toString());
      assertEquals(job, http.get("/v1/jobs/" + jobId).json());

      JsonNode models = Await.until("the trained version", () -> okJson(http.get("/v1/models/loop-agent")),
          m -> m.get("versions").size() == 1);
      assertEquals(jobId, models.get("versions").get(0).get("sourceJobId").asText());

      JsonNode stats = new Http(simulator.port()).get("/simulator/stats").json();
      assertEquals(1, stats.toString().split("\"" + jobId + "\"").length - 1, stats.toString());
      assertEquals(0, Await.until("the pool emptied", () -> okJson(http.get("/v1/training/loop-agent")),
          t -> t.get("poolSize").asInt() == 0).get("poolSize").asInt());
      assertEquals(1, http.get("/v1/jobs?agentId=loop-agent").json().get("jobs").size(), "exactly one job");
      assertEquals(1, http.get("/v1/jobs").json().get("jobs").size());
      Await.until("job metrics", () -> new com.fasterxml.jackson.databind.node.TextNode(http.get("/metrics").body()),
          m -> m.asText().contains("otl_jobs{agent=\"loop-agent\",state=\"SUCCEEDED\"} 1")
              && m.asText().contains("otl_training_pool_size{agent=\"loop-agent\"} 0"));
    }
  }

  @Test
  void manualTriggerCancellationAndUnknownJobs() throws Exception {
    try (TrainingNode node = TrainingNode.start(node(Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000)))) {
      Http http = new Http(node.httpPort());
      assertEquals(404, http.get("/v1/training/manual-agent").status());
      assertEquals(404, http.post("/v1/training/manual-agent/trigger", null).status());
      for (int i = 0; i < 3; i++) completeSession(http, "manual-agent", "manual-s" + i, i);
      Await.until("the pool to hold 3", () -> okJson(http.get("/v1/training/manual-agent")),
          t -> t.get("poolSize").asInt() == 3);
      Http.Response trigger = http.post("/v1/training/manual-agent/trigger", null);
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      Http.Response again = http.post("/v1/training/manual-agent/trigger", null);
      assertEquals(409, again.status(), again.body());
      assertEquals("conflict", again.json().get("error").asText());
      Http.Response cancel = http.post("/v1/jobs/" + jobId + "/cancel", null);
      assertEquals(202, cancel.status(), cancel.body());
      JsonNode cancelled = Await.until("the cancelled job", () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> j.get("status").asText().equals("CANCELLED"));
      Http.Response twice = http.post("/v1/jobs/" + jobId + "/cancel", null);
      assertEquals(409, twice.status(), cancelled.toString());
      // what to do about it, not just the state: a retried cancel that had succeeded reads as done
      assertEquals("job " + jobId + " is CANCELLED: it has ended, there is nothing to cancel (only a REQUESTED,"
          + " SUBMITTED or RUNNING job can be cancelled)", twice.json().get("message").asText());
      assertEquals(404, http.get("/v1/jobs/job-99-manual-agent").status());
      assertEquals(404, http.get("/v1/jobs/not-a-job-id").status());
      assertEquals(400, http.get("/v1/jobs?status=DONE").status());
      assertEquals(1, http.get("/v1/jobs?agentId=manual-agent&status=CANCELLED").json().get("jobs").size());
    }
  }

  private static JsonNode okJson(Http.Response r) {
    return r.status() == 200 ? r.json() : null;
  }
}
