package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the second new-user trial: the first job of an agent said in its lineage "the agent has no
 * stable version yet", while {@code GET /v1/models/{agentId}} answered v0 (the base model) as STABLE.
 * The note now says that no trained version is stable yet, only v0.
 */
class FirstJobStartNoteTest {

  @Test
  void theFirstJobSaysOnlyTheBaseModelIsStable(@TempDir Path dir) throws Exception {
    try (TrainingNode node = OneSessionNode.start(dir)) {
      Http http = new Http(node.httpPort());

      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      JsonNode job = Await.until("the job's dataset is exported", () -> http.get("/v1/jobs/" + jobId).json(),
          j -> j.hasNonNull("dataset"));
      String note = job.get("dataset").get("lineage").get("startNote").asText();
      assertEquals("start-from = stable, but no trained version of the agent is stable yet (only v0, the base "
          + "model): falling back to the base model", note, job.toString());
      assertFalse(note.contains("no stable version"), note);
      assertTrue(job.get("dataset").get("lineage").get("startFrom").asText().equals("base"), job.toString());
    }
  }
}
