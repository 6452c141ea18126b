package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the new-user trial of the training loop: a grpo (ppo, distillation) job on the default
 * {@code trinity.gpu-per-node = 1} ran on the simulator, while Trinity-RFT refuses that config (its
 * explorer takes the only GPU: "Not enough GPUs for trainer"). The pre-flight now warns, naming the
 * setting, and still runs the job: the node cannot see the Ray cluster's GPUs.
 */
class RlOnOneGpuWarningTest {

  @Test
  void aGrpoTriggerOnOneGpuRunsAndWarnsNamingTheSetting(@TempDir Path dir) throws Exception {
    try (TrainingNode node = OneSessionNode.start(dir)) {
      Http http = new Http(node.httpPort());
      Http.Response put = http.send("PUT", "/v1/training/bot/policy",
          "{\"algorithm\":\"grpo\",\"hyperparams.reward-fn-type\":\"accuracy_reward\"}");
      assertEquals(200, put.status(), put.body());

      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      JsonNode answer = trigger.json();
      assertEquals("REQUESTED", answer.get("status").asText(), "a warning is no refusal: " + answer);
      assertEquals(0, answer.get("preflightFailures").size(), answer.toString());
      // One session in the pool is also less than a batch (the other warning, anOneSessionSftTrigger…).
      assertEquals(2, answer.get("preflightWarnings").size(), answer.toString());
      String warning = answer.get("preflightWarnings").get(0).asText();
      assertTrue(warning.startsWith("grpo needs at least 2 GPUs"), warning);
      assertTrue(warning.contains("training-runner.trinity.node-num x gpu-per-node = 1 x 1 = 1"), warning);
      assertTrue(warning.contains("Not enough GPUs for trainer"), warning);

      String jobId = answer.get("jobId").asText();
      JsonNode job = Await.until("the warned job is still exported and submitted",
          () -> http.get("/v1/jobs/" + jobId).json(), j -> j.hasNonNull("dataset"));
      assertEquals("grpo", job.get("algorithm").asText(), job.toString());
    }
  }

  @Test
  void anOneSessionSftTriggerWarnsOnlyThatItIsLessThanOneBatch(@TempDir Path dir) throws Exception {
    try (TrainingNode node = OneSessionNode.start(dir)) {
      Http http = new Http(node.httpPort());
      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      JsonNode warnings = trigger.json().get("preflightWarnings");
      assertEquals(1, warnings.size(), trigger.body());
      assertTrue(warnings.get(0).asText().startsWith("the pool holds 1 trajectory, at most 3 rows over 3 epochs"),
          trigger.body());
    }
  }
}
