package io.otl.core.coordinator;

import io.otl.core.coordinator.TrainingPolicy.Backend;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Pre-flight item for {@code algorithm = distillation} run as a batch Trinity job: Trinity's
 * on-policy distillation ({@code algorithm_type: on_policy_distill}) lets the student answer the
 * exported prompts and learns from a teacher's log-probs on those answers, so it needs the
 * teacher, named by the hyperparameter {@code teacher-model} (a model path or Hugging Face id,
 * rendered as the explorer's auxiliary model). Without it there is nothing to distil from, and
 * the job is refused with the key named instead of failing inside Trinity.
 */
public final class Distillation {
  /** The hyperparameter naming the teacher (also matches teacher_model, teacherModel). */
  public static final String KEY = "teacher-model";

  private Distillation() {}

  /** Empty when fine; else one reason naming the missing key. */
  public static List<String> problems(String algorithm, Map<String, Object> hyperparams, Backend backend) {
    if (backend != Backend.RAY_JOBS || !"distillation".equals(algorithm) || teacher(hyperparams) != null) {
      return List.of();
    }
    return List.of("no teacher for distillation: set agentscope.training.training-runner.hyperparams." + KEY
        + " (or the agent's hyperparams." + KEY + ", at run time with PUT /v1/training/{agentId}/policy) to the teacher model's path or Hugging Face id");
  }

  /** The configured teacher, or null when none (blank counts as none). */
  public static String teacher(Map<String, Object> hyperparams) {
    for (Map.Entry<String, Object> e : hyperparams.entrySet()) {
      String k = e.getKey().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
      if (k.equals("teachermodel") && e.getValue() != null && !e.getValue().toString().isBlank()) {
        return e.getValue().toString().strip();
      }
    }
    return null;
  }
}
