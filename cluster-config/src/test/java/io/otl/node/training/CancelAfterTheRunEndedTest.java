package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * A cancel that reaches Ray after the job's run has ended (it finished between two polls, trial
 * t55 met it with the simulator's 15 s run and the node's 10 s poll): Ray answers the stop with
 * {@code {"stopped": false}}. The node took that for a stop and recorded the job CANCELLED "stopped
 * on the backend", while Ray said SUCCEEDED: the trained model was never handed over. Now the job
 * keeps how it really ended, with its model as a candidate, and the cancel request in its history.
 */
class CancelAfterTheRunEndedTest {

  @Test
  void aJobThatSucceededBeforeItsStopArrivedStaysSucceededWithItsModel() throws Exception {
    Path work = TestDatabases.outputDir("cancel-after-end");
    ActorTestKit simulatorSystem = ActorTestKit.create("simulator");
    // Runs that end only when told to (POST /simulator/jobs/<id>/finish), so the test decides when.
    TrinitySimulator simulator = TrinitySimulator.start(simulatorSystem.system(), SimulatorSettings.defaults()
        .withPort(0).withWorkDir(work.resolve("simulator")).withDurations(Duration.ofMillis(100), Duration.ofDays(1)));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "manual",
            // Not polled before the cancel: the run ends unseen, as between two polls.
            "agentscope.training.training-runner.poll-interval", "1h",
            "agentscope.training.training-runner.dataset-dir", work.resolve("datasets").toString(),
            "agentscope.training.training-runner.checkpoint-root-dir", work.resolve("checkpoints").toString(),
            "agentscope.training.model-update.auto-deploy", false,
            "agentscope.training.read-side.rescan-interval", "1s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 3; i++) {
        int n = i;
        // A node just started on a busy machine may answer its first writes 503 (retry them, api.md).
        Await.until("session " + n + " stored", () -> storedOrRetry(http, n), ok -> ok);
      }
      Await.until("the pool to hold 3", () -> okJson(http.get("/v1/training/late-cancel")),
          t -> t.get("poolSize").asInt() == 3);
      Http.Response trigger = http.post("/v1/training/late-cancel/trigger", null);
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      Await.until("the job submitted", () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> j.get("status").asText().equals("SUBMITTED"));

      Http ray = new Http(simulator.port());
      Await.until("the run started on Ray", () -> okJson(ray.get("/api/jobs/" + jobId)),
          j -> j.get("status").asText().equals("RUNNING"));
      assertEquals(200, ray.post("/simulator/jobs/" + jobId + "/finish", null).status());
      assertEquals("SUCCEEDED", ray.get("/api/jobs/" + jobId).json().get("status").asText());

      Http.Response cancel = http.post("/v1/jobs/" + jobId + "/cancel", null);
      assertEquals(202, cancel.status(), cancel.body());
      JsonNode ended = Await.until("the job to end", () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(j.get("status").asText())
              && !j.get("outputModel").isNull() == j.get("status").asText().equals("SUCCEEDED"));
      assertEquals("SUCCEEDED", ended.get("status").asText(), ended.toString());
      assertTrue(ended.get("outputModel").get("checkpointUri").asText().contains(jobId), ended.toString());
      String history = ended.get("history").toString();
      assertTrue(history.contains("cancel requested"), history);
      assertFalse(history.contains("stopped on the backend"), history);

      JsonNode candidate = Await.until("the job's model registered", () -> okJson(http.get("/v1/models/late-cancel")),
          m -> m.get("versions").findValuesAsText("sourceJobId").contains(jobId));
      assertTrue(candidate.toString().contains(jobId), candidate.toString());
    } finally {
      simulator.stop();
      simulatorSystem.shutdownTestKit();
    }
  }

  private static boolean storedOrRetry(Http http, int i) {
    Http.Response r = http.post("/v1/sessions/late-cancel-s" + i + "/events", """
        {"agentId":"late-cancel","events":[
          {"type":"message","role":"user","content":"question %d"},
          {"type":"message","role":"assistant","content":"answer %d","latencyMs":500},
          {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%d"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(i, i, i));
    assertTrue(r.status() == 202 || r.status() == 503, r.body());
    return r.status() == 202;
  }

  private static JsonNode okJson(Http.Response r) {
    return r.status() == 200 ? r.json() : null;
  }
}
