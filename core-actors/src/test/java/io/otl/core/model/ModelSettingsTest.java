package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModelSettingsTest {

  static Config training(String overrides) {
    return ConfigFactory.parseString("model-update { " + overrides + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training"));
  }

  @Test
  void defaultsComeFromReferenceConf() {
    ModelSettings s = ModelSettings.defaults();
    assertTrue(s.autoDeploy());
    assertEquals(0.05, s.canaryRatio());
    assertTrue(s.rollbackOnDegradation());
    assertEquals(List.of(Metric.TASK_SUCCESS_RATE, Metric.USER_SATISFACTION, Metric.RESPONSE_LATENCY),
        s.evaluationMetrics());
    assertEquals(List.of(0.05, 0.20, 0.50, 1.0), s.steps());
    assertEquals(Duration.ofHours(1), s.stepDuration());
    assertEquals(100, s.minSamplesPerStep());
    assertEquals(0.95, s.confidence());
    assertEquals(0.02, s.toleranceOf(Metric.TASK_SUCCESS_RATE));
    assertEquals(0.05, s.toleranceOf(Metric.USER_SATISFACTION));
    assertEquals(0.10, s.toleranceOf(Metric.RESPONSE_LATENCY));
    assertEquals(Duration.ofDays(7), s.retainPrevious());
    assertEquals(0.0, s.offlineGateTolerance());
  }

  @Test
  void canaryRatioIsAlwaysTheFirstStep() {
    assertEquals(List.of(0.1, 0.2, 0.5, 1.0),
        ModelSettings.fromConfig(training("canary-ratio = 0.1")).steps());
  }

  @Test
  void minSamplesTooSmallForTheSequentialTestIsRefusedWithTheNumberNeeded() {
    // Five tests share the budget: three evaluation metrics and the two guardrails.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("min-samples-per-step = 7")));
    assertTrue(e.getMessage().contains("model-update.min-samples-per-step = 7")
        && e.getMessage().contains("at least 8") && e.getMessage().contains("5 metrics, guardrails included"),
        e.getMessage());
    assertEquals(8, ModelSettings.fromConfig(training("min-samples-per-step = 8")).minSamplesPerStep());

    // A higher confidence needs more: the bar of the sequential test rises.
    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("confidence = 0.999, min-samples-per-step = 11")));
    assertTrue(e.getMessage().contains("at least 13"), e.getMessage());
    assertEquals(13, ModelSettings.fromConfig(training("confidence = 0.999, min-samples-per-step = 13"))
        .minSamplesPerStep());
    // Latency has no largest shortfall, but the upstream-error-rate guardrail (absolute) does.
    e = assertThrows(IllegalArgumentException.class, () -> ModelSettings.fromConfig(
        training("evaluation-metrics = [response-latency], min-samples-per-step = 1")));
    assertTrue(e.getMessage().contains("upstream-error-rate"), e.getMessage());
    // With enough sessions for that guardrail, latency alone is accepted.
    assertEquals(7, ModelSettings.fromConfig(
        training("evaluation-metrics = [response-latency], min-samples-per-step = 7")).minSamplesPerStep());
    // The number asked for is the one that passes: that of the metric needing most (here user-satisfaction,
    // whose tolerance is wider than task-success-rate's), not the first metric's (it said 6, then refused 6).
    String twoSteps = "canary-ratio = 0.5, steps = [1.0], ";
    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training(twoSteps + "min-samples-per-step = 5")));
    assertTrue(e.getMessage().contains("at least 7") && e.getMessage().contains("user-satisfaction"), e.getMessage());
    assertEquals(7, ModelSettings.fromConfig(training(twoSteps + "min-samples-per-step = 7")).minSamplesPerStep());
  }

  @Test
  void guardrailsAreNotEvaluationMetrics() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelSettings.fromConfig(
        training("evaluation-metrics = [task-success-rate, tokens-per-session]")));
    assertTrue(e.getMessage().contains("evaluation-metrics") && e.getMessage().contains("always tested"),
        e.getMessage());
    ModelSettings d = ModelSettings.defaults();
    assertEquals(List.of(Metric.TASK_SUCCESS_RATE, Metric.USER_SATISFACTION, Metric.RESPONSE_LATENCY,
        Metric.UPSTREAM_ERROR_RATE, Metric.TOKENS_PER_SESSION), d.testedMetrics());
    assertEquals(0.02, d.toleranceOf(Metric.UPSTREAM_ERROR_RATE));
    assertEquals(0.20, d.toleranceOf(Metric.TOKENS_PER_SESSION));
  }

  @Test
  void invalidValuesNameTheKeyTheValueAndWhatIsAllowed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("canary-ratio = 1.5")));
    assertTrue(e.getMessage().contains("model-update.canary-ratio"), e.getMessage());
    assertTrue(e.getMessage().contains("1.5") && e.getMessage().contains("< 1"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("evaluation-metrics = [task-success-rate, bleu]")));
    assertTrue(e.getMessage().contains("evaluation-metrics") && e.getMessage().contains("bleu")
        && e.getMessage().contains("response-latency"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("steps = [0.2, 0.1, 1.0]")));
    assertTrue(e.getMessage().contains("steps") && e.getMessage().contains("increasing"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("steps = [0.2, 0.5]")));
    assertTrue(e.getMessage().contains("ending with 1.0"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("confidence = 0.3")));
    assertTrue(e.getMessage().contains("confidence = 0.3"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("step-duration = soon")));
    assertTrue(e.getMessage().contains("step-duration"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training("tolerance.response-latency = -0.1")));
    assertTrue(e.getMessage().contains("tolerance.response-latency"), e.getMessage());
  }

  private static void refused(String overrides, String... fragments) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSettings.fromConfig(training(overrides)), overrides);
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), overrides + " → " + e.getMessage());
    }
  }

  private static ModelSettings accepted(String overrides) {
    return ModelSettings.fromConfig(training(overrides));
  }

  /** Each bound where reference.conf's comments put it, checked on both sides. */
  @Test
  void eachRangeIsOpenOrClosedAsReferenceConfSays() {
    // canary-ratio: 0 < r < 1.
    refused("canary-ratio = 0", "canary-ratio = 0.0 is not allowed");
    refused("canary-ratio = 1.0", "canary-ratio = 1.0 is not allowed");
    assertEquals(List.of(0.99, 1.0), accepted("canary-ratio = 0.99").steps());
    // confidence: 0.5 < c < 1.
    refused("confidence = 0.5", "confidence = 0.5 is not allowed", "> 0.5 and < 1");
    refused("confidence = 1.0", "confidence = 1.0 is not allowed");
    // tolerance: >= 0 and < 1, relative for latency, absolute for rates.
    assertEquals(0.0, accepted("tolerance.response-latency = 0").toleranceOf(Metric.RESPONSE_LATENCY));
    refused("tolerance.response-latency = 1.0", "tolerance.response-latency = 1.0", "< 1 (relative)");
    refused("tolerance.task-success-rate = 1.0", "tolerance.task-success-rate = 1.0", "< 1 (absolute)");
    // offline-gate-tolerance: >= 0 and < 1.
    assertEquals(0.99, accepted("offline-gate-tolerance = 0.99").offlineGateTolerance());
    refused("offline-gate-tolerance = 1.0", "offline-gate-tolerance = 1.0 is not allowed");
    refused("offline-gate-tolerance = -0.1", "offline-gate-tolerance = -0.1 is not allowed");
    // retain-previous: a duration >= 0.
    assertEquals(Duration.ZERO, accepted("retain-previous = 0s").retainPrevious());
    refused("retain-previous = -1d", "retain-previous = -1d is not allowed");
    // step-duration: positive; min-samples-per-step: an integer >= 1.
    refused("step-duration = 0s", "step-duration = 0s is not allowed", "a positive duration");
    refused("min-samples-per-step = 0", "min-samples-per-step = 0 is not allowed; expected an integer >= 1");
    // Non-empty lists.
    refused("evaluation-metrics = []", "evaluation-metrics = [] is not allowed");
    refused("steps = []", "steps = [] is not allowed");
  }

  @Test
  void stepsAreStrictlyIncreasingRatiosInTheHalfOpenUnitIntervalAndThoseAtOrBelowTheCanaryAreDropped() {
    refused("steps = [0.0, 0.5, 1.0]", "strictly increasing ratios in (0, 1]");
    refused("steps = [0.2, 0.2, 1.0]", "strictly increasing");
    refused("steps = [0.2, 1.5]", "strictly increasing");
    assertEquals(List.of(0.05, 0.5, 1.0), accepted("canary-ratio = 0.05, steps = [0.05, 0.5, 1.0]").steps());
    assertEquals(List.of(0.3, 0.5, 1.0), accepted("canary-ratio = 0.3, steps = [0.2, 0.3, 0.5, 1.0]").steps());
  }

  @Test
  void aTooSmallMinimumSaysOverHowManyStepsAndMetricsTheBudgetIsSplit() {
    // Default plan 5 % → 20 % → 50 % → 100 %: three steps are tested (the last is the promotion).
    refused("min-samples-per-step = 7", "split over 3 steps and 5 metrics, guardrails included");
    refused("min-samples-per-step = 7, steps = [0.5, 1.0]", "split over 2 steps and 5 metrics");
  }

  @Test
  void settingsBuiltInCodeNeedATolerancePerMetric() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ModelSettings(true, 0.05,
        true, List.of(Metric.TASK_SUCCESS_RATE), List.of(0.2, 0.5, 1.0), Duration.ofHours(1), 100, 0.95, null,
        Duration.ofDays(7), 0));
    assertTrue(e.getMessage().contains("model-update.tolerance = null is not allowed"), e.getMessage());
  }
}
