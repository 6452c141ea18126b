package io.otl.core.coordinator;

/**
 * The words of the master switch {@code agentscope.training.enabled} (design §8) as the
 * coordinator shows them. Turned off, data collection and feedback go on and trajectories are
 * still pooled, so turning it back on trains on what arrived meanwhile.
 */
public final class TrainingSwitch {
  /** The configuration key, as users write it. */
  public static final String KEY = "agentscope.training.enabled";

  /** Why a requested job found at recovery is not submitted. */
  static final String HELD = "training is disabled (" + KEY + " = false); it is submitted once training is enabled";

  private TrainingSwitch() {}

  /** {@code enabled} or {@code disabled}: the {@code status} field of the training view. */
  static String status(TrainingPolicy policy) {
    return policy.trainingEnabled() ? "enabled" : "disabled";
  }

  /** The 409 message of a manual trigger while training is off. */
  static String refusal(String agentId) {
    return "training is disabled (" + KEY + " = false): no job is started for agent " + agentId
        + "; sessions and feedback are still recorded and pooled. Set " + KEY + " = true to train.";
  }
}
