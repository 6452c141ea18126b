package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A job folder's dataset card lists the {@code eval} config only when the folder has its held-out
 * file. A job whose pool had no held-out session (seen end to end: the first jobs of a small agent)
 * got a card naming {@code test.jsonl}, which was never written, so {@code datasets} listed an
 * {@code eval} config and then failed to load it ("Unable to find …/test.jsonl").
 */
class DatasetCardTest {
  private static final String AGENT = "card-agent";
  private static final double EVAL = 0.2;

  private static void session(Http http, String id) {
    Http.Response r = http.post("/v1/sessions/" + id + "/events", """
        {"agentId":"%s","events":[
          {"type":"message","role":"user","content":"question %s"},
          {"type":"message","role":"assistant","content":"answer %s","latencyMs":500},
          {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, id, id));
    assertEquals(202, r.status(), r.body());
  }

  private static List<String> ids(String prefix, int n, boolean heldOut) {
    return io.otl.node.testing.HeldOutIds.of(prefix, n, heldOut, EVAL);
  }

  private static JsonNode exported(Http http, String jobId) throws InterruptedException {
    return Await.until(jobId + " exported", () -> {
      Http.Response r = http.get("/v1/jobs/" + jobId);
      return r.status() == 200 ? r.json() : null;
    }, j -> j.get("dataset").isObject() && j.get("status").asText().equals("SUCCEEDED"));
  }

  @Test
  void theCardNamesTheEvalConfigOnlyWhenTheHeldOutFileExists() throws Exception {
    try (SimulatedTrinity trinity = SimulatedTrinity.start("otl-card-");
        TrainingNode node = TrainingNode.start(trinity.node(3, Map.of(
            "agentscope.training.training-runner.eval-fraction", EVAL)))) {
      Http http = new Http(node.httpPort());
      for (String id : ids("card-a-", 3, false)) session(http, id);
      Path folder1 = Path.of(exported(http, "job-1-" + AGENT).get("dataset").get("path").asText()).getParent();
      String card1 = Files.readString(folder1.resolve("README.md"));
      assertTrue(card1.contains("config_name: train") && card1.contains("path: train.jsonl"), card1);
      assertFalse(Files.exists(folder1.resolve("test.jsonl")), "nothing was held out");
      assertFalse(card1.contains("config_name: eval") || card1.contains("test.jsonl"), card1);

      // The held-out one first: the threshold of 3 then takes it with two others.
      for (String id : ids("card-b-", 1, true)) session(http, id);
      for (String id : ids("card-b-", 3, false)) session(http, id);
      JsonNode job2 = exported(http, "job-2-" + AGENT);
      Path folder2 = Path.of(job2.get("dataset").get("path").asText()).getParent();
      assertEquals(1, job2.get("dataset").get("lineage").get("evalCount").asInt(), job2.toString());
      assertTrue(Files.exists(folder2.resolve("test.jsonl")));
      String card2 = Files.readString(folder2.resolve("README.md"));
      assertTrue(card2.contains("config_name: eval") && card2.contains("path: test.jsonl"), card2);
    }
  }
}
