package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.core.training.TrainingJobSpec;
import io.otl.node.TrainingNode;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import io.otl.node.trinity.TrinityConfigRenderer;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A job's exported rows as Trinity-RFT reads them: Hugging Face {@code datasets} loads each job's SFT,
 * DPO and RL rows, and the RL job's held-out set, with {@code load_dataset(path, split=…)} on the path
 * and split the node renders into the job's training and bench configs (Trinity's file reader), and
 * must get exactly the rows of the exported file; and {@code transformers} renders every SFT row with
 * {@code apply_chat_template(messages, tools=tools)} through a tool-calling template that reads
 * {@code arguments} as a mapping (cluster-config/src/test/python/hf_dataset_formats_check.py, pinned
 * versions in scripts/python-requirements.txt). Sessions go in through the real DataCollector: text
 * before a tool call, several tools with different argument shapes, a non-object input, a plain chat.
 * Skipped loudly without Python (failed when OTL_REQUIRE_PYTHON=true).
 */
class HfDatasetFormatsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-hf";

  private static SessionInput.ToolCall call(String id, String tool, String input, String output) throws Exception {
    return new SessionInput.ToolCall("t-" + id, null, id, tool, JSON.readTree(input), JSON.readTree(output), true, 20L);
  }

  private static void record(DataCollector dc, String id, String taskId, String result, SessionInput... middle)
      throws Exception {
    List<SessionInput> in = new ArrayList<>();
    in.add(new SessionInput.Start("start", null, "1.0", "v1", taskId == null ? Map.of() : Map.of("taskId", taskId)));
    in.addAll(List.of(middle));
    in.add(new SessionInput.Result("res", null, result, "r"));
    dc.record(id, AGENT, in).toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static SessionInput.Message msg(String id, String role, String text) {
    return new SessionInput.Message(id, null, role, text, null, null);
  }

  private static final ContinualSettings NO_EVAL = ContinualSettings.NONE;
  private static final ContinualSettings HALF_EVAL =
      new ContinualSettings(ContinualSettings.StartFrom.BASE, 0, Duration.ofDays(14), 0.5);
  private static final TrinityConfigRenderer RENDERER = new TrinityConfigRenderer(1, 1);
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** A job's export as the node writes it, and the training and bench configs rendered for it. */
  private record Job(JobDatasetExport.Result export, JsonNode training, JsonNode bench) {
    /** {@code --kind PATH NAME SPLIT FILE}: what the config tells Trinity to load, and the file it must come from. */
    List<String> args(String kind, JsonNode rendered, ExportResult file) {
      return List.of(kind, rendered.path("path").asText(), rendered.path("subset_name").asText("-"),
          rendered.path("split").asText(), file.path());
    }
  }

  private static Job job(DatasetExport export, ContinualSettings continual, String jobId, String algorithm,
      List<String> ids, Path datasets, Path dir) throws Exception {
    JobDatasetExport.Result r = new JobDatasetExport(export, continual)
        .export(AGENT, jobId, ids, algorithm, datasets).toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
    TrainingJobSpec spec = new TrainingJobSpec(jobId, AGENT, algorithm, "base-model",
        Map.of("reward-fn-type", "accuracy_reward"), r.train().path(), dir.resolve("checkpoints").toString(), Map.of());
    return new Job(r, YAML.readTree(RENDERER.render(spec)), YAML.readTree(RENDERER.renderBench(spec)));
  }

  @Test
  void huggingFaceDatasetsLoadsEveryFormatAndTransformersRendersEverySftRowWithItsTools() throws Exception {
    PythonVenv.python();
    Path dir = TestDatabases.outputDir("hf-formats");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      record(dc, "s1", "W", "SUCCESS", msg("sys", "system", "You are a weather bot."), msg("u", "user", "Weather in Paris?"), msg("a0", "assistant", "Let me check."),
          call("c1", "weather", "{\"city\":\"Paris\",\"days\":2}", "{\"temp\":21}"),
          msg("a1", "assistant", "21 degrees."));
      record(dc, "s2", null, "SUCCESS", msg("u", "user", "And Lyon?"),
          call("c1", "weather", "{\"city\":\"Lyon\"}", "\"sunny\""),
          call("c2", "search", "{\"q\":\"lyon news\",\"limit\":3}", "{\"hits\":[\"a\",\"b\"]}"),
          msg("a1", "assistant", "Sunny in Lyon."), msg("a2", "assistant", "Anything else?"));
      record(dc, "s3", null, "SUCCESS", msg("u", "user", "hi"), msg("a1", "assistant", "hello"));
      record(dc, "s4", "W", "FAILURE", msg("u", "user", "weather in  PARIS?"), msg("a1", "assistant", "No idea."));
      record(dc, "s5", null, "SUCCESS", msg("u", "user", "Tag this"),
          call("c1", "tag", "[\"red\",\"blue\"]", "\"ok\""), msg("a1", "assistant", "Tagged."));
      // A conversation that ends on the model's call, whose result never comes (AgentScope's structured output
      // through the gateway: the generate_response arguments are the answer): the row ends on that call.
      record(dc, "s6", null, "SUCCESS", msg("u", "user", "Report on Paris"),
          new SessionInput.ToolCall("t-c1", null, "c1", "generate_response",
              JSON.readTree("{\"summary\":\"Sunny\",\"items\":2}"), null, null, null, null, true));
      List<String> ids = List.of("s1", "s2", "s3", "s4", "s5", "s6");
      // Every job exports into the same dataset directory, as the node does; each config must still
      // reach only its own job's rows.
      Path datasets = dir.resolve("datasets");
      DatasetExport export = new DatasetExport(node.system());
      Job sft = job(export, NO_EVAL, "job-sft", "sft", ids, datasets, dir);
      Job dpo = job(export, NO_EVAL, "job-dpo", "dpo", ids, datasets, dir);
      Job rl = job(export, HALF_EVAL, "job-rl", "grpo", ids, datasets, dir);
      // An SFT job with a held-out set: the folder holds SFT rows and RL-shaped eval tasks, whose
      // columns differ; each config must still load its own file alone (a job of the node's defaults,
      // eval-fraction 0.1, failed to load its training rows before the folder had a dataset card).
      Job sftHeld = job(export, HALF_EVAL, "job-sft-held", "sft", ids, datasets, dir);
      assertTrue(sftHeld.export.train().count() > 0 && sftHeld.export.eval() != null
          && sftHeld.export.eval().count() > 0, "the SFT job has rows in both files: " + sftHeld.export);
      assertEquals(List.of("s1", "s2", "s3", "s5", "s6"), sft.export.train().sessionIds(),
          "the failed s4 is not imitated");
      assertEquals(List.of("s1", "s4"), dpo.export.train().sessionIds());
      assertTrue(rl.export.train().count() > 0 && rl.export.eval() != null && rl.export.eval().count() > 0,
          "the RL job has rows in both splits, so each split is seen to hold only its own: " + rl.export);

      List<String> args = new ArrayList<>();
      args.addAll(sft.args("--sft", sft.training.at("/buffer/trainer_input/experience_buffer"), sft.export.train()));
      args.addAll(dpo.args("--dpo", dpo.training.at("/buffer/trainer_input/experience_buffer"), dpo.export.train()));
      args.addAll(rl.args("--rl", rl.training.at("/buffer/explorer_input/taskset"), rl.export.train()));
      args.addAll(rl.args("--eval", rl.bench.at("/buffer/explorer_input/eval_tasksets/0"), rl.export.eval()));
      args.addAll(sftHeld.args("--sft-held", sftHeld.training.at("/buffer/trainer_input/experience_buffer"),
          sftHeld.export.train()));
      args.addAll(sftHeld.args("--sft-held-eval", sftHeld.bench.at("/buffer/explorer_input/eval_tasksets/0"),
          sftHeld.export.eval()));
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/hf_dataset_formats_check.py");
      PythonVenv.Result r = PythonVenv.run(script, args, dir, 600);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = JSON.readTree(r.lastLine());
      assertEquals(5, report.path("sft_rows").asInt(), report.toString());
      assertEquals(5, report.path("sft_rendered").asInt(), "every SFT row renders: " + report);
      assertEquals(5, report.path("sft_tool_calls_rendered").asInt(), report.toString());
      assertEquals(5, report.path("sft_tools_listed").asInt(), report.toString());
      assertEquals(1, report.path("dpo_rows").asInt(), report.toString());
      // s1 went on with its tool call, the result and its answer after the shared question; s4 answered at once.
      assertEquals(4, report.path("dpo_turns").asInt(), "each DPO side is what its session said: " + report);
      assertEquals(rl.export.train().count(), report.path("rl_rows").asInt(), report.toString());
      // trial t106: the task carries its session's system prompt, which the rollouts run under
      assertTrue((report.path("rl_systems").toString() + report.path("eval_systems")).contains("You are a weather bot."),
          report.toString());
      assertEquals(rl.export.eval().count(), report.path("eval_rows").asInt(), report.toString());
      assertEquals(sftHeld.export.train().count(), report.path("sft_held_rows").asInt(), report.toString());
      assertEquals(sftHeld.export.train().count(), report.path("sft_held_rendered").asInt(), report.toString());
      assertEquals(sftHeld.export.eval().count(), report.path("sft_held_eval_rows").asInt(), report.toString());
      List<Double> rewards = new ArrayList<>();
      report.path("rl_rewards").forEach(n -> rewards.add(n.asDouble()));
      report.path("eval_rewards").forEach(n -> rewards.add(n.asDouble()));
      rewards.sort(null);
      // s6 too: its prompt and reward make a task, whose answer was a call (no text reference)
      assertEquals(List.of(-1.0, 1.0, 1.0, 1.0, 1.0, 1.0), rewards, "every RL task in exactly one split: " + report);
      assertTrue(report.path("string_tools_refused").asBoolean(),
          "transformers refuses tools given as a JSON string, the shape this export no longer writes: " + report);
    }
  }
}
