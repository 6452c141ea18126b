package io.otl.node.trinity;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.util.StringQuotingChecker;
import io.otl.core.training.TrainingJobSpec;
import io.otl.persistence.export.JobDatasetFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders the Trinity-RFT YAML config ({@code trinity run --config <file>}) for one job.
 *
 * <p>Layout follows Trinity-RFT's configuration guide: {@code project}/{@code name} (here agentId /
 * jobId, so checkpoints land in {@code <checkpoint_root_dir>/<agentId>/<jobId>/}), {@code mode},
 * {@code algorithm} (type and optimizer), {@code model}, {@code cluster}, {@code buffer} (dataset
 * and its format) and {@code trainer}. Offline algorithms (sft, dpo, distillation) run {@code mode:
 * train} with the job's exported rows as the trainer's experience buffer; RL algorithms (ppo, grpo) run
 * {@code mode: both} with them as the explorer's taskset. Either way {@code path} is the job's data
 * folder and {@code split} is {@code train} ({@link JobDatasetFiles}).
 *
 * <p>Hyperparameter names are those of {@link Hyperparameters} (the validator refuses others, so
 * none is ignored here): learning-rate, batch-size, epochs, warmup-ratio, total-steps,
 * max-model-len, max-response-tokens, repeat-times, save-interval, lr-scheduler-type, workflow-type,
 * reward-fn-type (required for ppo/grpo: the reward function that scores rollouts against each
 * task's {@code reference}; no default). A job recorded by an earlier build may carry another
 * spelling ({@code learning_rate}), so a recorded spec is still matched ignoring case, '-' and '_'.
 *
 * <p>{@code distillation} is Trinity's on-policy distillation ({@code algorithm_type:
 * on_policy_distill}, {@code mode: both}): the student answers the exported prompts (the RL task
 * export) in {@code on_policy_distill_workflow}, and the teacher, the hyperparameter {@code
 * teacher-model} rendered as {@code explorer.auxiliary_models}, scores them with its log-probs
 * ({@code advantage_fn_args.kl_coef}, hyperparameter kl-coef, default 1.0). No reward function is
 * involved; a job without a teacher is refused at pre-flight ({@link
 * io.otl.core.coordinator.Distillation}).
 */
public final class TrinityConfigRenderer {

  /** The config file is written next to the dataset as {@code <jobId>.trinity.yaml}. */
  public static final String CONFIG_SUFFIX = ".trinity.yaml";

  private static final ObjectMapper YAML =
      new ObjectMapper(
              YAMLFactory.builder()
                  .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                  .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
                  .stringQuotingChecker(new Yaml11Quoting())
                  .build())
          // PyYAML (YAML 1.1, used by OmegaConf) reads 1.0E-5 fine but 1e-5 or 1.0E5 as strings:
          // plain decimals are read as floats everywhere.
          .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

  private final int nodeNum;
  private final int gpuPerNode;
  private final boolean lora;

  /**
   * Quotes every string value that YAML 1.1 could read as something else. Trinity loads the file
   * with OmegaConf (PyYAML's resolvers, plus a float resolver for exponents without a dot), where a
   * plain {@code project: 12:30} is the sexagesimal int 750, {@code 0x10} 16, {@code 1_000} 1000,
   * {@code 1e3} 1000.0 and {@code .inf} inf: an agent id of that shape became another {@code
   * project}, so Trinity wrote the checkpoints under {@code <root>/750/<jobId>} while the node looked
   * in {@code <root>/12:30/<jobId>}. Jackson's default quotes only decimal-looking numbers and
   * booleans; any value starting like a number, timestamp or {@code ~} is quoted here too (a quote
   * too many is harmless).
   */
  static final class Yaml11Quoting extends StringQuotingChecker.Default {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean needToQuoteValue(String value) {
      return super.needToQuoteValue(value)
          || (!value.isEmpty() && "+-.0123456789~".indexOf(value.charAt(0)) >= 0);
    }
  }

  public TrinityConfigRenderer(int nodeNum, int gpuPerNode) {
    this(nodeNum, gpuPerNode, false);
  }

  /**
   * @param lora train one LoRA adapter ({@code model.lora_configs}, hyperparams lora-rank and
   *     lora-alpha, default 16 / 32) instead of the full weights: set when versions are served as
   *     adapters ({@code serving.backend = vllm-lora}). RL jobs then synchronize through
   *     checkpoints, the only LoRA sync Trinity-RFT supports.
   */
  public TrinityConfigRenderer(int nodeNum, int gpuPerNode, boolean lora) {
    this.nodeNum = nodeNum;
    this.gpuPerNode = gpuPerNode;
    this.lora = lora;
  }

  /** The YAML text, with a header naming the job. */
  public String render(TrainingJobSpec spec) {
    try {
      return "# Trinity-RFT config rendered by the online training control plane\n"
          + "# agent: " + spec.agentId() + ", job: " + spec.jobId() + ", algorithm: " + spec.algorithm() + "\n"
          + YAML.writeValueAsString(configTree(spec));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The bench config (issue #16): candidate and start model on the held-out set. */
  public String renderBench(TrainingJobSpec spec) {
    try {
      return "# Trinity-RFT bench config rendered by the online training control plane\n"
          + "# agent: " + spec.agentId() + ", job: " + spec.jobId() + ": candidate vs " + spec.startModel() + "\n"
          + YAML.writeValueAsString(BenchConfig.tree(spec, modelSection(spec), nodeNum, gpuPerNode));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code <jobId>.bench.yaml} beside the training config. */
  public static Path benchConfigPath(TrainingJobSpec spec) {
    return configPath(spec).resolveSibling(spec.jobId() + BenchConfig.SUFFIX);
  }

  /**
   * The job's held-out eval file, written by the exporter: {@code <jobId>/test.jsonl} beside the
   * training file ({@link JobDatasetFiles}), or {@code <jobId>.eval.jsonl} for a job an earlier
   * build exported.
   */
  public static Path evalPath(TrainingJobSpec spec) {
    return jobFolder(spec).map(f -> f.resolve(JobDatasetFiles.EVAL_FILE))
        .orElseGet(() -> configPath(spec).resolveSibling(spec.jobId() + ".eval.jsonl"));
  }

  /**
   * Where {@link #render} output goes: beside the job's data folder (never in it: Trinity would read
   * it as rows), beside a dataset file of an earlier build, or inside a given dataset directory.
   */
  public static Path configPath(TrainingJobSpec spec) {
    Path dataset = absolute(spec.datasetPath());
    Path dir = jobFolder(spec).map(Path::getParent)
        .orElseGet(() -> Files.isDirectory(dataset) ? dataset : dataset.getParent());
    return dir.resolve(spec.jobId() + CONFIG_SUFFIX);
  }

  /**
   * The {@code path} Trinity's file reader hands to {@code datasets.load_dataset(path, split=…)}:
   * the job's data folder, which that call can load (a single file it cannot). A job recorded by an
   * earlier build keeps its single file: it was written there, and nothing moves it.
   */
  static String datasetPath(TrainingJobSpec spec) {
    return jobFolder(spec).orElseGet(() -> absolute(spec.datasetPath())).toString();
  }

  /** The bench's eval taskset: the job's data folder read as its test split, or an earlier build's file. */
  static String evalDatasetPath(TrainingJobSpec spec) {
    return jobFolder(spec).map(Path::toString).orElseGet(() -> evalPath(spec).toString());
  }

  /**
   * The config of the job folder's dataset card that holds only the held-out rows (Trinity's
   * {@code subset_name}); without it {@code datasets} builds the folder's training file too, whose
   * columns differ, and fails. Null for an earlier build's single file, or a folder exported before
   * the card existed (no such config there: its bench reads the folder as it always did).
   */
  static String evalSubsetName(TrainingJobSpec spec) {
    return jobFolder(spec).filter(f -> Files.isRegularFile(f.resolve(JobDatasetFiles.CARD_FILE)))
        .map(f -> JobDatasetFiles.EVAL_CONFIG).orElse(null);
  }

  /** The split that {@link #evalDatasetPath} holds the held-out rows under. */
  static String evalSplit(TrainingJobSpec spec) {
    return jobFolder(spec).isPresent() ? JobDatasetFiles.EVAL_SPLIT : JobDatasetFiles.TRAIN_SPLIT;
  }

  private static java.util.Optional<Path> jobFolder(TrainingJobSpec spec) {
    return JobDatasetFiles.folderOf(absolute(spec.datasetPath()), spec.jobId());
  }

  /**
   * A configured path made absolute against the working directory, without {@code .} or {@code ..}
   * segments: the defaults are relative ({@code ./checkpoints}), and the path travels into the Ray
   * entrypoint, the job's record and the model's artifact URI, where {@code /work/./checkpoints} only
   * confuses.
   */
  static Path absolute(String path) {
    return Path.of(path).toAbsolutePath().normalize();
  }

  /** {@code <checkpoint_root_dir>/<project>/<name>}, where Trinity writes this job's checkpoints. */
  public static Path checkpointJobDir(TrainingJobSpec spec) {
    return absolute(spec.checkpointRootDir()).resolve(spec.agentId()).resolve(spec.jobId());
  }

  /** The config as a tree of maps, in output order. */
  public Map<String, Object> configTree(TrainingJobSpec spec) {
    Hyperparams hp = new Hyperparams(spec.hyperparams());
    boolean offline = !explores(spec.algorithm());
    boolean distill = spec.algorithm().equals("distillation");

    Map<String, Object> root = new LinkedHashMap<>();
    root.put("project", spec.agentId());
    root.put("name", spec.jobId());
    root.put("mode", offline ? "train" : "both");
    root.put("checkpoint_root_dir", absolute(spec.checkpointRootDir()).toString());
    // A retried submission of the same job resumes its checkpoints instead of starting a renamed run.
    root.put("continue_from_checkpoint", true);

    Map<String, Object> optimizer = new LinkedHashMap<>();
    optimizer.put("lr", decimal(hp.decimal(Hyperparameters.LEARNING_RATE, offline ? 2e-5 : 1e-6)));
    Double warmup = hp.decimal(Hyperparameters.WARMUP_RATIO, null);
    if (warmup != null) {
      optimizer.put("lr_warmup_steps_ratio", decimal(warmup));
    }
    optimizer.put("lr_scheduler_type", hp.text(Hyperparameters.LR_SCHEDULER_TYPE, "constant"));
    Map<String, Object> algorithm = new LinkedHashMap<>();
    algorithm.put("algorithm_type", trinityAlgorithm(spec.algorithm()));
    if (!offline) {
      algorithm.put("repeat_times", hp.integer(Hyperparameters.REPEAT_TIMES, spec.algorithm().equals("grpo") ? 8 : 1));
    }
    if (distill) {
      algorithm.put("advantage_fn_args", Map.of("kl_coef", decimal(hp.decimal(Hyperparameters.KL_COEF, 1.0))));
    }
    algorithm.put("optimizer", optimizer);
    root.put("algorithm", algorithm);

    root.put("model", modelSection(spec));

    Map<String, Object> cluster = new LinkedHashMap<>();
    cluster.put("node_num", nodeNum);
    cluster.put("gpu_per_node", gpuPerNode);
    root.put("cluster", cluster);

    root.put("buffer", buffer(spec, hp, offline));

    if (!offline) {
      Map<String, Object> rollout = new LinkedHashMap<>();
      rollout.put("engine_num", 1);
      rollout.put("tensor_parallel_size", 1);
      Map<String, Object> explorer = new LinkedHashMap<>();
      explorer.put("eval_interval", hp.integer(Hyperparameters.SAVE_INTERVAL, 100));
      explorer.put("runner_per_model", 8);
      explorer.put("rollout_model", rollout);
      if (distill) {
        Map<String, Object> teacher = new LinkedHashMap<>();
        teacher.put("model_path", teacherOf(spec));
        teacher.put("engine_num", 1);
        teacher.put("tensor_parallel_size", hp.integer(Hyperparameters.TEACHER_TENSOR_PARALLEL_SIZE, 1));
        explorer.put("auxiliary_models", List.of(teacher));
      }
      root.put("explorer", explorer);
      Map<String, Object> synchronizer = new LinkedHashMap<>();
      synchronizer.put("sync_method", lora ? "checkpoint" : "nccl");
      synchronizer.put("sync_interval", 1);
      root.put("synchronizer", synchronizer);
    }

    Map<String, Object> trainer = new LinkedHashMap<>();
    trainer.put("save_interval", hp.integer(Hyperparameters.SAVE_INTERVAL, 100));
    // We hand the Hugging Face export of the last step to ModelVersion.
    trainer.put("save_hf_checkpoint", "last");
    root.put("trainer", trainer);
    return root;
  }

  private Map<String, Object> buffer(TrainingJobSpec spec, Hyperparams hp, boolean offline) {
    Map<String, Object> buffer = new LinkedHashMap<>();
    buffer.put("total_epochs", hp.integer(Hyperparameters.EPOCHS, 1));
    Integer totalSteps = hp.integer(Hyperparameters.TOTAL_STEPS, null);
    if (totalSteps != null) {
      buffer.put("total_steps", totalSteps);
    }
    int batchSize = hp.integer(Hyperparameters.BATCH_SIZE, 16);
    String datasetPath = datasetPath(spec);
    if (offline) {
      buffer.put("train_batch_size", batchSize);
      Map<String, Object> dataset = new LinkedHashMap<>();
      dataset.put("name", spec.agentId() + "_" + spec.algorithm());
      dataset.put("storage_type", "file");
      dataset.put("path", datasetPath);
      dataset.put("split", JobDatasetFiles.TRAIN_SPLIT);
      dataset.put("format", offlineFormat(spec));
      buffer.put("trainer_input", Map.of("experience_buffer", dataset));
    } else {
      buffer.put("batch_size", batchSize);
      Map<String, Object> taskset = new LinkedHashMap<>();
      taskset.put("name", spec.agentId() + "_tasks");
      taskset.put("storage_type", "file");
      taskset.put("path", datasetPath);
      taskset.put("split", JobDatasetFiles.TRAIN_SPLIT);
      // design §6: {"prompt","reward","reference","metadata"}. The recorded answer is the truth the
      // reward function scores rollouts against; the function must be named (pre-flight refuses
      // otherwise), since Trinity's default would ignore this agent's rewards.
      Map<String, Object> format = new LinkedHashMap<>();
      format.put("prompt_key", "prompt");
      format.put("response_key", "reference");
      TaskSystemPrompt.of(absolute(spec.datasetPath())).ifPresent(p -> format.put("system_prompt", p));
      taskset.put("format", format);
      if (spec.algorithm().equals("distillation")) {
        // The teacher's log-probs are the signal: the workflow takes no reward function.
        teacherOf(spec);
        taskset.put("default_workflow_type", hp.text(Hyperparameters.WORKFLOW_TYPE, "on_policy_distill_workflow"));
        buffer.put("explorer_input", Map.of("taskset", taskset));
        Map<String, Object> experiences = new LinkedHashMap<>();
        experiences.put("name", spec.agentId() + "_experience_buffer");
        experiences.put("storage_type", "queue");
        buffer.put("trainer_input", Map.of("experience_buffer", experiences));
        return buffer;
      }
      taskset.put("default_workflow_type", hp.text(Hyperparameters.WORKFLOW_TYPE, "simple_workflow"));
      String rewardFn = io.otl.core.coordinator.RewardSource.named(spec.hyperparams());
      if (rewardFn == null) {
        throw new IllegalArgumentException(String.join("; ",
            io.otl.core.coordinator.RewardSource.problems(spec.algorithm(), spec.hyperparams(),
                io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS)));
      }
      taskset.put("default_reward_fn_type", rewardFn);
      buffer.put("explorer_input", Map.of("taskset", taskset));
      Map<String, Object> experiences = new LinkedHashMap<>();
      experiences.put("name", spec.agentId() + "_experience_buffer");
      experiences.put("storage_type", "queue");
      buffer.put("trainer_input", Map.of("experience_buffer", experiences));
    }
    return buffer;
  }

  private static Map<String, Object> offlineFormat(TrainingJobSpec spec) {
    Map<String, Object> format = new LinkedHashMap<>();
    if (spec.algorithm().equals("dpo") && dpoLinesCarryConversation(spec)) {
      // The conversation before the answers, not only the first question (JsonlFormats.dpo).
      format.put("prompt_type", "messages");
      format.put("messages_key", "messages");
      format.put("chosen_key", "chosen_messages");
      format.put("rejected_key", "rejected_messages");
    } else if (spec.algorithm().equals("dpo")) {
      // design §6: {"prompt":…,"chosen":…,"rejected":…}, all an earlier build's file has
      format.put("prompt_type", "plaintext");
      format.put("prompt_key", "prompt");
      format.put("chosen_key", "chosen");
      format.put("rejected_key", "rejected");
    } else {
      // design §6: {"messages":[…],"tools":[…]}, both handed as they are to apply_chat_template
      format.put("prompt_type", "messages");
      format.put("messages_key", "messages");
      format.put("tools_key", "tools");
      // Trinity's SFT reader trains only a line's last message unless told otherwise; an agent's
      // earlier turns (its tool calls above all) are what it should learn too.
      format.put("enable_concatenated_multi_turn", true);
    }
    return format;
  }

  /**
   * Whether the job's DPO file has the conversation fields: a file an earlier build exported (read
   * again when its submission is retried) has only the three texts, which the messages reader would
   * fail on. A file not written yet is taken as this build's.
   */
  static boolean dpoLinesCarryConversation(TrainingJobSpec spec) {
    Path file = absolute(spec.datasetPath());
    if (!Files.isRegularFile(file)) return true;
    try (var lines = Files.lines(file)) {
      return lines.findFirst().map(first -> {
        try {
          return LINE_JSON.readTree(first).has("chosen_messages");
        } catch (IOException e) {
          return true;
        }
      }).orElse(true);
    } catch (IOException | UncheckedIOException e) {
      return true;
    }
  }

  private static final ObjectMapper LINE_JSON = new ObjectMapper();

  static boolean isReinforcement(String algorithm) {
    return List.of("ppo", "grpo").contains(algorithm);
  }

  /** Algorithms whose explorer generates rollouts from the exported tasks ({@code mode: both}). */
  static boolean explores(String algorithm) {
    return isReinforcement(algorithm) || algorithm.equals("distillation");
  }

  static String trinityAlgorithm(String algorithm) {
    return algorithm.equals("distillation") ? "on_policy_distill" : algorithm;
  }

  private static String teacherOf(TrainingJobSpec spec) {
    String teacher = io.otl.core.coordinator.Distillation.teacher(spec.hyperparams());
    if (teacher == null) {
      throw new IllegalArgumentException(String.join("; ", io.otl.core.coordinator.Distillation.problems(
          spec.algorithm(), spec.hyperparams(), io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS)));
    }
    return teacher;
  }

  private static BigDecimal decimal(double value) {
    return BigDecimal.valueOf(value).stripTrailingZeros();
  }

  /** Hyperparameters looked up by normalized name, converted from numbers or strings. */
  private static final class Hyperparams {
    private final Map<String, Object> values = new LinkedHashMap<>();

    Hyperparams(Map<String, Object> raw) {
      raw.forEach((k, v) -> values.put(normalize(k), v));
    }

    static String normalize(String key) {
      return key.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
    }

    Double decimal(String key, Double fallback) {
      Object v = values.get(normalize(key));
      if (v == null) {
        return fallback;
      }
      try {
        return v instanceof Number n ? n.doubleValue() : Double.parseDouble(v.toString().trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("hyperparameter " + key + " must be a number, was '" + v + "'");
      }
    }

    Integer integer(String key, Integer fallback) {
      Object v = values.get(normalize(key));
      if (v == null) {
        return fallback;
      }
      try {
        return v instanceof Number n ? n.intValue() : Integer.parseInt(v.toString().trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("hyperparameter " + key + " must be an integer, was '" + v + "'");
      }
    }

    String text(String key, String fallback) {
      Object v = values.get(normalize(key));
      return v == null ? fallback : v.toString();
    }
  }

  /**
   * The {@code model} section, the same in the training and the bench config. Full weights: the job
   * starts from the checkpoint it continues, else the base model. LoRA: {@code model_path} is always
   * the base model (what the served adapters apply to) and a continual job keeps training the stable
   * version's adapter, named in {@code lora_configs[0].path} (Trinity-RFT's {@code LoRAConfig}).
   */
  Map<String, Object> modelSection(TrainingJobSpec spec) {
    Hyperparams hp = new Hyperparams(spec.hyperparams());
    Map<String, Object> model = new LinkedHashMap<>();
    model.put("model_path", modelPath(lora ? spec.baseModel() : spec.startModel()));
    model.put("max_model_len", hp.integer(Hyperparameters.MAX_MODEL_LEN, 8192));
    model.put("max_response_tokens", hp.integer(Hyperparameters.MAX_RESPONSE_TOKENS, 2048));
    if (lora) {
      Map<String, Object> adapter = new LinkedHashMap<>();
      adapter.put("name", "lora");
      if (spec.startCheckpoint() != null) adapter.put("path", modelPath(spec.startCheckpoint()));
      adapter.put("lora_rank", hp.integer(Hyperparameters.LORA_RANK, 16));
      adapter.put("lora_alpha", hp.integer(Hyperparameters.LORA_ALPHA, 32));
      model.put("lora_configs", List.of(adapter));
    }
    return model;
  }

  /**
   * Trinity's {@code model_path} is a model name or a local folder: a continual job starts from the
   * stable version's checkpoint, recorded as a {@code file:} URI, so that URI becomes its path.
   */
  static String modelPath(String model) {
    if (model.startsWith("file:")) {
      try {
        return Path.of(java.net.URI.create(model)).toString();
      } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
        return model;
      }
    }
    return model;
  }
}
