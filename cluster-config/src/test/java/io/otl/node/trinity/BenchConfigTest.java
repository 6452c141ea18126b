package io.otl.node.trinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.core.model.EvalEvidence;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingJobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench config, with the keys Trinity-RFT reads in {@code mode: bench} (config.py's
 * ExplorerConfig {@code eval_on_startup}/{@code bench_on_latest_checkpoint}, {@code
 * buffer.explorer_input.eval_tasksets}), the chained entrypoint, and how bench scores become the
 * gate's metrics.
 */
class BenchConfigTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private final TrinityConfigRenderer renderer = new TrinityConfigRenderer(1, 2);

  private static TrainingJobSpec spec(String startModel, Map<String, Object> hp) {
    return new TrainingJobSpec("job-2", "support-agent", "sft", startModel, hp, "/data/exports/job-2/train.jsonl",
        "/data/checkpoints", Map.of("startFrom", "stable"));
  }

  @Test
  void benchScoresTheStartModelAtStepZeroAndEveryCheckpointOfTheSameRunOnTheEvalSet() throws Exception {
    String stable = "file:///data/checkpoints/support-agent/job-1/global_step_10/actor/huggingface";
    JsonNode yaml = YAML.readTree(renderer.renderBench(spec(stable, Map.of("batch-size", 4))));

    assertEquals("bench", yaml.path("mode").asText());
    // Same project/name/root as training: Trinity's checkpoint_job_dir is the training run's folder.
    assertEquals("support-agent", yaml.path("project").asText());
    assertEquals("job-2", yaml.path("name").asText());
    assertEquals(Path.of("/data/checkpoints").toAbsolutePath().toString(), yaml.path("checkpoint_root_dir").asText());
    assertEquals("/data/checkpoints/support-agent/job-1/global_step_10/actor/huggingface",
        yaml.path("model").path("model_path").asText(), "step 0 is the stable's checkpoint");
    JsonNode explorer = yaml.path("explorer");
    assertTrue(explorer.path("eval_on_startup").asBoolean(), "step 0 = model_path is benchmarked");
    assertFalse(explorer.path("bench_on_latest_checkpoint").asBoolean(true), "model_path and checkpoints");
    JsonNode tasksets = yaml.path("buffer").path("explorer_input").path("eval_tasksets");
    assertEquals(1, tasksets.size());
    JsonNode eval = tasksets.path(0);
    assertEquals("support-agent_eval", eval.path("name").asText());
    assertEquals("file", eval.path("storage_type").asText());
    // The job's data folder read as its test split: load_dataset(folder, split="test") reads test.jsonl only.
    assertEquals(Path.of("/data/exports/job-2").toAbsolutePath().toString(), eval.path("path").asText());
    assertEquals("test", eval.path("split").asText());
    assertEquals("prompt", eval.path("format").path("prompt_key").asText());
    assertEquals("reference", eval.path("format").path("response_key").asText());
    assertEquals("simple_workflow", eval.path("default_workflow_type").asText());
    assertEquals(BenchConfig.DEFAULT_REWARD_FN, eval.path("default_reward_fn_type").asText());
    assertEquals(4, yaml.path("buffer").path("batch_size").asInt());
    assertTrue(yaml.path("trainer").isMissingNode() && yaml.path("algorithm").isMissingNode(), "bench trains nothing");
    assertEquals(Path.of("/data/exports/job-2.bench.yaml").toAbsolutePath(),
        TrinityConfigRenderer.benchConfigPath(spec(stable, Map.of())));
  }

  /**
   * A job folder with its dataset card: the bench names the card's eval config, so {@code datasets}
   * reads test.jsonl alone (the folder's train.jsonl of an SFT job has other columns, and loading both
   * failed). A folder of an earlier build has no card and no such config: nothing is named.
   */
  @Test
  void theBenchNamesTheEvalConfigOfTheFoldersDatasetCard(@TempDir Path dir) throws Exception {
    TrainingJobSpec spec = new TrainingJobSpec("job-3", "support-agent", "sft", "base", Map.of(),
        dir.resolve("job-3").resolve("train.jsonl").toString(), dir.resolve("checkpoints").toString(), Map.of());
    Files.createDirectories(dir.resolve("job-3"));
    JsonNode before = YAML.readTree(renderer.renderBench(spec)).at("/buffer/explorer_input/eval_tasksets/0");
    assertTrue(before.path("subset_name").isMissingNode(), before.toString());
    io.otl.persistence.export.JobDatasetFiles.writeCard(dir, "job-3");
    JsonNode eval = YAML.readTree(renderer.renderBench(spec)).at("/buffer/explorer_input/eval_tasksets/0");
    assertEquals("eval", eval.path("subset_name").asText(), eval.toString());
    assertEquals("test", eval.path("split").asText());
    assertEquals(dir.resolve("job-3").toAbsolutePath().toString(), eval.path("path").asText());
    String card = Files.readString(dir.resolve("job-3").resolve("README.md"));
    assertTrue(card.contains("config_name: eval") && card.contains("path: test.jsonl"), card);
  }

  @Test
  void theJobsRewardFunctionScoresTheBenchWhenNamed() throws Exception {
    JsonNode named = YAML.readTree(renderer.renderBench(spec("base", Map.of("reward-fn-type", "math_reward"))));
    assertEquals("math_reward", named.at("/buffer/explorer_input/eval_tasksets/0/default_reward_fn_type").asText());
    JsonNode eval = YAML.readTree(renderer.renderBench(spec("base", Map.of("eval_reward_fn_type", "judge_reward"))));
    assertEquals("judge_reward", eval.at("/buffer/explorer_input/eval_tasksets/0/default_reward_fn_type").asText());
    assertEquals("base", eval.at("/model/model_path").asText(), "no stable: the base model is the baseline");
  }

  @Test
  void benchIsChainedAfterTrainingOnly() {
    assertEquals("trinity run --config /d/job-2.trinity.yaml && trinity run --config '/d d/job-2.bench.yaml'"
            + " && python3 '/d d/job-2.bench_scores.py' --metric task-success-rate=accuracy",
        RayJobsBackend.entrypoint(Path.of("/d/job-2.trinity.yaml"), Path.of("/d d/job-2.bench.yaml"),
            List.of("python3", "/d d/job-2.bench_scores.py", "--metric", "task-success-rate=accuracy")));
  }

  @Test
  void benchScoresBecomeCandidateMetricsWithTheSameRunsStableBaseline(@TempDir Path dir) throws Exception {
    Path hf = dir.resolve("global_step_10").resolve("actor").resolve("huggingface");
    Files.createDirectories(hf);
    // The legacy file is ignored for a benched job.
    Files.writeString(dir.resolve("global_step_10").resolve("eval_metrics.json"), "{\"task-success-rate\":0.1}");
    CheckpointLocator locator = new CheckpointLocator(new ObjectMapper());
    assertEquals(Map.of(), locator.locate(dir, CheckpointLocator.Evidence.BENCH).orElseThrow().metrics(),
        "benched job without scores: no evidence");
    Files.writeString(dir.resolve(CheckpointLocator.BENCH_SCORES_FILE), """
        {"evalSha256":"ab","evalCount":3,"candidate":{"task-success-rate":0.9,"response-latency":700},
         "stable":{"task-success-rate":0.8,"note":"x"}}""");
    OutputModel m = locator.locate(dir, CheckpointLocator.Evidence.BENCH).orElseThrow();
    assertEquals(Map.of("task-success-rate", 0.9, "response-latency", 700.0,
        EvalEvidence.BASELINE_PREFIX + "task-success-rate", 0.8, EvalEvidence.EVAL_COUNT, 3.0), m.metrics());
    assertEquals(Map.of(EvalEvidence.EVAL_COUNT, 0.0),
        locator.locate(dir, CheckpointLocator.Evidence.EMPTY_EVAL_SET).orElseThrow().metrics());
    assertEquals(Map.of("task-success-rate", 0.1),
        locator.locate(dir, CheckpointLocator.Evidence.LEGACY).orElseThrow().metrics());
  }

  @Test
  void aLoraRunsModelIsItsAdapterNotTheConfigFolderBesideIt(@TempDir Path dir) throws Exception {
    // Trinity-RFT's LoRA run: actor/huggingface holds the config and tokenizer, actor/lora_adapter the
    // adapter (what vLLM's load_lora_adapter takes).
    Path actor = dir.resolve("global_step_20").resolve("actor");
    Files.createDirectories(actor.resolve("huggingface"));
    Files.writeString(actor.resolve("huggingface").resolve("config.json"), "{}");
    CheckpointLocator locator = new CheckpointLocator(new ObjectMapper());
    assertEquals(actor.resolve("huggingface").toUri().toString(),
        locator.locate(dir).orElseThrow().checkpointUri(), "a full-weights run: the Hugging Face folder");
    Files.createDirectories(actor.resolve("lora_adapter"));
    Files.writeString(actor.resolve("lora_adapter").resolve("adapter_config.json"), "{\"peft_type\":\"LORA\"}");
    assertEquals(actor.resolve("lora_adapter").toUri().toString(), locator.locate(dir).orElseThrow().checkpointUri());
  }
}
