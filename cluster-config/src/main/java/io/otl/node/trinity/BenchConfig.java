package io.otl.node.trinity;

import io.otl.core.coordinator.RewardSource;
import io.otl.core.training.TrainingJobSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Trinity-RFT {@code mode: bench} config that gives the offline gate its evidence (issue #16
 * item 3): after training, the same run ({@code project}/{@code name}, so Trinity's {@code
 * checkpoint_job_dir} is the training job's folder) is evaluated on the job's held-out set
 * ({@code buffer.explorer_input.eval_tasksets}): the job's data folder, split {@code test}, which
 * {@code datasets} reads from its {@code test.jsonl} only.
 *
 * <p>Trinity's bench with {@code explorer.eval_on_startup: true} and {@code
 * bench_on_latest_checkpoint: false} first evaluates {@code model.model_path} (step 0), then every
 * {@code global_step_N} checkpoint of the run: {@code model_path} is the model the job started from
 * (the current stable's checkpoint with {@code start-from = stable}, else the base model), so one
 * bench run scores the stable and the candidate (highest N) on the same prompts with the same
 * reward function. Trinity logs the scores to its tensorboard monitor; {@link BenchScores} turns
 * them into {@value CheckpointLocator#BENCH_SCORES_FILE}.
 *
 * <p>Reward function: the job's {@code reward-fn-type} hyperparameter when named, else {@code
 * eval-reward-fn-type}, else {@value #DEFAULT_REWARD_FN} (the recorded answer is the reference).
 */
final class BenchConfig {
  static final String SUFFIX = ".bench.yaml";
  static final String DEFAULT_REWARD_FN = "accuracy_reward";

  private BenchConfig() {}

  /** @param model the training config's {@code model} section: step 0 is the model the job started from */
  static Map<String, Object> tree(TrainingJobSpec spec, Map<String, Object> model, int nodeNum, int gpuPerNode) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("project", spec.agentId());
    root.put("name", spec.jobId());
    root.put("mode", "bench");
    root.put("checkpoint_root_dir", TrinityConfigRenderer.absolute(spec.checkpointRootDir()).toString());

    root.put("model", model);

    Map<String, Object> cluster = new LinkedHashMap<>();
    cluster.put("node_num", nodeNum);
    cluster.put("gpu_per_node", gpuPerNode);
    root.put("cluster", cluster);

    Map<String, Object> taskset = new LinkedHashMap<>();
    taskset.put("name", tasksetName(spec));
    taskset.put("storage_type", "file");
    taskset.put("path", TrinityConfigRenderer.evalDatasetPath(spec));
    String subset = TrinityConfigRenderer.evalSubsetName(spec);
    if (subset != null) taskset.put("subset_name", subset);
    taskset.put("split", TrinityConfigRenderer.evalSplit(spec));
    // The eval file is the RL task shape (design §6): prompt, recorded answer as reference, reward.
    Map<String, Object> format = new LinkedHashMap<>();
    format.put("prompt_key", "prompt");
    format.put("response_key", "reference");
    TaskSystemPrompt.of(TrinityConfigRenderer.evalPath(spec)).ifPresent(p -> format.put("system_prompt", p));
    taskset.put("format", format);
    taskset.put("default_workflow_type", "simple_workflow");
    taskset.put("default_reward_fn_type", rewardFn(spec));
    Map<String, Object> explorerInput = new LinkedHashMap<>();
    explorerInput.put("eval_tasksets", List.of(taskset));
    Map<String, Object> buffer = new LinkedHashMap<>();
    buffer.put("batch_size", integer(spec, Hyperparameters.BATCH_SIZE, 16));
    buffer.put("explorer_input", explorerInput);
    root.put("buffer", buffer);

    Map<String, Object> rollout = new LinkedHashMap<>();
    rollout.put("engine_num", 1);
    rollout.put("tensor_parallel_size", 1);
    Map<String, Object> explorer = new LinkedHashMap<>();
    // Step 0 is model_path (the stable or base): without it there is nothing to compare against.
    explorer.put("eval_on_startup", true);
    explorer.put("bench_on_latest_checkpoint", false);
    explorer.put("runner_per_model", 8);
    explorer.put("rollout_model", rollout);
    root.put("explorer", explorer);
    root.put("synchronizer", Map.of("sync_method", "checkpoint"));
    // The bench's scores exist only in its monitor: tensorboard files under the job folder, which
    // BenchScores' converter turns into bench_scores.json (wandb/mlflow would keep them elsewhere).
    root.put("monitor", Map.of("monitor_type", "tensorboard"));
    return root;
  }

  /** The eval taskset's name: Trinity's bench tags its scores {@code bench/<name>/<metric>}. */
  static String tasksetName(TrainingJobSpec spec) {
    return spec.agentId() + "_eval";
  }

  static String rewardFn(TrainingJobSpec spec) {
    String named = RewardSource.named(spec.hyperparams());
    if (named != null) return named;
    Object eval = lookup(spec, Hyperparameters.EVAL_REWARD_FN_TYPE);
    return eval == null || eval.toString().isBlank() ? DEFAULT_REWARD_FN : eval.toString();
  }

  /** A recorded spec may spell a name otherwise (an earlier build's job), so names match ignoring case, '-', '_'. */
  private static Object lookup(TrainingJobSpec spec, String name) {
    String normalized = normalize(name);
    for (Map.Entry<String, Object> e : spec.hyperparams().entrySet()) {
      if (normalize(e.getKey()).equals(normalized)) {
        return e.getValue();
      }
    }
    return null;
  }

  private static String normalize(String name) {
    return name.replace("-", "").replace("_", "").toLowerCase(java.util.Locale.ROOT);
  }

  private static int integer(TrainingJobSpec spec, String name, int fallback) {
    Object v = lookup(spec, name);
    if (v == null) return fallback;
    try {
      return v instanceof Number n ? n.intValue() : Integer.parseInt(v.toString().trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("hyperparameter " + name + " must be an integer, was '" + v + "'");
    }
  }
}
