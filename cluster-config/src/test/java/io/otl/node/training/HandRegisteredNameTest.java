package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An operator registered {@code v1} by hand before the first job: the job's model, which the
 * coordinator names {@code v1}, must not be merged into that version (the hand-over once took
 * ModelVersion's ALREADY_EXISTS for success and the trained model was lost). It is registered as
 * {@code v2} with the job's artifact, the job and its audit say so, and {@code v1} is untouched;
 * a restart hands nothing over again.
 */
class HandRegisteredNameTest {
  private static final String AGENT = "hand-agent";
  private static SimulatedTrinity trinity;

  @BeforeAll
  static void startSimulator() throws Exception {
    trinity = SimulatedTrinity.start("otl-hand-name-");
  }

  @AfterAll
  static void stopSimulator() {
    if (trinity != null) trinity.close();
  }

  private static JsonNode version(JsonNode models, String name) {
    for (JsonNode v : models.get("versions")) {
      if (v.get("version").asText().equals(name)) return v;
    }
    return null;
  }

  /** Still the operator's model: same artifact and endpoint, no source job (its state may move on). */
  private static void assertUntouched(JsonNode before, JsonNode now) {
    assertEquals("file:///hand/v1", now.get("artifact").asText(), now.toString());
    assertEquals(before.get("artifact"), now.get("artifact"));
    assertEquals(before.get("endpoint"), now.get("endpoint"), now.toString());
    assertEquals(before.get("sourceJobId"), now.get("sourceJobId"), now.toString());
  }

  @Test
  void aTrainedModelWhoseNameIsTakenIsRegisteredUnderTheNextName() throws Exception {
    var config = trinity.node(5, Map.of());
    String jobId = "job-1-" + AGENT;
    JsonNode handV1;
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      Http.Response registered = http.post("/v1/models/" + AGENT + "/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///hand/v1\",\"endpoint\":\"http://infer/hand-v1\"}");
      assertEquals(201, registered.status(), registered.body());
      handV1 = version(http.get("/v1/models/" + AGENT).json(), "v1");

      for (int i = 0; i < 5; i++) TrainingLoopTest.completeSession(http, AGENT, "hand-s" + i, i);
      JsonNode job = Await.until("job 1 handed over", () -> {
        Http.Response r = http.get("/v1/jobs/" + jobId);
        return r.status() == 200 ? r.json() : null;
      }, j -> j.get("status").asText().equals("SUCCEEDED")
          && j.get("history").toString().contains("handed over to ModelVersion"));
      String checkpoint = job.get("outputModel").get("checkpointUri").asText();
      assertEquals("v2", job.get("outputModel").get("version").asText(), job.toString());
      assertTrue(job.get("history").toString().contains("handed over to ModelVersion as v2"), job.toString());

      JsonNode models = http.get("/v1/models/" + AGENT).json();
      JsonNode trained = version(models, "v2");
      assertFalse(trained == null, models.toString());
      assertEquals(checkpoint, trained.get("artifact").asText(), trained.toString());
      assertEquals(jobId, trained.get("sourceJobId").asText(), trained.toString());
      assertUntouched(handV1, version(models, "v1"));
      assertEquals(2, models.get("versions").size(), models.toString());

      String audit = http.get("/v1/audit/coordinator/" + AGENT).body();
      assertTrue(audit.contains("\"renamedFrom\":\"v1\""), audit);
    }
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      JsonNode job = http.get("/v1/jobs/" + jobId).json();
      assertEquals("v2", job.get("outputModel").get("version").asText(), job.toString());
      JsonNode models = http.get("/v1/models/" + AGENT).json();
      assertEquals(2, models.get("versions").size(), models.toString());
      assertUntouched(handV1, version(models, "v1"));
    }
  }
}
