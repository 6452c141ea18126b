package io.otl.core.model;

import static io.otl.core.model.ModelJournal.T0;
import static io.otl.core.model.ModelJournal.concat;
import static io.otl.core.model.ModelJournal.ready;
import static io.otl.core.model.ModelJournal.replay;
import static io.otl.core.model.ModelJournal.stable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentRequested;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelEvents.StepAdvanced;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelViews.MetricSummary;
import io.otl.core.model.ModelViews.ModelsView;
import io.otl.core.model.ModelViews.VersionView;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * GET /v1/models/{agentId} of a replayed state (the view the live entity and the audit share):
 * the share each version serves, the step and its deadline for the candidate only, the retention
 * deadline for a RETIRED version only, what the current step measured for candidate and stable,
 * and the deployment.
 */
class ModelViewsTest {

  private static final List<Double> STEPS = ModelSettings.defaults().steps();
  private static final Duration STEP = Duration.ofMinutes(30);
  private static final Instant T1 = T0.plusSeconds(60);

  private static VersionView of(ModelsView view, String version) {
    return view.versions().stream().filter(v -> v.version().equals(version)).findFirst().orElseThrow();
  }

  /** v1 stable, v2 at step 1 (20 %) since T1, v3 READY; one outcome each for v2 and v1 in the step. */
  private static List<Event> rampWithOutcomes() {
    return concat(stable("v1", T0), ready("v2", T0), ready("v3", T0), List.of(
        new RolloutStarted("v2", "v1", STEPS, "auto-deploy", T0),
        new OutcomeRecorded("s-old", "v2", false, 1.0, 0, 1, 5000.0, T0),
        new StepAdvanced("v2", 0, 1, 0.20, List.of(), T1),
        new OutcomeRecorded("s1", "v2", true, 5.0, 1, 0, 800.0, T1),
        new OutcomeRecorded("s2", "v1", false, null, 0, 0, 1200.0, T1)));
  }

  @Test
  void duringARolloutTheCandidateShowsItsStepDeadlineAndBothShowTheStepsFigures() {
    ModelsView view = ModelViews.of("a1", replay(rampWithOutcomes()), STEP);
    assertEquals("a1", view.agentId());
    assertEquals("v1", view.stable());
    assertEquals("v2", view.candidate());
    assertEquals(List.of("v1", "v2", "v3"), view.versions().stream().map(VersionView::version).toList());

    VersionView v2 = of(view, "v2");
    assertEquals(VersionState.RAMP, v2.state());
    assertEquals(0.20, v2.ratio());
    assertEquals(1, v2.step());
    assertEquals(T1, v2.stepStartedAt());
    assertEquals(T1.plus(STEP), v2.stepDeadline());
    // The step counts the outcome of its own window only; online counts every rollout's.
    double p95 = OutcomeAggregates.EMPTY.add(true, 5.0, 1, 0, 800.0).value(Metric.RESPONSE_LATENCY);
    assertEquals(new MetricSummary(1, 1.0, 1, 1.0, 1, p95, 1), v2.metrics().currentStep());
    assertEquals(2, v2.metrics().online().sessions());
    assertEquals(0.5, v2.metrics().online().taskSuccessRate());

    VersionView v1 = of(view, "v1");
    assertEquals(0.80, v1.ratio(), 1e-12);
    assertNull(v1.step());
    assertNull(v1.stepStartedAt());
    assertNull(v1.stepDeadline());
    assertEquals(1, v1.metrics().currentStep().sessions());
    assertEquals(0.0, v1.metrics().currentStep().taskSuccessRate());
    assertEquals(0, v1.metrics().currentStep().userSatisfactionSamples(), "no rating, no thumbs: no observation");

    VersionView v3 = of(view, "v3");
    assertEquals(0.0, v3.ratio());
    assertNull(v3.metrics().currentStep());
    assertNull(v3.step());
  }

  @Test
  void aPausedCandidateHasNoDeadline() {
    List<Event> events = rampWithOutcomes();
    events.add(new RolloutPaused("v2", false, "manual pause", List.of(), T1.plusSeconds(5)));
    VersionView v2 = of(ModelViews.of("a1", replay(events), STEP), "v2");
    assertEquals(VersionState.PAUSED, v2.state());
    assertEquals(0.20, v2.ratio(), "PAUSED holds the ratio");
    assertEquals(1, v2.step());
    assertEquals(T1, v2.stepStartedAt());
    assertNull(v2.stepDeadline());
  }

  @Test
  void afterPromotionTheNewStableServesEverythingAndThePreviousShowsUntilWhenItIsRestorable() {
    Instant until = T1.plus(Duration.ofDays(7));
    List<Event> events = rampWithOutcomes();
    events.add(new VersionPromoted("v2", "v1", until, true, "all steps passed", List.of(), T1));
    State s = replay(events);
    ModelsView view = ModelViews.of("a1", s, STEP);
    assertEquals("v2", view.stable());
    assertNull(view.candidate());
    assertEquals(1.0, of(view, "v2").ratio());
    assertNull(of(view, "v2").stepDeadline());
    assertNull(of(view, "v2").metrics().currentStep());
    assertNull(of(view, "v2").retainedUntil(), "only a RETIRED version has a retention deadline");
    VersionView v1 = of(view, "v1");
    assertEquals(VersionState.RETIRED, v1.state());
    assertEquals(0.0, v1.ratio());
    assertEquals(until, v1.retainedUntil());
  }

  @Test
  void eachVersionShowsItsOfflineMetricsAndDeployment() {
    List<Event> events = concat(stable("v1", T0), List.of(
        new ModelEvents.VersionRegistered("v2", "s3://ckpt/v2", "http://v2", "job-7",
            Map.of("task-success-rate", 0.9), false, T0),
        new DeploymentRequested("v2", "vllm-lora", "http://vllm/v1", "a1-v2-x", "auto-deploy", T0),
        new DeploymentConfirmed("v2", "http://vllm/v1", "a1-v2-x", T0)));
    ModelsView view = ModelViews.of("a1", replay(events), STEP);
    VersionView v2 = of(view, "v2");
    assertEquals(Map.of("task-success-rate", 0.9), v2.metrics().offline());
    assertEquals("job-7", v2.sourceJobId());
    assertEquals("s3://ckpt/v2", v2.artifact());
    assertEquals("http://v2", v2.endpoint());
    assertEquals(T0, v2.registeredAt());
    assertEquals("http://vllm/v1", v2.deployment().endpoint());
    assertEquals(Deployments.Status.CONFIRMED, v2.deployment().status());
    assertNull(of(view, "v1").deployment());
    assertEquals(1.0, of(view, "v1").ratio());
  }
}
