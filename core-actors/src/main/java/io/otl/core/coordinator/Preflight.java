package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
   * a tenth of min-samples more (at least 1), doubled for each job before it that failed so in a
   * row, up to min-samples. A policy whose dataset always comes out empty (dpo on one-answer
   * sessions) otherwise failed a job for nearly every new trajectory when min-samples is small
   * (trial t26: min-samples 5, 40 sessions, 23 failed jobs, each exporting the pool again).
   *
   * @param failedBefore jobs that failed before training, pool returned, right before this one
   */
  static int rearmAt(int poolSize, TrainingPolicy policy, int failedBefore) {
    long step = (long) Math.max(1, policy.minSamples() / 10) << Math.min(failedBefore, 20);
    return (int) Math.min((long) poolSize + Math.max(1, Math.min(step, policy.minSamples())), Integer.MAX_VALUE);
  }

  /**
   * The jobs before {@code current} that, in a row, failed before training and gave the pool back
   * (a failed pre-flight or an empty dataset): how often the threshold has fired in vain.
   */
  static int failedInARow(State s, String current) {
    int n = 0;
    List<CoordinatorState.Job> jobs = s.jobs();
    for (int i = jobs.size() - 1; i >= 0; i--) {
      CoordinatorState.Job j = jobs.get(i);
      if (j.jobId().equals(current)) continue;
      if (j.status() != CoordinatorState.JobStatus.FAILED || j.preflightFailures().isEmpty()) break;
      n++;
    }
    return n;
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
   * a real backend would refuse ({@link GpuBudget}), or train nothing ({@link #smallPool}). Logged
   * at WARN with the job and answered with a manual trigger.
   */
  static List<String> warnings(TrainingPolicy policy, int poolSize) {
    List<String> warnings = new ArrayList<>(GpuBudget.warnings(policy.algorithm(), policy.hyperparams(),
        policy.backend(), policy.trinityNodeNum(), policy.trinityGpuPerNode()));
    warnings.addAll(smallPool(policy, poolSize));
    return warnings;
  }

  /**
   * Trinity-RFT's file readers give the trainer full batches only, so a training file of fewer
   * rows than one batch, over all its epochs, trains no step on a real cluster and leaves no
   * model, while the simulator trains anyway (trial t27: 3 DPO pairs, 3 epochs, batch size 16).
   * A manual trigger runs on any pool of at least one; the rows are at most the pool's trajectories
   * (fewer after the filters, a replay sample of older ones adds about replay-fraction).
   */
  private static List<String> smallPool(TrainingPolicy policy, int poolSize) {
    if (!tooFewRows(policy.backend(), policy.hyperparams(), poolSize)) return List.of();
    int epochs = hyperparam(policy.hyperparams(), "epochs");
    return List.of(String.format(Locale.ROOT,
        "the pool holds %d %s, at most %d rows over %d epochs (hyperparams.epochs), fewer than one"
            + " batch of %d (hyperparams.batch-size): Trinity-RFT reads full batches only, so on a real cluster"
            + " this job would train no step and leave no model (the simulator trains anyway); lower"
            + " hyperparams.batch-size or wait for more trajectories",
        poolSize, poolSize == 1 ? "trajectory" : "trajectories", (long) poolSize * epochs, epochs,
        hyperparam(policy.hyperparams(), "batch-size")));
  }

  /**
   * The same rule on the rows the export actually wrote, known only after it: the pool's check
   * passes a pool that the filters and deduplication then shrink below one batch (trial t43: 22
   * pooled trajectories, 5 SFT lines after 8 duplicates, 6 below sft-min-reward and 3 held out;
   * 5 x 3 epochs &lt; 16), and such a job trained no step on a real cluster while the trajectories
   * it took stayed out of the pool. Empty when the job's file fills at least one batch.
   */
  static List<String> smallDataset(Backend backend, Map<String, Object> hyperparams, int rows) {
    if (rows <= 0 || !tooFewRows(backend, hyperparams, rows)) return List.of();
    int epochs = hyperparam(hyperparams, "epochs");
    return List.of(String.format(Locale.ROOT,
        "the exported dataset has %d %s, %d over %d epochs (hyperparams.epochs), fewer than one batch of %d"
            + " (hyperparams.batch-size): Trinity-RFT reads full batches only, so on a real cluster this job"
            + " trains no step and leaves no model (the simulator trains anyway); lower hyperparams.batch-size"
            + " or wait for more trajectories (the manifest's exclusions say what the filters left out)",
        rows, rows == 1 ? "row" : "rows", (long) rows * epochs, epochs, hyperparam(hyperparams, "batch-size")));
  }

  private static boolean tooFewRows(Backend backend, Map<String, Object> hyperparams, int rows) {
    if (backend != Backend.RAY_JOBS) return false;
    int batch = hyperparam(hyperparams, "batch-size");
    int epochs = hyperparam(hyperparams, "epochs");
    return batch >= 1 && epochs >= 1 && (long) rows * epochs < batch;
  }

  /** A whole-number hyperparameter ({@link GpuBudget#wholeNumber}); 0 when unset or unreadable. */
  private static int hyperparam(Map<String, Object> hyperparams, String key) {
    Integer value = GpuBudget.wholeNumber(hyperparams, key);
    return value == null ? 0 : value;
  }
}
