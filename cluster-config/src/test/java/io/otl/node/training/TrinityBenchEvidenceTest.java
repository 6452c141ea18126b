package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.core.model.EvalEvidence;
import io.otl.core.training.OutputModel;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.PythonVenv;
import io.otl.node.trinity.CheckpointLocator;
import io.otl.persistence.export.HeldOut;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bench evidence from real Trinity output (issue #16 item 3): Trinity's bench leaves its scores only
 * in its tensorboard monitor, and the converter the ray-jobs backend chains after it ({@code
 * io/otl/node/trinity/bench_scores.py}) turns them into bench_scores.json. The monitor output here
 * is written by torch.utils.tensorboard's SummaryWriter exactly as Trinity's TensorboardMonitor and
 * explorer.benchmark() write it (cluster-config/src/test/python/trinity_bench_monitor.py, venv
 * target/venv-tensorboard from scripts/python-tensorboard-requirements.txt); the converter is the
 * script and command line the backend wrote into the job's entrypoint, and the node's gate decides
 * on the result.
 */
class TrinityBenchEvidenceTest {
  private static final String AGENT = "tb-agent";
  private static final double EVAL = 0.2;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, List<Double>> CANDIDATE_ACCURACY = new ConcurrentHashMap<>();
  private static final List<Double> STABLE_ACCURACY = List.of(1.0, 0.0);
  private static Path python;
  private static SimulatedTrinity trinity;
  private static TrinitySimulator simulator;
  private static Path work;

  @BeforeAll
  static void start() throws Exception {
    python = PythonVenv.python("scripts/python-tensorboard-requirements.txt", "venv-tensorboard", "OTL_REQUIRE_PYTHON");
    trinity = SimulatedTrinity.start("otl-tb-bench-");
    simulator = trinity.simulator;
    work = trinity.work;
  }

  @AfterAll
  static void stop() {
    if (trinity != null) trinity.close();
  }

  private static Path script(String name) {
    return PythonVenv.repoRoot().resolve("cluster-config/src/test/python").resolve(name);
  }

  /** Trinity's bench monitor output: per step, the per-task accuracies the reward function gave. */
  private static void trinityBench(Path jobDir, String taskset, Map<String, Object> spec) throws Exception {
    Path specFile = Files.createTempFile(work, "bench-spec-", ".json");
    JSON.writeValue(specFile.toFile(), spec);
    PythonVenv.Result r = PythonVenv.run(python, script("trinity_bench_monitor.py"),
        List.of(jobDir.toString(), taskset, specFile.toString()), work, 300);
    assertEquals(0, r.exitCode(), r.output());
  }

  /** Runs a converter command line as Ray's shell would, with the test venv's python for python3. */
  private static PythonVenv.Result convert(List<String> command) throws Exception {
    assertEquals("python3", command.get(0), command.toString());
    return PythonVenv.run(python, Path.of(command.get(1)), command.subList(2, command.size()), work, 300);
  }

  @Test
  void converterTurnsTrinityTensorboardScoresIntoTheGatesEvidence(@TempDir Path dir) throws Exception {
    Path jobDir = dir.resolve("agent").resolve("job-7");
    Files.createDirectories(jobDir.resolve("global_step_2/actor/huggingface"));
    Files.createDirectories(jobDir.resolve("global_step_4/actor/huggingface"));
    Path eval = dir.resolve("job-7.eval.jsonl");
    Files.writeString(eval, "{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n\n{\"prompt\":\"c\"}\n");
    // detailed_stats: Trinity tags bench/<taskset>/accuracy/mean; the training run's own explorer
    // tags (rollout/*, eval/*) share the monitor folder and must not count.
    trinityBench(jobDir, "agent_eval", Map.of("detailed", true, "training", true, "steps", Map.of(
        "0", Map.of("accuracy", List.of(1.0, 0.0, 0.0)),
        "2", Map.of("accuracy", List.of(0.0, 0.0, 0.0)),
        "4", Map.of("accuracy", List.of(1.0, 1.0, 0.0)))));
    Path converter = PythonVenv.repoRoot().resolve("cluster-config/src/main/resources/io/otl/node/trinity/bench_scores.py");
    PythonVenv.Result r = convert(List.of("python3", converter.toString(), "--job-dir", jobDir.toString(),
        "--taskset", "agent_eval", "--eval-file", eval.toString(), "--stable-model", "/ckpt/job-6/hf",
        "--metric", "task-success-rate=accuracy"));
    assertEquals(0, r.exitCode(), r.output());

    JsonNode scores = JSON.readTree(jobDir.resolve(CheckpointLocator.BENCH_SCORES_FILE).toFile());
    assertEquals(4, scores.get("candidateStep").asInt(), scores.toString());
    assertEquals(3, scores.get("evalCount").asInt());
    assertEquals("tensorboard", scores.get("source").asText());
    assertFalse(scores.get("trinityMetrics").toString().contains("rollout/"), "only bench/<taskset>/ tags");
    OutputModel m = new CheckpointLocator(JSON).locate(jobDir, CheckpointLocator.Evidence.BENCH).orElseThrow();
    assertEquals(2.0 / 3, m.metrics().get("task-success-rate"), 1e-6, m.metrics().toString());
    assertEquals(1.0 / 3, m.metrics().get(EvalEvidence.BASELINE_PREFIX + "task-success-rate"), 1e-6);
    assertEquals(3.0, m.metrics().get(EvalEvidence.EVAL_COUNT));

    // A metric the bench did not report is no evidence, and the file says why (not a made-up score).
    r = convert(List.of("python3", converter.toString(), "--job-dir", jobDir.toString(), "--taskset", "agent_eval",
        "--eval-file", eval.toString(), "--metric", "task-success-rate=format_score"));
    assertEquals(0, r.exitCode(), r.output());
    scores = JSON.readTree(jobDir.resolve(CheckpointLocator.BENCH_SCORES_FILE).toFile());
    assertTrue(scores.get("problem").asText().contains("format_score"), scores.toString());
    assertFalse(new CheckpointLocator(JSON).locate(jobDir, CheckpointLocator.Evidence.BENCH).orElseThrow()
        .metrics().containsKey("task-success-rate"));
  }

  private static Config node() {
    return trinity.node(12, Map.of("agentscope.training.training-runner.eval-fraction", EVAL));
  }

  /** 12 sessions, 2 of them held out. */
  private static void sessions(Http http, String prefix) {
    int train = 0;
    int held = 0;
    for (int i = 0; train + held < 12; i++) {
      boolean h = HeldOut.isHeldOut(prefix + i, EVAL);
      if (h ? held >= 2 : train >= 10) continue;
      if (h) held++; else train++;
      String id = prefix + i;
      Http.Response r = http.post("/v1/sessions/" + id + "/events", """
          {"agentId":"%s","events":[
            {"type":"start","modelVersion":"base"},
            {"type":"message","role":"user","content":"question %s"},
            {"type":"message","role":"assistant","content":"answer %s","latencyMs":500},
            {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%s"},
            {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, id, id, id));
      assertEquals(202, r.status(), r.body());
    }
  }

  private static JsonNode version(Http http, String v) {
    JsonNode models = http.get("/v1/models/" + AGENT).json();
    if (models == null || !models.has("versions")) return null;
    for (JsonNode n : models.get("versions")) if (n.get("version").asText().equals(v)) return n;
    return null;
  }

  private static String reasons(JsonNode version) {
    StringBuilder all = new StringBuilder();
    version.get("history").forEach(h -> all.append(h.path("reason").asText("")).append('\n'));
    return all.toString();
  }

  @Test
  void gateDecidesOnTheConvertedScoresOfARealTrinityBench() throws Exception {
    simulator.setRealBench((jobDir, candidateStep, evalFile, converter) -> {
      long step = Long.parseLong(candidateStep.getFileName().toString().replace("global_step_", ""));
      List<Double> candidate = CANDIDATE_ACCURACY.getOrDefault(jobDir.getFileName().toString(), STABLE_ACCURACY);
      trinityBench(jobDir, AGENT + "_eval", Map.of("steps", Map.of(
          "0", Map.of("accuracy", STABLE_ACCURACY), Long.toString(step), Map.of("accuracy", candidate))));
      PythonVenv.Result r = convert(converter);
      assertEquals(0, r.exitCode(), r.output());
    });
    String job2 = "job-2-" + AGENT;
    String job3 = "job-3-" + AGENT;
    CANDIDATE_ACCURACY.put(job2, List.of(0.0, 0.0));
    CANDIDATE_ACCURACY.put(job3, List.of(1.0, 1.0));
    try (TrainingNode node = TrainingNode.start(node())) {
      Http http = new Http(node.httpPort());
      sessions(http, "a-");
      // The first version becomes the stable by itself (auto-deploy, nothing to compare with).
      JsonNode v1 = Await.until("v1 stable", () -> version(http, "v1"),
          n -> n != null && n.get("state").asText().equals("STABLE"));
      assertEquals(0.5, v1.get("metrics").get("offline").get("task-success-rate").asDouble(), v1.toString());

      // Worse than the stable on the same bench run: rejected on Trinity's own scores.
      sessions(http, "b-");
      JsonNode v2 = Await.until("v2 rejected", () -> version(http, "v2"),
          n -> n != null && n.get("state").asText().equals("REJECTED"));
      assertTrue(reasons(v2).contains("task-success-rate: 0.0000 is below stable v1 same-run bench score 0.5000"),
          reasons(v2));
      JsonNode scores = JSON.readTree(work.resolve("checkpoints").resolve(AGENT).resolve(job2)
          .resolve(CheckpointLocator.BENCH_SCORES_FILE).toFile());
      assertEquals("tensorboard", scores.get("source").asText(), "written by the converter, not the simulator");
      assertEquals(2, scores.get("evalCount").asInt());

      // Better: through the gate.
      sessions(http, "c-");
      JsonNode v3 = Await.until("v3 through the gate", () -> version(http, "v3"),
          n -> n != null && List.of("READY", "CANARY").contains(n.get("state").asText()));
      assertTrue(reasons(v3).contains("same-run bench score") || reasons(v3).contains("offline gate passed"), v3.toString());
      JsonNode j3 = http.get("/v1/jobs/" + job3).json();
      assertEquals(1.0, j3.get("outputModel").get("metrics").get("task-success-rate").asDouble(), j3.toString());
      assertEquals(0.5, j3.get("outputModel").get("metrics").get("bench-stable.task-success-rate").asDouble());
    } finally {
      simulator.setRealBench(null);
    }
  }
}
