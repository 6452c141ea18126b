package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.StepAdvanced;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.serving.Serving;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@link ModelVersion}'s rollout decisions, as events added to a command's {@link Plan}: which READY
 * version starts, how it starts, and what the step rule ({@link CanaryRules}) makes of a step.
 * Pure functions of the plan's state, the settings and the time the command handler took; the
 * deployment side of a start is {@link DeploymentPlanner}'s.
 */
final class RolloutPlanner {

  private final String agentId;
  /** The settings in force: a run-time change ({@link RolloutPolicy}) reaches the next decision. */
  private final java.util.function.Supplier<ModelSettings> settingsInForce;
  private final Serving serving;
  private final DeploymentPlanner deployments;

  /** With fixed settings. */
  RolloutPlanner(String agentId, ModelSettings settings, Serving serving, DeploymentPlanner deployments) {
    this(agentId, () -> settings, serving, deployments);
  }

  RolloutPlanner(String agentId, java.util.function.Supplier<ModelSettings> settings, Serving serving,
      DeploymentPlanner deployments) {
    this.agentId = agentId;
    this.settingsInForce = settings;
    this.serving = serving;
    this.deployments = deployments;
  }

  /** With auto-deploy on and no rollout in progress, the oldest READY version starts. */
  void autoDeploy(Plan<State, Event> p, Instant now) {
    while (settings().autoDeploy() && p.state() instanceof Idle && p.state().models().deploying().isEmpty()) {
      Optional<VersionRecord> next = p.state().models().oldestReady();
      if (next.isEmpty()) {
        return;
      }
      startRollout(p, next.get().version(), now, "auto-deploy");
    }
  }

  void startRollout(Plan<State, Event> p, String version, Instant now, String why) {
    startRollout(p, version, now, why, null);
  }

  /**
   * READY → DEPLOYING → CANARY, or → STABLE directly when there is no stable to compare with.
   *
   * @param actor the operator who promoted it, null for auto-deploy: recorded in a direct promotion
   *     (the first version); {@code why} names it for the rollout and deployment events
   */
  void startRollout(Plan<State, Event> p, String version, Instant now, String why, String actor) {
    String stable = p.state().models().stable();
    if (stable == null) {
      p.add(new VersionPromoted(version, null, null, why.equals("auto-deploy"),
          why + ": first version of agent " + agentId + ", no stable to compare with; promoted directly",
          List.of(), now, actor));
    } else if (!serving.backend().callsServer() || servesAtOwnEndpoint(p.state().models().require(version))) {
      // Under static every version is served at its own endpoint: DEPLOYING and its confirmation
      // are recorded as for a hand version under vllm-lora (design §3.3), though nothing is called.
      deployments.deployAtOwnEndpoint(p, version, why, settings().steps(), now);
    } else {
      deployments.requestDeployment(p, version, why, now);
    }
  }

  private boolean servesAtOwnEndpoint(VersionRecord v) {
    return serving.servesAtOwnEndpoint(v.manual(), v.artifact(), v.servedModel());
  }

  /**
   * The degradation and step rule ({@link CanaryRules}), after the events already planned:
   * sample-ratio mismatch → PAUSED; a metric degraded by the always-valid sequential test →
   * ROLLED_BACK (or PAUSED when rollback-on-degradation is off); the step's duration over with
   * enough observations on every metric → next step, or STABLE after the last step below 100 %.
   */
  void evaluate(Plan<State, Event> p, Instant now) {
    if (!(p.state() instanceof RollingOut s)) {
      return;
    }
    Rollout r = s.rollout();
    CanaryRules.Decision d = CanaryRules.decide(settings(), CanaryRules.Method.SEQUENTIAL, r.plan(),
        r.step(), r.stepStartedAt(), r.paused(), r.stableStep(), r.candidateStep(),
        CanaryRules.mismatchAcknowledged(s.models().require(r.candidate()).history()), now);
    List<TestResult> tests = d.tests();
    switch (d.action()) {
      case PAUSE_MISMATCH -> {
        if (!r.paused()) {
          p.add(new RolloutPaused(r.candidate(), true, CanaryRules.MISMATCH_PREFIX + " at "
              + describe(s) + ": " + d.detail() + "; no step-up until an operator resumes, promotes or rolls back"
              + (settings().rollbackOnDegradation() ? " (a candidate whose figures read degraded once the split "
                  + "reads consistent again is still rolled back)" : ""), tests, now));
        }
      }
      case ROLLBACK -> {
        p.add(new VersionRolledBack(r.candidate(), true, "degraded at " + describe(s) + ": " + d.detail(),
            tests, null, now));
        autoDeploy(p, now);
      }
      case PAUSE_DEGRADED -> {
        if (!r.paused()) {
          p.add(new RolloutPaused(r.candidate(), true, "degraded at " + describe(s) + ": " + d.detail()
              + " (rollback-on-degradation is off: paused for an operator)", tests, now));
        }
      }
      case PROMOTE -> {
        p.add(new VersionPromoted(r.candidate(), r.stableVersion(), now.plus(settings().retainPrevious()),
            true, "all rollout steps passed (last: " + describe(s) + ")"
                + (d.detail().isEmpty() ? "" : "; " + d.detail()), tests, now));
        autoDeploy(p, now);
      }
      case ADVANCE -> {
        int next = r.step() + 1;
        p.add(new StepAdvanced(r.candidate(), r.step(), next, r.plan().get(next), tests, now));
      }
      case WAIT -> { }
    }
  }

  /** The rollout in words, for reasons and refusals: "RAMP at 0.20, step 1 of 3". */
  static String describe(RollingOut r) {
    Rollout o = r.rollout();
    return String.format(Locale.ROOT, "%s%s at %.2f, step %d of %d",
        o.paused() ? "PAUSED " : "", o.servingState(), o.ratio(), o.step(), o.plan().size() - 1);
  }

  private ModelSettings settings() {
    return settingsInForce.get();
  }
}
