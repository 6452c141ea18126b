package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Pure rules: when the threshold trigger fires, and the pre-flight checklist of design §3.2. */
final class Preflight {
  private Preflight() {}

  /** The threshold trigger: due when the pool reaches min-samples (and any re-arm point) and no job is active. */
  static boolean thresholdDue(State s, TrainingPolicy policy) {
    return policy.isEnabled(TriggerType.THRESHOLD) && s.activeJobId() == null
        && s.poolSize() >= policy.minSamples()
        && (s.thresholdRearmAt() == null || s.poolSize() >= s.thresholdRearmAt());
  }

  /**
   * Where the threshold may fire again after a failed job gave back a pool of {@code poolSize}:
   * a tenth of min-samples more, so a failing checklist does not start a job per new trajectory.
   */
  static int rearmAt(int poolSize, TrainingPolicy policy) {
    return poolSize + Math.max(1, policy.minSamples() / 10);
  }

  /**
   * The checklist that can be decided before export. "No other job active" is decided by the
   * callers (a manual trigger is refused, a scheduled slot skipped, the threshold waits); "no PII"
   * is decided on the exported file; "no rollout in progress" by {@link RolloutGate}.
   *
   * @return the failed items (mutable: callers may add theirs); empty when the job may run
   */
  static List<String> check(State s, TriggerType trigger, TrainingPolicy policy) {
    List<String> reasons = new ArrayList<>();
    int needed = trigger == TriggerType.THRESHOLD ? policy.minSamples() : 1;
    if (s.poolSize() < needed) {
      reasons.add("not enough samples: the pool has " + s.poolSize() + " eligible trajectories, a "
          + trigger.configName() + " job needs at least " + needed);
    }
    Double mean = s.meanQuality();
    if (mean != null && mean < policy.minQuality()) {
      reasons.add(String.format(Locale.ROOT, "mean quality %.3f of the pool is below min-quality %.3f",
          mean, policy.minQuality()));
    }
    if (policy.baseModel().isBlank()) {
      reasons.add("base model is not set (agentscope.training.training-runner.base-model)");
    }
    reasons.addAll(RewardSource.problems(policy.algorithm(), policy.hyperparams(), policy.backend()));
    reasons.addAll(Distillation.problems(policy.algorithm(), policy.hyperparams(), policy.backend()));
    return reasons;
  }

  /**
   * Items that do not stop the job but that the operator should see: a job the simulator runs and
   * a real backend would refuse ({@link GpuBudget}). Logged at WARN with the job and answered with
   * a manual trigger.
   */
  static List<String> warnings(TrainingPolicy policy) {
    return GpuBudget.warnings(policy.algorithm(), policy.hyperparams(), policy.backend(),
        policy.trinityNodeNum(), policy.trinityGpuPerNode());
  }
}
