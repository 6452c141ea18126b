package io.otl.core.model;

import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.ModelState.VersionState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The step rule of a rollout as a pure function, so that the entity ({@link ModelVersion}) and
 * the simulation harness ({@code Bench C1}) run the very same decision.
 *
 * <p>Order of the checks at each look (after every outcome and at the step's deadline):
 *
 * <ol>
 *   <li>sample-ratio mismatch ({@link SampleRatioCheck}) → pause, unless an operator resumed the
 *       step after such a pause: the figures of a broken split decide nothing;
 *   <li>any tested metric or guardrail degraded → roll back (or pause when
 *       rollback-on-degradation is off);
 *   <li>paused, or fewer than {@code min-samples-per-step} sessions on either version, or no
 *       evaluation metric measured by that many on both, or the step's duration not over → wait;
 *   <li>otherwise the next step, or the promotion after the last step below 100 % (metrics measured
 *       by too few sessions are named in the decision's detail, untested).
 * </ol>
 */
public final class CanaryRules {

  /** Reason prefix of an automatic pause by the sample-ratio guardrail (also read back). */
  public static final String MISMATCH_PREFIX = "sample-ratio mismatch";

  private CanaryRules() {}

  /** Which degradation test decides. */
  public enum Method {
    /** Always-valid mSPRT with Holm across metrics and the error budget split across steps. */
    SEQUENTIAL,
    /**
     * The fixed-level z-tests used before issue #19, re-run at every look without correction;
     * kept only so Bench C1 can show what they cost. No sample-ratio check.
     */
    FIXED_LEVEL
  }

  public enum Action { WAIT, ROLLBACK, PAUSE_DEGRADED, PAUSE_MISMATCH, ADVANCE, PROMOTE }

  /**
   * @param tests every test run at this look (the degraded ones flagged); empty when the
   *     sequential rule waits and nothing is degraded (reports are built only when they are used)
   * @param detail for ROLLBACK / PAUSE_DEGRADED the degraded tests' summaries; for PAUSE_MISMATCH
   *     the sample-ratio summary; for WAIT what it waits for
   * @param sampleRatio the guardrail's figures (null for FIXED_LEVEL)
   */
  public record Decision(
      Action action, List<TestResult> tests, String detail, SampleRatioCheck.Result sampleRatio) {}

  /**
   * One look at the current step.
   *
   * @param plan the rollout's ratios (the last, 1.0, is the promotion)
   * @param step index of the current step in {@code plan}
   * @param mismatchAcknowledged an operator resumed this step after a mismatch pause
   */
  public static Decision decide(
      ModelSettings settings,
      Method method,
      List<Double> plan,
      int step,
      Instant stepStartedAt,
      boolean paused,
      OutcomeAggregates stable,
      OutcomeAggregates candidate,
      boolean mismatchAcknowledged,
      Instant now) {
    List<Metric> ready = new ArrayList<>();
    List<String> unmeasured = new ArrayList<>();
    // The fixed-level rule of before #19 had no guardrails; the sequential one tests them too.
    List<Metric> tested = method == Method.SEQUENTIAL ? settings.testedMetrics() : settings.evaluationMetrics();
    int min = settings.minSamplesPerStep();
    for (Metric m : tested) {
      long nc = candidate.samples(m);
      long ns = stable.samples(m);
      if (nc >= min && ns >= min) {
        ready.add(m);
      } else if (!m.guardrail()) {
        unmeasured.add(m.key() + " (candidate " + nc + ", stable " + ns + ")");
      }
    }
    // Design 3.3: a step needs min-samples-per-step sessions on both versions and no degradation after
    // step-duration. A metric that no session of the step measured (user-satisfaction when nobody rates,
    // response-latency without latencyMs) does not hold the step back for ever; it is named when the
    // step moves on. With no evaluation metric measured at all there is nothing to compare: wait.
    // (A guardrail never holds a step back: without the gateway no session carries it.)
    List<String> waiting = new ArrayList<>();
    if (candidate.sessions() < min || stable.sessions() < min) {
      waiting.add("sessions (candidate " + candidate.sessions() + ", stable " + stable.sessions() + ")");
    } else if (ready.stream().allMatch(Metric::guardrail)) {
      waiting.addAll(unmeasured);
    }
    List<TestResult> tests;
    SampleRatioCheck.Result srm = null;
    if (method == Method.SEQUENTIAL) {
      // Sessions that started in an earlier step kept the version an earlier ratio gave them.
      srm = SampleRatioCheck.check(candidate.routedInStep(), stable.routedInStep(), plan.get(step));
      boolean waits = paused || !waiting.isEmpty() || now.isBefore(stepStartedAt.plus(settings.stepDuration()));
      if (waits && !(srm.mismatch() && !mismatchAcknowledged)
          && !SequentialTest.anyDegraded(ready, tested.size(), stable, candidate,
              settings.tolerance(), settings.confidence(), plan.size(), settings.minSamplesPerStep())) {
        // Nothing happens at this look (the usual case): skip building the reports.
        return new Decision(Action.WAIT, List.of(), waitReason(paused, waiting), srm);
      }
      tests = SequentialTest.run(ready, tested.size(), stable, candidate,
          settings.tolerance(), settings.confidence(), plan.size(), settings.minSamplesPerStep(),
          stable.sessions() + candidate.sessions());
      if (srm.mismatch() && !mismatchAcknowledged) {
        return new Decision(Action.PAUSE_MISMATCH, tests, srm.summary(), srm);
      }
    } else {
      tests = new ArrayList<>();
      for (Metric m : ready) {
        tests.add(CanaryStatistics.test(m, stable, candidate, settings.toleranceOf(m),
            settings.confidence()));
      }
    }
    List<TestResult> degraded = tests.stream().filter(TestResult::degraded).toList();
    if (!degraded.isEmpty()) {
      String detail = degraded.stream().map(TestResult::summary).collect(Collectors.joining("; "));
      return new Decision(settings.rollbackOnDegradation() ? Action.ROLLBACK : Action.PAUSE_DEGRADED,
          tests, detail, srm);
    }
    if (paused || !waiting.isEmpty() || now.isBefore(stepStartedAt.plus(settings.stepDuration()))) {
      return new Decision(Action.WAIT, tests, waitReason(paused, waiting), srm);
    }
    Action next = step + 1 >= plan.size() - 1 ? Action.PROMOTE : Action.ADVANCE;
    return new Decision(next, tests, unmeasured.isEmpty() ? "" : "not measured: " + String.join(", ", unmeasured),
        srm);
  }

  private static String waitReason(boolean paused, List<String> waiting) {
    if (paused) {
      return "paused";
    }
    return waiting.isEmpty() ? "step duration not over" : "too few samples: " + String.join(", ", waiting);
  }

  /**
   * True when, since the current step started, the rollout was paused by the sample-ratio
   * guardrail and then resumed: the operator has looked and chosen to go on, so the same
   * (cumulative) split must not pause the step again. Read from the version's history, newest
   * first; the step's start is its latest CANARY/RAMP entry that is not a resume.
   */
  public static boolean mismatchAcknowledged(List<ModelState.HistoryEntry> history) {
    boolean resumed = false;
    for (int i = history.size() - 1; i >= 0; i--) {
      ModelState.HistoryEntry h = history.get(i);
      String reason = h.reason() == null ? "" : h.reason();
      if (h.state() == VersionState.PAUSED) {
        if (resumed && reason.startsWith(MISMATCH_PREFIX)) {
          return true;
        }
      } else if (h.state() == VersionState.CANARY || h.state() == VersionState.RAMP) {
        if (!reason.startsWith("resumed")) {
          return false;
        }
        resumed = true;
      } else {
        return false;
      }
    }
    return false;
  }
}
