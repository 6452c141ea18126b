package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the second new-user trial: a manual trigger while a version canaried answered 409 "no
 * rollout in progress: v2 is CANARY; one rollout at a time, …", the pre-flight item's name followed by
 * what contradicts it. The answer now says what was found.
 */
class TriggerDuringRolloutAnswerTest {

  @Test
  void aTriggerDuringACanarySaysARolloutIsInProgress(@TempDir Path dir) throws Exception {
    try (TrainingNode node = OneSessionNode.start(dir)) {
      Http http = new Http(node.httpPort());
      // No base model in this node: the first version is the stable, the second canaries against it.
      for (String v : new String[] {"v1", "v2"}) {
        Http.Response reg = http.post("/v1/models/bot/versions",
            "{\"version\":\"" + v + "\",\"artifact\":\"file:///m/" + v + "\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
        assertEquals(201, reg.status(), reg.body());
      }
      assertEquals("CANARY", http.get("/v1/models/bot").json().get("versions").get(1).get("state").asText());

      Http.Response trigger = http.post("/v1/training/bot/trigger", "");
      assertEquals(409, trigger.status(), trigger.body());
      String message = trigger.json().get("message").asText();
      assertTrue(message.startsWith("a rollout is in progress: v2 is CANARY; one rollout at a time"), message);
      assertFalse(message.contains("no rollout in progress"), message);
      assertEquals(0, http.get("/v1/jobs?agentId=bot").json().get("jobs").size(), "no job is recorded");
    }
  }
}
