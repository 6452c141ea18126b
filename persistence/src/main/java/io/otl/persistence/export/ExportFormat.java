package io.otl.persistence.export;

import java.util.Locale;

/** The dataset shapes Trinity-RFT reads (design §6). */
public enum ExportFormat {
  /** {@code {"messages":[…],"tools":[…]}} (tools a JSON array). */
  SFT,
  /** {@code {"prompt":…,"chosen":…,"rejected":…}}. */
  DPO,
  /** {@code {"prompt":…,"reward":r,"metadata":{…}}} for GRPO/PPO. */
  RL;

  /** The name used on the command line and in manifests. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** sft | dpo | rl (case-insensitive). */
  public static ExportFormat parse(String s) {
    if (s != null) {
      for (ExportFormat f : values()) if (f.wireName().equalsIgnoreCase(s.trim())) return f;
    }
    // The algorithms' names are what a user has in mind (datasets.md's table): name the format they take.
    String hint = "";
    if (s != null) {
      String a = s.trim().toLowerCase(Locale.ROOT);
      if (a.equals("ppo") || a.equals("grpo") || a.equals("distillation")) {
        hint = " (" + a + " jobs train on the rl format: give rl)";
      }
    }
    throw new IllegalArgumentException("format '" + s + "' is unknown; allowed: sft, dpo, rl" + hint);
  }

  /**
   * The format a training algorithm needs: sft → SFT; dpo → DPO; ppo, grpo → RL; distillation → RL
   * (on-policy distillation needs only the prompts: the student answers them, the teacher scores).
   */
  public static ExportFormat forAlgorithm(String algorithm) {
    String a = algorithm == null ? "" : algorithm.trim().toLowerCase(Locale.ROOT);
    return switch (a) {
      case "sft" -> SFT;
      case "dpo" -> DPO;
      case "ppo", "grpo", "distillation" -> RL;
      default -> throw new IllegalArgumentException(
          "algorithm '" + algorithm + "' is unknown; allowed: sft, ppo, grpo, dpo, distillation");
    };
  }
}
