package io.otl.core.model;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.SettingsOverlay;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Run-time rollout settings of one agent ({@code PUT /v1/training/{agentId}/policy} with {@code
 * model-update.*} keys): the overrides are the ModelVersion entity's event {@link RolloutPolicyChanged}, laid
 * over the file's {@code model-update} section by a {@link SettingsOverlay.Resolver} the node builds
 * (the same overlay and validator as for the training policy's keys). They apply from the entity's
 * next decision on: a rollout in progress keeps its plan (canary ratio and steps, fixed by its {@code RolloutStarted}), while step-duration,
 * min-samples-per-step, confidence, tolerances and rollback-on-degradation are read at its next step
 * check; auto-deploy, evaluation-metrics, the offline gate and retain-previous at their next use.
 */
public final class RolloutPolicy {

  /** The section of these keys; run-time keys are sent and stored with it ({@code model-update.canary-ratio}). */
  public static final String SECTION = ModelSettings.PATH;
  private static final String PREFIX = SECTION + ".";
  /** The keys there are: those of reference.conf's {@code agentscope.training.model-update}. */
  private static final Config KNOWN =
      ConfigFactory.defaultReference().getConfig("agentscope.training." + SECTION);

  /** What a body may set (the known keys, with the section's prefix), and what is said of the rest. */
  private static final SettingsOverlay.Keys KEYS = new SettingsOverlay.Keys(
      RolloutPolicy::isSettableKey,
      " is not a model-update key; known: " + known(),
      "a model-update key of the policy is not a key name; known: " + known(),
      "a model-update key of the policy is not a key name; known: " + known(),
      " must have a value (null is not one)");

  private RolloutPolicy() {}

  /** A key that takes a value ({@code model-update.canary-ratio}), not a section ({@code model-update.tolerance}). */
  private static boolean isSettableKey(String key) {
    if (!key.startsWith(PREFIX)) return false;
    String rest = key.substring(PREFIX.length());
    try {
      return KNOWN.hasPath(rest) && KNOWN.getValue(rest).valueType() != com.typesafe.config.ConfigValueType.OBJECT;
    } catch (com.typesafe.config.ConfigException.BadPath e) {
      return false; // not a key name at all: the caller says so
    }
  }

  /**
   * The agent's run-time rollout overrides were replaced (untagged: no transition of a version).
   * {@code overrides} holds every run-time key, flat and with its {@code model-update.} prefix; empty
   * means the file's settings again.
   */
  public record RolloutPolicyChanged(Map<String, Object> overrides, String changedBy, Instant at) implements ModelEvents.Event {
    public RolloutPolicyChanged {
      overrides = io.otl.core.PlainValues.plain(overrides); // JSON arrays replay as Scala lists
    }
  }

  /** Run-time changes refused: the entity was built from settings without their configuration. */
  public static SettingsOverlay.Resolver<ModelSettings> fixed(ModelSettings settings) {
    return SettingsOverlay.fixed(settings,
        "this node cannot change rollout settings at run time (the entity has no configuration to lay them over)");
  }

  /** True for a key of the body that belongs to this section ({@code model-update} or {@code model-update.*}). */
  public static boolean isRolloutKey(String key) {
    return key.equals(SECTION) || key.startsWith(PREFIX);
  }

  /** A body's keys: the rollout ones (see {@link #isRolloutKey}) and the training ones, each as sent. */
  public record Split(Map<String, Object> training, Map<String, Object> rollout) {}

  /** Splits a {@code PUT …/policy} body by section. */
  public static Split split(Map<String, ?> body) {
    Map<String, Object> rollout = new LinkedHashMap<>();
    Map<String, Object> training = new LinkedHashMap<>();
    if (body != null) body.forEach((k, v) -> (isRolloutKey(k) ? rollout : training).put(k, v));
    return new Split(training, rollout);
  }

  /** The known keys, relative to the section, sorted (for messages). */
  public static String known() {
    return String.join(", ", new TreeSet<>(KNOWN.entrySet().stream().map(Map.Entry::getKey).toList()));
  }

  /**
   * Flat {@code model-update.<key> -> value} of the body's rollout keys (flat or nested); every key
   * must be one of reference.conf's, values must not be null. A key is client text: named only when
   * it is a plain word.
   */
  public static Map<String, Object> flatten(Map<String, ?> raw) {
    return SettingsOverlay.flatten(raw, KEYS);
  }

  /**
   * A resolver laying overrides over the agent's {@code agentscope.training} section (already
   * holding its file's {@code agents.<agentId>.model-update}), checked by {@code validate} (the
   * node's start-up validator; may throw IllegalArgumentException) and then read by {@link
   * ModelSettings#fromConfig}, whose own checks across keys run last.
   */
  public static SettingsOverlay.Resolver<ModelSettings> over(Config agentscopeTraining, Consumer<Config> validate) {
    // The flat keys carry their section (model-update.canary-ratio): laid over the whole section.
    return SettingsOverlay.over(agentscopeTraining, "", RolloutPolicy::flatten, validate, ModelSettings::fromConfig);
  }

  /** The settings in force, by {@code model-update.<key>}, as {@code GET …/policy} shows them. */
  public static Map<String, Object> effective(ModelSettings s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(PREFIX + "auto-deploy", s.autoDeploy());
    m.put(PREFIX + "canary-ratio", s.canaryRatio());
    m.put(PREFIX + "rollback-on-degradation", s.rollbackOnDegradation());
    m.put(PREFIX + "evaluation-metrics", s.evaluationMetrics().stream().map(Metric::key).toList());
    // The plan starts with the canary ratio; the key holds the steps after it, as it is written.
    List<Double> plan = s.steps();
    m.put(PREFIX + "steps", plan.subList(1, plan.size()));
    m.put(PREFIX + "step-duration", duration(s.stepDuration()));
    m.put(PREFIX + "min-samples-per-step", s.minSamplesPerStep());
    m.put(PREFIX + "confidence", s.confidence());
    for (Metric metric : Metric.values()) {
      m.put(PREFIX + "tolerance." + metric.key(), s.toleranceOf(metric));
    }
    m.put(PREFIX + "retain-previous", duration(s.retainPrevious()));
    m.put(PREFIX + "offline-gate-tolerance", s.offlineGateTolerance());
    return m;
  }

  /** A duration as the file writes it ({@code 1h}, {@code 90s}), so a GET's value can be PUT back. */
  static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms % 86_400_000L == 0 && ms > 0) return ms / 86_400_000L + "d";
    if (ms % 3_600_000L == 0 && ms > 0) return ms / 3_600_000L + "h";
    if (ms % 60_000L == 0 && ms > 0) return ms / 60_000L + "m";
    if (ms % 1000L == 0) return ms / 1000L + "s";
    return ms + "ms";
  }

  /** The audit timeline's line for a change. */
  public static String describe(RolloutPolicyChanged c) {
    return "rollout settings changed by " + c.changedBy() + ": " + (c.overrides().isEmpty()
        ? "run-time overrides cleared (the file's model-update settings)" : "run-time overrides " + c.overrides());
  }
}
