package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the second new-user trial: the logs of a grpo job that failed its pre-flight (no reward
 * function) said "was not submitted to the trainer yet: no logs so far", as if they might still come.
 * And the pre-flight failure named only the file's key, though the agent's policy sets it too (as the
 * distillation teacher's failure says).
 */
class LogsOfAJobNeverSubmittedTest {

  @Test
  void aJobThatFailedItsPreflightSaysItWillHaveNoLogs(@TempDir Path dir) throws Exception {
    try (TrainingNode node = OneSessionNode.start(dir)) {
      Http http = new Http(node.httpPort());
      Http.Response policy = http.send("PUT", "/v1/training/bot/policy", "{\"algorithm\":\"grpo\"}");
      assertEquals(200, policy.status(), policy.body());

      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      assertEquals("FAILED", trigger.json().get("status").asText(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      String failure = trigger.json().get("preflightFailures").get(0).asText();
      assertTrue(failure.startsWith("no reward source for grpo: set agentscope.training.training-runner.hyperparams"
          + ".reward-fn-type (or the agent's hyperparams.reward-fn-type, at run time with PUT /v1/training/{agentId}/policy) to the Trinity reward function"), failure);

      Http.Response logs = http.get("/v1/jobs/" + jobId + "/logs");
      assertEquals(200, logs.status(), logs.body());
      assertEquals(0, logs.json().get("totalLines").asInt(), logs.body());
      String note = logs.json().get("note").asText();
      assertTrue(note.startsWith("job " + jobId + " is FAILED and was never submitted to the trainer: it has no logs"),
          note);
    }
  }
}
