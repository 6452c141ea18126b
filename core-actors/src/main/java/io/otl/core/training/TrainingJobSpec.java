package io.otl.core.training;

import io.otl.core.Ids;
import io.otl.core.JsonSerializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Everything a backend needs to run one training job.
 *
 * @param jobId also the backend's submission id, which is what makes submission idempotent
 * @param agentId the agent whose trajectories were exported
 * @param algorithm one of {@link #ALGORITHMS}
 * @param baseModel the agent's base model (name or path): what a job without a checkpoint to continue
 *     from trains, and what LoRA adapters apply to
 * @param hyperparams e.g. {@code learning-rate}, {@code batch-size}, {@code epochs},
 *     {@code warmup-ratio} (names as in {@code agentscope.training.training-runner.hyperparams})
 * @param datasetPath exported dataset (design §6), on a path the backend can read
 * @param checkpointRootDir where the backend writes checkpoints, on a path we can read back
 * @param metadata free string labels passed to the backend with the submission
 * @param startCheckpoint the stable version's checkpoint a continual job starts from ({@code
 *     start-from = stable}), null when it starts from {@code baseModel}: full weights to train on,
 *     or, when jobs train LoRA adapters, the adapter to keep training on {@code baseModel}
 */
public record TrainingJobSpec(
    String jobId,
    String agentId,
    String algorithm,
    String baseModel,
    Map<String, Object> hyperparams,
    String datasetPath,
    String checkpointRootDir,
    Map<String, String> metadata,
    String startCheckpoint)
    implements JsonSerializable {

  public static final Set<String> ALGORITHMS = Set.of("sft", "ppo", "grpo", "dpo", "distillation");

  // Ids become path components and URL segments: the entity charset of design §3.1, minus the
  // names "." and ".." that would escape the checkpoint directory.
  private static final Pattern ID = Pattern.compile(Ids.ID_CHARSET + "{1,128}");

  public TrainingJobSpec {
    requireId("jobId", jobId);
    requireId("agentId", agentId);
    Objects.requireNonNull(algorithm, "algorithm");
    if (!ALGORITHMS.contains(algorithm)) {
      throw new IllegalArgumentException(
          "algorithm must be one of " + ALGORITHMS + ", was '" + algorithm + "'");
    }
    requireText("baseModel", baseModel);
    requireText("datasetPath", datasetPath);
    requireText("checkpointRootDir", checkpointRootDir);
    // Insertion order is kept so that rendered configs are stable and readable.
    hyperparams = hyperparams == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(hyperparams));
    metadata = metadata == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    if (startCheckpoint != null && startCheckpoint.isBlank()) startCheckpoint = null;
  }

  /** A job that starts from {@code baseModel}. */
  public TrainingJobSpec(String jobId, String agentId, String algorithm, String baseModel,
      Map<String, Object> hyperparams, String datasetPath, String checkpointRootDir, Map<String, String> metadata) {
    this(jobId, agentId, algorithm, baseModel, hyperparams, datasetPath, checkpointRootDir, metadata, null);
  }

  /** The model whose full weights the job starts from: the checkpoint it continues, else the base model. */
  public String startModel() {
    return startCheckpoint != null ? startCheckpoint : baseModel;
  }

  private static void requireId(String field, String value) {
    if (value == null || !ID.matcher(value).matches() || value.equals(".") || value.equals("..")) {
      throw new IllegalArgumentException(
          field + " must be 1-128 characters of " + Ids.ID_CHARSET + ", was '" + value + "'");
    }
  }

  private static void requireText(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(field + " must not be blank");
    }
  }
}
