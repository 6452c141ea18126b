package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The text timelines a user reads (GET /v1/audit/{kind}/{id}/timeline, the CLI's audit --format text)
 * never print "null": inputs sent without ids, a reasoning step without thought, feedback without
 * feedbackId, a manual job and a hand-registered version each leave fields empty.
 */
class NoNullInTimelinesTest {
  private static final String AGENT = "nulls-agent";

  @Test
  void noTimelineLineSaysNull() throws Exception {
    Path work = TestDatabases.outputDir("no-null-timelines");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.type", "manual",
            "agentscope.training.training-runner.trigger.min-samples", 1,
            "agentscope.training.agents." + AGENT + ".base-model", "file-model"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      Http.Response r = http.post("/v1/sessions/s-nulls/events", """
          {"agentId":"%s","events":[
            {"type":"message","role":"user","content":"where is my parcel?"},
            {"type":"reasoning","action":"error","observation":"java.io.IOException"},
            {"type":"reasoning"},
            {"type":"tool_call","toolName":"track","input":{"q":"x"}},
            {"type":"message","role":"assistant","content":"today"},
            {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT));
      assertEquals(202, r.status(), r.body());
      assertEquals(200, http.post("/v1/feedback/rate?sessionId=s-nulls&score=4", null).status());
      Await.until("the coordinator", () -> http.get("/v1/training/" + AGENT), x -> x.status() == 200);
      Http.Response trigger = http.post("/v1/training/" + AGENT + "/trigger", "");
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();
      assertEquals(201, http.post("/v1/models/" + AGENT + "/versions",
          "{\"version\":\"v1\",\"artifact\":\"s3://b/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}").status());
      Thread.sleep(2_000);
      for (String path : List.of("session/s-nulls", "coordinator/" + AGENT, "job/" + jobId, "model/" + AGENT)) {
        Http.Response t = http.get("/v1/audit/" + path + "/timeline");
        assertEquals(200, t.status(), path + ": " + t.body());
        t.body().lines().forEach(line -> assertTrue(!line.matches(".*\\bnull\\b.*") && !line.contains("#-1"),
            path + ": " + line + "\n" + t.body()));
        if (path.startsWith("session/")) {
          assertTrue(t.body().contains("reasoning (no index) (no thought): action error, observation java.io.IOException"),
              t.body());
          assertTrue(t.body().contains("reasoning (no index) (no thought, action or observation recorded)"), t.body());
        }
      }
    }
  }
}
