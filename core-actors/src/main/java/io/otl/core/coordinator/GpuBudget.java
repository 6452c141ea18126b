package io.otl.core.coordinator;

import io.otl.core.coordinator.TrainingPolicy.Backend;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Pre-flight warning (not a refusal) for RL jobs run as batch Trinity jobs: ppo, grpo and
 * distillation run Trinity in {@code mode: both}, where the explorer's models (the rollout model,
 * and for distillation the teacher) take GPUs of their own and the trainer needs at least one more.
 * Trinity-RFT's config validator refuses a cluster ({@code cluster.node_num × gpu_per_node}) with
 * no GPU left for the trainer ("Not enough GPUs for trainer"), so such a job fails on a real Ray
 * cluster, while the simulator runs it. A warning, because the numbers are the operator's to know:
 * the node cannot see the Ray cluster's GPUs.
 */
public final class GpuBudget {
  /** The hyperparameter sizing the teacher's tensor parallelism (its GPUs), as the renderer reads it. */
  static final String TEACHER_TP_KEY = "teacher-tensor-parallel-size";

  private GpuBudget() {}

  /** Empty when the rendered cluster has a GPU for the trainer; else one warning naming the settings. */
  public static List<String> warnings(String algorithm, Map<String, Object> hyperparams, Backend backend,
      int nodeNum, int gpuPerNode) {
    if (backend != Backend.RAY_JOBS || !List.of("ppo", "grpo", "distillation").contains(algorithm)) {
      return List.of();
    }
    boolean distill = "distillation".equals(algorithm);
    // The renderer gives the rollout model one engine of tensor_parallel_size 1.
    int explorer = 1 + (distill ? teacherGpus(hyperparams) : 0);
    long total = (long) nodeNum * gpuPerNode;
    if (total > explorer) {
      return List.of();
    }
    String explorerParts = distill
        ? explorer + " (1 for the rollout model, " + (explorer - 1) + " for the teacher, hyperparams."
            + TEACHER_TP_KEY + ")"
        : "1 (the rollout model)";
    return List.of(String.format(Locale.ROOT,
        "%s needs at least %d GPUs on the Trinity cluster: its explorer takes %s and the trainer at least 1,"
            + " but agentscope.training.training-runner.trinity.node-num x gpu-per-node = %d x %d = %d;"
            + " Trinity-RFT refuses such a config (\"Not enough GPUs for trainer\"), only the simulator runs it:"
            + " raise training-runner.trinity.gpu-per-node (or node-num) to the GPUs your Ray cluster has",
        algorithm, explorer + 1, explorerParts, nodeNum, gpuPerNode, total));
  }

  /** The teacher's GPUs: its tensor-parallel size, 1 when unset or unreadable (as the renderer's default). */
  private static int teacherGpus(Map<String, Object> hyperparams) {
    Integer tp = wholeNumber(hyperparams, TEACHER_TP_KEY);
    return tp == null ? 1 : Math.max(1, tp);
  }

  /**
   * A whole-number hyperparameter as the renderer reads it: under its kebab-case or snake_case name,
   * a number or its text; null when unset or unreadable.
   */
  static Integer wholeNumber(Map<String, Object> hyperparams, String kebabKey) {
    for (Map.Entry<String, Object> e : hyperparams.entrySet()) {
      String k = e.getKey().replace("_", "-").toLowerCase(Locale.ROOT);
      if (!k.equals(kebabKey) || e.getValue() == null) continue;
      try {
        return e.getValue() instanceof Number n ? n.intValue() : Integer.parseInt(e.getValue().toString().strip());
      } catch (NumberFormatException notANumber) {
        return null;
      }
    }
    return null;
  }
}
