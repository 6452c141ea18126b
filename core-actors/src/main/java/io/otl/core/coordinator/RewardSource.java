package io.otl.core.coordinator;

import io.otl.core.coordinator.TrainingPolicy.Backend;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Pre-flight item for RL jobs run as batch Trinity jobs (design §6): new rollouts must be scored by
 * something that reads our data. The exported tasks carry {@code reward} and the recorded answer as
 * {@code reference}; the rendered config hands {@code reference} to the reward function named by
 * the hyperparameter {@code reward-fn-type} (a Trinity reward function or a judge's). Without that
 * name Trinity would fall back to a built-in default (a math answer matcher) that ignores our
 * rewards, so the job is refused instead. Online RL (trinity-proxy) gets our rewards directly.
 */
public final class RewardSource {
  /** The hyperparameter naming Trinity's reward function (names also match as reward_fn_type, rewardFnType). */
  public static final String KEY = "reward-fn-type";

  private RewardSource() {}

  /** Empty when fine; else one reason naming the missing key. */
  public static List<String> problems(String algorithm, Map<String, Object> hyperparams, Backend backend) {
    if (backend != Backend.RAY_JOBS || !List.of("ppo", "grpo").contains(algorithm)) return List.of();
    if (named(hyperparams) != null) return List.of();
    return List.of("no reward source for " + algorithm + ": set agentscope.training.training-runner.hyperparams."
        + KEY + " (or the agent's hyperparams." + KEY + ", at run time with PUT /v1/training/{agentId}/policy) to the Trinity reward function (or judge) that scores rollouts against the exported tasks'"
        + " reference and reward; Trinity's default would ignore this agent's rewards");
  }

  /** The configured reward function name, or null when none (blank counts as none). */
  public static String named(Map<String, Object> hyperparams) {
    for (Map.Entry<String, Object> e : hyperparams.entrySet()) {
      String k = e.getKey().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
      if (k.equals("rewardfntype") && e.getValue() != null && !e.getValue().toString().isBlank()) {
        return e.getValue().toString().strip();
      }
    }
    return null;
  }
}
