package io.otl.core.coordinator;

import com.typesafe.config.Config;
import io.otl.core.Ids;
import io.otl.core.SettingsOverlay;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Per-agent policy overrides: which training-runner keys one agent may set differently (in the
 * file under {@code agentscope.training.agents.<agentId>}, or at run time with {@code PUT
 * /v1/training/{agentId}/policy}), and how a set of them becomes that agent's {@link
 * TrainingPolicy}. The same rules serve both doors, so a run-time change is refused exactly
 * where the file would refuse to start; the overlay itself is {@link SettingsOverlay}'s, as for the
 * rollout keys ({@link io.otl.core.model.RolloutPolicy}).
 */
public final class PolicyOverrides {

  /** Overridable keys, relative to training-runner; a key ending in '.' is a section whose keys all are. */
  public static final List<String> OVERRIDABLE = List.of(
      "trigger.type", "trigger.cron", "trigger.min-samples", "trigger.missed-slots", "trigger.zone",
      "algorithm", "base-model", "hyperparams.");

  /** What a body may set, and what is said of the rest. */
  private static final SettingsOverlay.Keys KEYS = new SettingsOverlay.Keys(PolicyOverrides::overridable,
      " cannot be set per agent; allowed: " + allowed(),
      "a key of the policy is not a key name (letters, digits, '-', nested with '.'); allowed: " + allowed(),
      "the policy is not an object of keys and values",
      " must have a value (null is not one); allowed keys: " + allowed());

  private PolicyOverrides() {}

  /** Run-time changes refused: the coordinator was built from a policy without its configuration. */
  public static SettingsOverlay.Resolver<TrainingPolicy> fixed(TrainingPolicy policy) {
    return SettingsOverlay.fixed(policy,
        "this node cannot change a policy at run time (the coordinator has no configuration to lay it over)");
  }

  /** True when {@code key} (relative to training-runner) may be set per agent. */
  public static boolean overridable(String key) {
    for (String k : OVERRIDABLE) {
      if (k.endsWith(".") ? key.startsWith(k) && key.length() > k.length() : key.equals(k)) return true;
    }
    return false;
  }

  /** The longest string a policy value may be: a model name, a path (PATH_MAX) or a setting. */
  public static final int MAX_VALUE_LENGTH = 4096;

  /**
   * Checks the values of a set of overrides before it is journaled: none longer than {@link
   * #MAX_VALUE_LENGTH} (a 100,000-character base-model was journaled as sent, and repeated in every
   * job's request), none holding personal data ({@link #refusePersonalData}).
   */
  public static void checkValues(Map<String, Object> flat) {
    for (Map.Entry<String, Object> e : flat.entrySet()) {
      List<?> values = e.getValue() instanceof List<?> l ? l : List.of(e.getValue());
      for (Object v : values) {
        if (v instanceof String text && text.length() > MAX_VALUE_LENGTH) {
          throw new IllegalArgumentException(Ids.shownPath(e.getKey()) + ": must be at most " + MAX_VALUE_LENGTH
              + " characters (a policy value names a model, a path or a setting)");
        }
      }
    }
    refusePersonalData(flat);
  }

  /**
   * Refuses a value that holds personal data: an override is journaled as sent (the policy-changed
   * event) and a policy value names a model, a path or a setting, never a person (raw PII never
   * reaches the journal, design §3.1). Refused rather than replaced, since a placeholder in a model
   * name would train with a model nobody gave. Called after the validator, so a value of the wrong
   * form still gets the validator's message; the value is never repeated.
   */
  public static void refusePersonalData(Map<String, Object> flat) {
    for (Map.Entry<String, Object> e : flat.entrySet()) {
      List<?> values = e.getValue() instanceof List<?> l ? l : List.of(e.getValue());
      for (Object v : values) {
        if (v instanceof String text) {
          io.otl.core.session.Desensitizer.refusePersonalData(Ids.shownPath(e.getKey()), text,
              "a policy value names a model, a path or a setting");
        }
      }
    }
  }

  /**
   * The allowed keys as a user reads them ({@code hyperparams.*}), with the rollout keys that a
   * {@code PUT …/policy} body may carry too (they go to the agent's ModelVersion, not here).
   */
  public static String allowed() {
    return String.join(", ", OVERRIDABLE.stream().map(k -> k.endsWith(".") ? k + "*" : k).toList())
        + ", model-update.*";
  }

  /**
   * Flat {@code key -> value} of a JSON-like object, nested sections accepted ({@code {"trigger":
   * {"min-samples": 5}}} is {@code trigger.min-samples}); keys are checked against {@link
   * #OVERRIDABLE}, values must not be null.
   */
  public static Map<String, Object> flatten(Map<String, ?> raw) {
    return SettingsOverlay.flatten(raw, KEYS);
  }

  /**
   * A resolver laying overrides over the agent's {@code agentscope.training} section (already
   * holding its file overrides), checked by {@code validate} (the node's start-up validator; may
   * throw IllegalArgumentException) and then read by {@link TrainingPolicy#fromConfig}.
   */
  public static SettingsOverlay.Resolver<TrainingPolicy> over(Config agentscopeTraining, Consumer<Config> validate) {
    return SettingsOverlay.over(agentscopeTraining, TrainingPolicy.PATH, PolicyOverrides::flatten, validate,
        TrainingPolicy::fromConfig);
  }

  /** The overridable settings of a policy, by key, as GET .../policy shows them. */
  public static Map<String, Object> effective(TrainingPolicy p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("trigger.type", p.triggerNames());
    m.put("trigger.cron", p.cron() == null ? "" : p.cron().expression());
    m.put("trigger.min-samples", p.minSamples());
    m.put("trigger.missed-slots", p.missedSlots().name().toLowerCase(java.util.Locale.ROOT));
    m.put("trigger.zone", p.zone().getId());
    m.put("algorithm", p.algorithm());
    m.put("base-model", p.baseModel());
    p.hyperparams().forEach((k, v) -> m.put("hyperparams." + k, v));
    return m;
  }
}
