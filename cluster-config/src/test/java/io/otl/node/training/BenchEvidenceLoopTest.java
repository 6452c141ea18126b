package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.persistence.export.HeldOut;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The offline gate on bench evidence (issue #16 item 3, ray-jobs) end to end over real HTTP, the
 * PostgreSQL journal and the Trinity simulator: every job's entrypoint chains a Trinity bench of
 * its candidate and of the checkpoint it started from (the stable) on its held-out set, and the
 * gate compares those two scores of the same run. A candidate better than the stable passes, a
 * worse one is REJECTED, one whose held-out set is empty lands in NO_EVIDENCE saying so; all of it
 * survives a restart.
 */
class BenchEvidenceLoopTest {
  private static final String AGENT = "bench-agent";
  private static final double EVAL = 0.2;
  private static SimulatedTrinity trinity;
  private static TrinitySimulator simulator;
  private static Path work;

  @BeforeAll
  static void startSimulator() throws Exception {
    trinity = SimulatedTrinity.start("otl-bench-");
    simulator = trinity.simulator;
    work = trinity.work;
  }

  @AfterAll
  static void stopSimulator() {
    if (trinity != null) trinity.close();
  }

  private static Config node() {
    return trinity.node(12, Map.of("agentscope.training.training-runner.eval-fraction", EVAL));
  }

  private static void session(Http http, String id, String question) {
    Http.Response r = http.post("/v1/sessions/" + id + "/events", """
        {"agentId":"%s","events":[
          {"type":"start","modelVersion":"base"},
          {"type":"message","role":"user","content":"%s"},
          {"type":"message","role":"assistant","content":"answer to %s","latencyMs":500},
          {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%s"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, question, question, id));
    assertEquals(202, r.status(), r.body());
  }

  /** 12 sessions with {@code heldOut} of them in the held-out set. */
  private static void sessions(Http http, String prefix, int heldOut) {
    List<String> ids = new ArrayList<>();
    int train = 0;
    int held = 0;
    for (int i = 0; ids.size() < 12; i++) {
      boolean h = HeldOut.isHeldOut(prefix + i, EVAL);
      if (h && held < heldOut) {
        held++;
        ids.add(prefix + i);
      } else if (!h && train < 12 - heldOut) {
        train++;
        ids.add(prefix + i);
      }
    }
    for (String id : ids) session(http, id, "question " + id);
  }

  private static JsonNode job(Http http, String jobId) throws InterruptedException {
    return Await.until(jobId + " succeeded", () -> {
      Http.Response r = http.get("/v1/jobs/" + jobId);
      return r.status() == 200 ? r.json() : null;
    }, j -> j.get("status").asText().equals("SUCCEEDED"));
  }

  private static JsonNode version(JsonNode models, String v) {
    if (models == null || !models.has("versions")) return null;
    for (JsonNode n : models.get("versions")) if (n.get("version").asText().equals(v)) return n;
    return null;
  }

  private static JsonNode versionIn(Http http, String v, String state) throws InterruptedException {
    return Await.until(v + " " + state, () -> version(http.get("/v1/models/" + AGENT).json(), v),
        n -> n != null && n.get("state").asText().equals(state));
  }

  /** Promotes {@code v} (READY → CANARY, CANARY → STABLE) until it is the stable. */
  private static void makeStable(Http http, String v) throws InterruptedException {
    Await.until(v + " stable", () -> {
      JsonNode models = http.get("/v1/models/" + AGENT).json();
      JsonNode n = version(models, v);
      if (n != null && !n.get("state").asText().equals("STABLE")) {
        http.post("/v1/models/" + AGENT + "/versions/" + v + "/promote", null);
      }
      return models;
    }, m -> v.equals(m.path("stable").asText()));
  }

  private static String reasons(JsonNode version) {
    StringBuilder all = new StringBuilder();
    version.get("history").forEach(h -> all.append(h.path("reason").asText("")).append('\n'));
    return all.toString();
  }

  @Test
  void gateComparesCandidateAndStableOfTheSameBenchRun() throws Exception {
    Config config = node();
    String job2 = "job-2-" + AGENT;
    String job3 = "job-3-" + AGENT;
    String job4 = "job-4-" + AGENT;
    JsonNode job2Output;
    String v3Reasons;
    String v4Reasons;
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      sessions(http, "a-", 2);
      job(http, "job-1-" + AGENT);
      makeStable(http, "v1");

      // Better than the stable: v1's checkpoint scores the defaults (0.82), the candidate 0.95.
      simulator.setQuality(job2, Map.of("task-success-rate", 0.95));
      sessions(http, "b-", 2);
      JsonNode j2 = job(http, job2);
      job2Output = j2.get("outputModel");
      JsonNode metrics = job2Output.get("metrics");
      assertEquals(0.95, metrics.get("task-success-rate").asDouble(), metrics.toString());
      assertEquals(0.82, metrics.get("bench-stable.task-success-rate").asDouble(), metrics.toString());
      assertEquals(2, metrics.get("bench-eval-count").asInt(), metrics.toString());
      Path dataset = Path.of(j2.get("dataset").get("path").asText());
      // Beside the job's data folder (<dataset-dir>/<jobId>/train.jsonl), not in it.
      assertTrue(Files.readString(dataset.getParent().resolveSibling(job2 + ".bench.yaml")).contains("mode: bench"));
      JsonNode scores = new ObjectMapper().readTree(
          work.resolve("checkpoints").resolve(AGENT).resolve(job2).resolve("bench_scores.json").toFile());
      assertEquals(j2.get("dataset").get("lineage").get("evalSha256").asText(), scores.get("evalSha256").asText(),
          "the bench scored exactly the job's held-out file");
      assertTrue(scores.get("stableModel").asText().contains("job-1-" + AGENT), scores.toString());
      JsonNode v2 = Await.until("v2 through the gate", () -> version(http.get("/v1/models/" + AGENT).json(), "v2"),
          n -> n != null && List.of("READY", "CANARY", "STABLE").contains(n.get("state").asText()));
      assertTrue(reasons(v2).contains("same-run bench score") || reasons(v2).contains("offline gate passed"), v2.toString());
      makeStable(http, "v2");

      // Worse than the stable v2 on the same run: rejected on bench evidence.
      simulator.setQuality(job3, Map.of("task-success-rate", 0.5));
      sessions(http, "c-", 2);
      job(http, job3);
      v3Reasons = reasons(versionIn(http, "v3", "REJECTED"));
      assertTrue(v3Reasons.contains("task-success-rate: 0.5000 is below stable v2 same-run bench score 0.9500"),
          v3Reasons);

      // Nothing held out: no bench, no evidence, and the reason says why.
      sessions(http, "d-", 0);
      JsonNode j4 = job(http, job4);
      assertEquals(0, j4.get("outputModel").get("metrics").get("bench-eval-count").asInt(), j4.toString());
      v4Reasons = reasons(versionIn(http, "v4", "NO_EVIDENCE"));
      assertTrue(v4Reasons.contains("held-out eval set of job " + job4 + " is empty"), v4Reasons);
      assertEquals("v2", http.get("/v1/models/" + AGENT).json().get("stable").asText());
    }
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      JsonNode models = http.get("/v1/models/" + AGENT).json();
      assertEquals("v2", models.get("stable").asText());
      assertEquals("REJECTED", version(models, "v3").get("state").asText());
      assertEquals(v3Reasons, reasons(version(models, "v3")), "gate outcome rebuilt from the journal");
      assertEquals("NO_EVIDENCE", version(models, "v4").get("state").asText());
      assertEquals(v4Reasons, reasons(version(models, "v4")));
      assertEquals(job2Output, http.get("/v1/jobs/" + job2).json().get("outputModel"));
    }
  }
}
