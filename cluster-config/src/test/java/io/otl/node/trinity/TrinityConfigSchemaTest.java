package io.otl.node.trinity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.core.training.TrainingJobSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every key of every rendered config (each algorithm, full weights and LoRA, the bench config) is a
 * field of Trinity-RFT's config dataclasses at that nesting, with a value of the field's type, and
 * every enumerated value is one Trinity accepts. Trinity merges the YAML into {@code
 * OmegaConf.structured(Config)}, which refuses an unknown key ("Key 'x' not in 'TrainerConfig'") and
 * a value of another type, so a renderer key Trinity does not know fails the job at start, on a GPU
 * cluster, not here. The schema below is the subset of {@code trinity/common/config.py} (Config,
 * AlgorithmConfig, OptimizerConfig, ModelConfig, LoRAConfig, ClusterConfig, BufferConfig,
 * ExplorerInput, TasksetConfig, TrainerInput, ExperienceBufferConfig, FormatConfig, ExplorerConfig,
 * InferenceModelConfig, TrainerConfig, MonitorConfig, SynchronizerConfig) as of the release with
 * {@code optimizer.lr_scheduler_type} and {@code trainer.save_hf_checkpoint}; the algorithm names are
 * those of its {@code ALGORITHM_TYPE} registry, the enums those of {@code trinity/common/constants.py}
 * (trial t83, checked against the real source and the configs a node rendered for each algorithm).
 */
class TrinityConfigSchemaTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static final String STR = "str", INT = "int", FLOAT = "float", BOOL = "bool", DICT = "dict";

  private static Map<String, Object> fields(Object... keyType) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < keyType.length; i += 2) m.put((String) keyType[i], keyType[i + 1]);
    return m;
  }

  private static Set<String> oneOf(String... values) {
    return Set.of(values);
  }

  private static final Map<String, Object> FORMAT = fields(
      "prompt_type", oneOf("messages", "plaintext"), "prompt_key", STR, "response_key", STR,
      "system_prompt_key", STR, "system_prompt", STR, "messages_key", STR, "tools_key", STR, "image_key", STR,
      "video_key", STR, "reply_prefix", STR, "workflow_key", STR, "reward_fn_key", STR, "chosen_key", STR,
      "rejected_key", STR, "enable_concatenated_multi_turn", BOOL, "chat_template", STR);
  private static final Set<String> STORAGE = oneOf("file", "queue", "sql");
  private static final Map<String, Object> TASKSET = fields(
      "name", STR, "storage_type", STORAGE, "path", STR, "default_workflow_type", STR,
      "default_reward_fn_type", STR, "rollout_args", DICT, "workflow_args", DICT, "reward_fn_args", DICT,
      "task_selector", DICT, "split", STR, "subset_name", STR, "format", FORMAT, "max_retry_times", INT,
      "max_retry_interval", INT, "enable_progress_bar", BOOL, "repeat_times", INT);
  private static final Map<String, Object> EXPERIENCE_BUFFER = fields(
      "name", STR, "storage_type", STORAGE, "path", STR, "capacity", INT, "max_read_timeout", FLOAT,
      "replay_buffer", DICT, "max_retry_times", INT, "max_retry_interval", INT, "split", STR, "subset_name", STR,
      "format", FORMAT, "enable_progress_bar", BOOL);
  private static final Map<String, Object> INFERENCE_MODEL = fields(
      "model_path", STR, "name", STR, "engine_type", STR, "engine_num", INT, "tensor_parallel_size", INT,
      "use_v1", BOOL, "enforce_eager", BOOL, "enable_prefix_caching", BOOL, "enable_chunked_prefill", BOOL,
      "gpu_memory_utilization", FLOAT, "dtype", STR, "seed", INT, "max_model_len", INT, "max_prompt_tokens", INT,
      "max_response_tokens", INT, "chat_template", STR, "enable_thinking", BOOL, "enable_openai_api", BOOL);
  private static final Map<String, Object> LORA = fields(
      "name", STR, "path", STR, "base_model_name", STR, "lora_rank", INT, "lora_alpha", INT, "lora_dtype", STR,
      "target_modules", STR, "exclude_modules", STR);

  static final Map<String, Object> CONFIG = fields(
      "mode", oneOf("both", "train", "explore", "bench", "serve", "colocate"), "project", STR, "group", STR,
      "name", STR, "checkpoint_root_dir", STR, "ray_namespace", STR, "continue_from_checkpoint", BOOL,
      "ignore_validator_suggestions", BOOL,
      "algorithm", fields(
          "algorithm_type", oneOf("sft", "dpo", "ppo", "grpo", "on_policy_distill"), "repeat_times", INT,
          "optimizer", fields("lr", FLOAT, "lr_warmup_steps", INT, "lr_warmup_steps_ratio", FLOAT,
              "min_lr_ratio", FLOAT, "warmup_style", STR, "lr_scheduler_type", STR, "optimizer_type", STR,
              "betas", List.of(FLOAT), "weight_decay", FLOAT, "clip_grad", FLOAT),
          "sample_strategy", STR, "advantage_fn", STR, "advantage_fn_args", DICT, "kl_penalty_fn", STR,
          "policy_loss_fn", STR, "kl_loss_fn", STR, "entropy_loss_fn", STR, "loss_agg_mode", STR),
      "model", fields(
          "model_path", STR, "critic_model_path", STR, "custom_chat_template", STR, "chat_template_path", STR,
          "temperature", FLOAT, "top_p", FLOAT, "top_k", INT, "logprobs", INT, "max_model_len", INT,
          "max_prompt_tokens", INT, "max_response_tokens", INT, "min_response_tokens", INT,
          "enable_prompt_truncation", BOOL, "repetition_penalty", FLOAT, "lora_configs", List.of(LORA),
          "fully_sharded_loras", BOOL, "max_cpu_loras", INT),
      "cluster", fields("ray_address", STR, "node_num", INT, "gpu_per_node", INT),
      "buffer", fields(
          "batch_size", INT, "train_batch_size", INT, "total_epochs", INT, "total_steps", INT,
          "explorer_input", fields("taskset", TASKSET, "tasksets", List.of(TASKSET), "eval_tasksets", List.of(TASKSET),
              "default_workflow_type", STR, "default_eval_workflow_type", STR, "default_reward_fn_type", STR),
          "trainer_input", fields("experience_buffer", EXPERIENCE_BUFFER, "auxiliary_buffers", DICT)),
      "explorer", fields(
          "name", STR, "runner_per_model", INT, "max_timeout", INT, "max_retry_times", INT, "env_vars", DICT,
          "concurrent_mode", STR, "max_repeat_times_per_runner", INT, "rollout_model", INFERENCE_MODEL,
          "auxiliary_models", List.of(INFERENCE_MODEL), "eval_interval", INT, "eval_on_startup", BOOL,
          "bench_on_latest_checkpoint", BOOL),
      "trainer", fields(
          "name", STR, "trainer_type", STR, "trainer_strategy", STR, "save_interval", INT, "enable_preview", BOOL,
          "total_steps", INT, "save_hf_checkpoint", oneOf("last", "always", "never"), "grad_clip", FLOAT,
          "use_dynamic_bsz", BOOL, "max_token_len_per_gpu", INT, "ulysses_sequence_parallel_size", INT,
          "save_strategy", STR, "max_checkpoints_to_keep", INT, "trainer_config", DICT),
      "monitor", fields("monitor_type", STR, "monitor_args", DICT, "detailed_stats", BOOL, "enable_ray_timeline", BOOL),
      "synchronizer", fields("sync_method", oneOf("nccl", "checkpoint", "memory"), "sync_style", STR,
          "sync_interval", INT, "sync_offset", INT, "sync_timeout", INT, "wait_for_checkpoint", BOOL));

  /** What OmegaConf would refuse in {@code node}, by dotted path. */
  @SuppressWarnings("unchecked")
  static void check(JsonNode node, Object schema, String path, List<String> problems) {
    if (schema instanceof Map<?, ?> m) {
      if (!node.isObject()) {
        problems.add(path + ": a mapping was expected, got " + node);
        return;
      }
      node.fields().forEachRemaining(e -> {
        Object field = ((Map<String, Object>) m).get(e.getKey());
        if (field == null) problems.add(path + "." + e.getKey() + ": no such field in Trinity-RFT's config");
        else check(e.getValue(), field, path + "." + e.getKey(), problems);
      });
    } else if (schema instanceof List<?> l) {
      if (!node.isArray()) problems.add(path + ": a list was expected, got " + node);
      else for (int i = 0; i < node.size(); i++) check(node.get(i), l.get(0), path + "[" + i + "]", problems);
    } else if (schema instanceof Set<?> values) {
      if (!node.isTextual() || !values.contains(node.asText())) problems.add(path + ": " + node + " is not one of " + values);
    } else {
      boolean ok = switch ((String) schema) {
        case STR -> node.isTextual();
        case INT -> node.isIntegralNumber();
        case FLOAT -> node.isNumber();
        case BOOL -> node.isBoolean();
        case DICT -> node.isObject();
        default -> false;
      };
      if (!ok) problems.add(path + ": " + node + " is not a " + schema);
    }
  }

  private static TrainingJobSpec spec(String algorithm, Map<String, Object> hp) {
    return new TrainingJobSpec("job-1", "support-agent", algorithm, "qwen2.5-7b-instruct", hp,
        "/data/exports/job-1/train.jsonl", "/data/checkpoints", Map.of());
  }

  private static Map<String, Map<String, Object>> jobs() {
    Map<String, Map<String, Object>> jobs = new LinkedHashMap<>();
    jobs.put("sft", Map.of("learning-rate", 2e-5, "batch-size", 16, "epochs", 3, "warmup-ratio", 0.1,
        "total-steps", 40, "lr-scheduler-type", "cosine", "max-model-len", 4096, "save-interval", 10));
    jobs.put("dpo", Map.of("epochs", 1));
    jobs.put("ppo", Map.of("reward-fn-type", "accuracy_reward", "repeat-times", 2));
    jobs.put("grpo", Map.of("reward-fn-type", "accuracy_reward", "workflow-type", "math_workflow", "total-steps", 20));
    jobs.put("distillation", Map.of("teacher-model", "Qwen/Qwen2.5-72B-Instruct", "kl-coef", 0.5,
        "teacher-tensor-parallel-size", 2));
    return jobs;
  }

  @Test
  void everyRenderedKeyIsATrinityConfigFieldOfItsType() throws Exception {
    List<String> problems = new ArrayList<>();
    int configs = 0;
    for (boolean lora : List.of(false, true)) {
      TrinityConfigRenderer renderer = new TrinityConfigRenderer(1, 4, lora);
      for (Map.Entry<String, Map<String, Object>> job : jobs().entrySet()) {
        TrainingJobSpec spec = spec(job.getKey(), job.getValue());
        String label = job.getKey() + (lora ? " (lora)" : "");
        check(YAML.readTree(renderer.render(spec)), CONFIG, label, problems);
        check(YAML.readTree(renderer.renderBench(spec)), CONFIG, label + " bench", problems);
        configs += 2;
      }
    }
    assertEquals(List.of(), problems);
    assertEquals(20, configs);
  }

  @Test
  void theSchemaCatchesWhatOmegaConfWouldRefuse() throws Exception {
    List<String> problems = new ArrayList<>();
    check(YAML.readTree("""
        mode: train
        algorithm: {algorithm_type: distillation, optimizer: {lr: fast}}
        trainer: {save_hf_checkpoint: true, save_steps: 3}
        buffer: {trainer_input: {experience_buffer: {storage_type: file, format: {messages_key: m, tools: t}}}}
        """), CONFIG, "", problems);
    assertEquals(List.of(
        ".algorithm.algorithm_type: \"distillation\" is not one of " + oneOf("sft", "dpo", "ppo", "grpo", "on_policy_distill"),
        ".algorithm.optimizer.lr: \"fast\" is not a float",
        ".trainer.save_hf_checkpoint: true is not one of " + oneOf("last", "always", "never"),
        ".trainer.save_steps: no such field in Trinity-RFT's config",
        ".buffer.trainer_input.experience_buffer.format.tools: no such field in Trinity-RFT's config"), problems);
  }
}
