package io.otl.persistence.export;

import com.typesafe.config.Config;
import io.otl.core.coordinator.TrainingPolicy;

/**
 * Which trajectories a dataset may use (design §6), from {@code agentscope.training.training-runner}:
 * SFT takes reward ≥ {@code sft-min-reward} and quality ≥ {@code min-quality}; DPO pairs answers
 * to the same task whose rewards differ by ≥ {@code dpo-min-margin}, the chosen one meeting
 * {@code min-quality}; RL tasks need quality ≥ {@code min-quality}.
 */
public record ExportFilters(double sftMinReward, double minQuality, double dpoMinMargin) {
  /** The reference.conf defaults. */
  public static final ExportFilters DEFAULTS = new ExportFilters(0.5, 0.6, 0.5);

  public ExportFilters {
    check("sft-min-reward", sftMinReward);
    if (!TrainingPolicy.isReachableMinReward(sftMinReward)) {
      throw new IllegalArgumentException("sft-min-reward must be a number " + TrainingPolicy.MIN_REWARD_RANGE
          + " (rewards are clipped to " + TrainingPolicy.REWARD_RANGE + "), was " + sftMinReward);
    }
    if (!TrainingPolicy.isQuality(minQuality)) {
      throw new IllegalArgumentException("min-quality must be a number in " + TrainingPolicy.QUALITY_RANGE + ", was " + minQuality);
    }
    check("dpo-min-margin", dpoMinMargin);
    if (!TrainingPolicy.isRewardMargin(dpoMinMargin)) {
      throw new IllegalArgumentException("dpo-min-margin must be a number in " + TrainingPolicy.REWARD_MARGIN_RANGE
          + " (two rewards in " + TrainingPolicy.REWARD_RANGE + " differ by at most 2), was " + dpoMinMargin);
    }
  }

  /** Reads the training-runner section; missing keys take {@link #DEFAULTS}. */
  public static ExportFilters fromConfig(Config trainingRunner) {
    return new ExportFilters(
        read(trainingRunner, "sft-min-reward", DEFAULTS.sftMinReward),
        read(trainingRunner, "min-quality", DEFAULTS.minQuality),
        read(trainingRunner, "dpo-min-margin", DEFAULTS.dpoMinMargin));
  }

  /** The filters of a root configuration's {@code agentscope.training.training-runner}; the defaults without one. */
  public static ExportFilters fromRoot(Config root) {
    String section = "agentscope.training.training-runner";
    return root.hasPath(section) ? fromConfig(root.getConfig(section)) : DEFAULTS;
  }

  private static double read(Config c, String key, double fallback) {
    return c.hasPath(key) ? c.getDouble(key) : fallback;
  }

  private static void check(String key, double v) {
    if (!Double.isFinite(v)) throw new IllegalArgumentException(key + " must be a finite number, was " + v);
  }
}
