package io.otl.node.trinity;

import io.otl.core.coordinator.Distillation;
import io.otl.core.coordinator.RewardSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one list of hyperparameter names a job may carry: those the Trinity config renderer, the
 * bench config and the pre-flight read. The validator refuses any other name under {@code
 * training-runner.hyperparams} (file, {@code agents.<agentId>}, {@code PUT …/policy}), because a
 * name nobody reads (a typo such as {@code lerning-rate}) would otherwise train with the default
 * without a word. Names are kebab-case and exact: the loader already turns the camelCase and
 * snake_case of YAML, JSON and TOML files into kebab-case, so one spelling per name is enough.
 * Core-actors keeps no copy: it only carries the map.
 */
public final class Hyperparameters {

  /** What a value must be; the validator turns each kind into its rule. */
  public enum Kind {
    /** A number > 0. */
    POSITIVE_NUMBER,
    /** A number >= 0. */
    NON_NEGATIVE_NUMBER,
    /** A number in [0, 1]. */
    FRACTION,
    /** An integer >= 1. */
    POSITIVE_INTEGER,
    /** A non-empty string. */
    NAME,
    /** A string; empty means "not set" (the pre-flight then names the key when the job needs it). */
    OPTIONAL_NAME,
    /** {@link BenchScores#HYPERPARAM}: a mapping checked as a job would. */
    BENCH_METRICS
  }

  public static final String LEARNING_RATE = "learning-rate";
  public static final String BATCH_SIZE = "batch-size";
  public static final String EPOCHS = "epochs";
  public static final String WARMUP_RATIO = "warmup-ratio";
  public static final String TOTAL_STEPS = "total-steps";
  public static final String MAX_MODEL_LEN = "max-model-len";
  public static final String MAX_RESPONSE_TOKENS = "max-response-tokens";
  public static final String REPEAT_TIMES = "repeat-times";
  public static final String SAVE_INTERVAL = "save-interval";
  public static final String LR_SCHEDULER_TYPE = "lr-scheduler-type";
  public static final String WORKFLOW_TYPE = "workflow-type";
  public static final String KL_COEF = "kl-coef";
  public static final String TEACHER_TENSOR_PARALLEL_SIZE = "teacher-tensor-parallel-size";
  public static final String LORA_RANK = "lora-rank";
  public static final String LORA_ALPHA = "lora-alpha";
  public static final String EVAL_REWARD_FN_TYPE = "eval-reward-fn-type";

  /** Every known name and its kind, in the order messages list them. */
  public static final Map<String, Kind> KNOWN = known();

  private Hyperparameters() {}

  private static Map<String, Kind> known() {
    Map<String, Kind> m = new LinkedHashMap<>();
    m.put(LEARNING_RATE, Kind.POSITIVE_NUMBER);
    m.put(BATCH_SIZE, Kind.POSITIVE_INTEGER);
    m.put(EPOCHS, Kind.POSITIVE_INTEGER);
    m.put(WARMUP_RATIO, Kind.FRACTION);
    m.put(TOTAL_STEPS, Kind.POSITIVE_INTEGER);
    m.put(MAX_MODEL_LEN, Kind.POSITIVE_INTEGER);
    m.put(MAX_RESPONSE_TOKENS, Kind.POSITIVE_INTEGER);
    m.put(REPEAT_TIMES, Kind.POSITIVE_INTEGER);
    m.put(SAVE_INTERVAL, Kind.POSITIVE_INTEGER);
    m.put(LR_SCHEDULER_TYPE, Kind.NAME);
    m.put(WORKFLOW_TYPE, Kind.NAME);
    m.put(RewardSource.KEY, Kind.OPTIONAL_NAME);
    m.put(EVAL_REWARD_FN_TYPE, Kind.OPTIONAL_NAME);
    m.put(Distillation.KEY, Kind.OPTIONAL_NAME);
    m.put(TEACHER_TENSOR_PARALLEL_SIZE, Kind.POSITIVE_INTEGER);
    m.put(KL_COEF, Kind.NON_NEGATIVE_NUMBER);
    m.put(LORA_RANK, Kind.POSITIVE_INTEGER);
    m.put(LORA_ALPHA, Kind.POSITIVE_INTEGER);
    m.put(BenchScores.HYPERPARAM, Kind.BENCH_METRICS);
    return java.util.Collections.unmodifiableMap(m);
  }

  /** The known names, in order. */
  public static List<String> names() {
    return List.copyOf(KNOWN.keySet());
  }
}
