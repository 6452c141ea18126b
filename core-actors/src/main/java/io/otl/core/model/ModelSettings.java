package io.otl.core.model;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Settings of the ModelVersion entity, read from {@code agentscope.training.model-update}
 * (defaults and one comment per key in {@code core-actors/src/main/resources/reference.conf}).
 *
 * @param autoDeploy a READY version moves into CANARY by itself (else it waits for Promote)
 * @param canaryRatio share of sessions routed to a candidate in its first step, in (0, 1)
 * @param rollbackOnDegradation roll back automatically on degradation; when false the rollout is
 *     PAUSED instead, with the figures, and waits for an operator
 * @param evaluationMetrics metrics used by the offline gate and the online degradation tests
 * @param steps the effective rollout plan: {@code canaryRatio}, then every configured step above
 *     it, ending with 1.0 (reaching 1.0 is the promotion)
 * @param stepDuration minimum time a step lasts before it may advance
 * @param minSamplesPerStep observations needed per metric and per arm in the current step before
 *     a metric is tested and before a step may advance
 * @param confidence one-sided confidence of the degradation tests, in (0.5, 1)
 * @param tolerance per metric: absolute for rates/satisfaction, relative for latency
 * @param retainPrevious how long the previous stable stays available for a manual rollback
 * @param offlineGateTolerance relative slack of the offline gate: a candidate passes a metric when
 *     it is at least {@code baseline × (1 − t)} (higher-better) or at most {@code baseline × (1 +
 *     t)} (latency)
 */
public record ModelSettings(
    boolean autoDeploy,
    double canaryRatio,
    boolean rollbackOnDegradation,
    List<Metric> evaluationMetrics,
    List<Double> steps,
    Duration stepDuration,
    int minSamplesPerStep,
    double confidence,
    Map<Metric, Double> tolerance,
    Duration retainPrevious,
    double offlineGateTolerance) {

  /** Configuration path (under {@code agentscope.training}) of these settings. */
  public static final String PATH = "model-update";

  private static final String PREFIX = "agentscope.training.model-update.";

  public ModelSettings {
    require(canaryRatio > 0 && canaryRatio < 1, "canary-ratio", canaryRatio, "a number > 0 and < 1");
    require(
        evaluationMetrics != null && !evaluationMetrics.isEmpty(),
        "evaluation-metrics",
        evaluationMetrics,
        "a non-empty list of " + Metric.allowedKeys());
    for (Metric m : evaluationMetrics) {
      require(m != null && !m.guardrail(), "evaluation-metrics", evaluationMetrics,
          "a non-empty list of " + Metric.allowedKeys() + " (the guardrails "
              + Metric.GUARDRAILS.stream().map(Metric::key).toList() + " are always tested)");
    }
    evaluationMetrics = List.copyOf(new LinkedHashSet<>(evaluationMetrics));
    require(steps != null && !steps.isEmpty(), "steps", steps, "a non-empty list ending with 1.0");
    steps = effectiveSteps(canaryRatio, steps);
    require(
        stepDuration != null && !stepDuration.isNegative() && !stepDuration.isZero(),
        "step-duration",
        stepDuration,
        "a positive duration");
    require(minSamplesPerStep >= 1, "min-samples-per-step", minSamplesPerStep, "an integer >= 1");
    require(confidence > 0.5 && confidence < 1, "confidence", confidence, "a number > 0.5 and < 1");
    require(tolerance != null, "tolerance", tolerance, "an object with one number per metric");
    EnumMap<Metric, Double> tol = new EnumMap<>(Metric.class);
    for (Metric m : Metric.values()) {
      Double t = tolerance.get(m);
      require(
          t != null && t >= 0 && t < 1 && !t.isNaN(),
          "tolerance." + m.key(),
          t,
          "a number >= 0 and < 1 (" + (m.relativeTolerance() ? "relative" : "absolute") + ")");
      tol.put(m, t);
    }
    tolerance = Collections.unmodifiableMap(tol);
    List<Metric> tested = new ArrayList<>(evaluationMetrics);
    tested.addAll(Metric.GUARDRAILS);
    // The metric that needs the most sessions sets the bar, and the message names its number: a user
    // who sets the number asked for must not be refused again for the next metric.
    Metric hardest = null;
    int needed = 0;
    for (Metric m : tested) {
      if (m.relativeTolerance()) {
        continue; // latency, tokens: no largest possible shortfall, some rise is always detectable
      }
      int n = SequentialTest.minimumSamplesPerStep(confidence, steps.size(), tested.size(), tol.get(m));
      if (n > needed) {
        hardest = m;
        needed = n;
      }
    }
    if (hardest != null) {
      Metric m = hardest;
      require(
          minSamplesPerStep >= needed,
          "min-samples-per-step",
          minSamplesPerStep,
          "at least " + needed + ": with fewer, the sequential test at confidence " + confidence
              + " (split over " + (steps.size() - 1) + " steps and " + tested.size()
              + " metrics, guardrails included) cannot find " + m.key() + " degraded beyond its tolerance "
              + tol.get(m) + " even if every candidate session fails, and steps would advance "
              + "on evidence that can never reach that confidence");
    }
    require(
        retainPrevious != null && !retainPrevious.isNegative(),
        "retain-previous",
        retainPrevious,
        "a duration >= 0");
    require(
        offlineGateTolerance >= 0 && offlineGateTolerance < 1,
        "offline-gate-tolerance",
        offlineGateTolerance,
        "a number >= 0 and < 1");
  }

  /**
   * Every metric the online test runs, in Holm's family: the evaluation metrics, then the
   * guardrails (tested when sessions carry their figures; they still count in the family when
   * they do not, which only makes the other levels stricter).
   */
  public List<Metric> testedMetrics() {
    List<Metric> all = new ArrayList<>(evaluationMetrics);
    all.addAll(Metric.GUARDRAILS);
    return all;
  }

  /** The tolerance of one metric. */
  public double toleranceOf(Metric metric) {
    return tolerance.get(metric);
  }

  /** Reads {@code model-update.*} of the given {@code agentscope.training} config. */
  public static ModelSettings fromConfig(Config agentscopeTraining) {
    Config c = read("", () -> agentscopeTraining.getConfig(PATH));
    List<Metric> metrics = new ArrayList<>();
    for (String key : read("evaluation-metrics", () -> c.getStringList("evaluation-metrics"))) {
      try {
        metrics.add(Metric.fromKey(key));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            PREFIX + "evaluation-metrics: '" + key + "' is not allowed; allowed: " + Metric.allowedKeys(),
            e);
      }
    }
    Map<Metric, Double> tolerance = new EnumMap<>(Metric.class);
    for (Metric m : Metric.values()) {
      tolerance.put(m, read("tolerance." + m.key(), () -> c.getDouble("tolerance." + m.key())));
    }
    return new ModelSettings(
        read("auto-deploy", () -> c.getBoolean("auto-deploy")),
        read("canary-ratio", () -> c.getDouble("canary-ratio")),
        read("rollback-on-degradation", () -> c.getBoolean("rollback-on-degradation")),
        metrics,
        read("steps", () -> c.getDoubleList("steps")),
        read("step-duration", () -> c.getDuration("step-duration")),
        read("min-samples-per-step", () -> c.getInt("min-samples-per-step")),
        read("confidence", () -> c.getDouble("confidence")),
        tolerance,
        read("retain-previous", () -> c.getDuration("retain-previous")),
        read("offline-gate-tolerance", () -> c.getDouble("offline-gate-tolerance")));
  }

  /** The defaults of {@code reference.conf}. */
  public static ModelSettings defaults() {
    return fromConfig(ConfigFactory.defaultReference().getConfig("agentscope.training"));
  }

  /**
   * The first step is always {@code canaryRatio}; the configured steps above it follow; the plan
   * ends at 1.0. So overriding only {@code canary-ratio} (as AgentScope users do) keeps working.
   */
  private static List<Double> effectiveSteps(double canaryRatio, List<Double> configured) {
    double previous = -1;
    for (Double s : configured) {
      require(
          s != null && s > 0 && s <= 1 && s > previous,
          "steps",
          configured,
          "strictly increasing ratios in (0, 1] ending with 1.0");
      previous = s;
    }
    require(
        configured.get(configured.size() - 1) == 1.0,
        "steps",
        configured,
        "strictly increasing ratios in (0, 1] ending with 1.0");
    List<Double> plan = new ArrayList<>();
    plan.add(canaryRatio);
    for (Double s : configured) {
      if (s > canaryRatio) {
        plan.add(s);
      }
    }
    return List.copyOf(plan);
  }

  private static <T> T read(String key, Supplier<T> reader) {
    try {
      return reader.get();
    } catch (ConfigException.Missing e) {
      throw new IllegalArgumentException(PREFIX + key + ": missing (see reference.conf)", e);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(
          PREFIX + key + ": invalid value (" + e.getMessage() + ")", e);
    }
  }

  private static void require(boolean ok, String key, Object value, String allowed) {
    if (!ok) {
      throw new IllegalArgumentException(
          PREFIX + key + " = " + shown(value) + " is not allowed; expected " + allowed);
    }
  }

  /** A duration as the user writes it in the file (-1d), not Java's ISO form (PT-24H). */
  private static Object shown(Object value) {
    if (!(value instanceof Duration d)) return value;
    return d.isNegative() ? "-" + RolloutPolicy.duration(d.negated()) : RolloutPolicy.duration(d);
  }
}
