package io.otl.core.coordinator;

import io.otl.core.SettingsOverlay;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;

/**
 * What the coordinator's command handlers ({@link TrainingCoordinator}, {@link JobSteps}, {@link
 * ProxyLoop}, {@link ScheduleTrigger}) share within one incarnation of the entity. Nothing here is
 * persisted: a restart rebuilds it from the journal (the policy) or starts it empty.
 */
final class CoordinatorRuntime {
  final String agentId;
  final TrainingCoordinator.Ports ports;
  final Clock clock;
  final ActorContext<Command> ctx;
  final TimerScheduler<Command> timers;
  final SettingsOverlay.Resolver<TrainingPolicy> resolver;
  /** "One rollout at a time": asks ModelVersion before a job. */
  final RolloutGate rollouts;
  /** Calls in flight: keeps one call per step, whatever triggers it. */
  final Set<StepKey> inFlight = new HashSet<>();
  /** Consecutive failures per retried step: drives the back-off. */
  final Map<StepKey, Integer> failures = new HashMap<>();
  /** In force: the file's policy with the run-time overrides of {@link #policyApplied}. */
  TrainingPolicy policy;
  PolicyChanged policyApplied;
  /**
   * The newest write time ({@code recordedAt}) the trajectory feed has delivered in this incarnation,
   * null before the first: the clock forgetting counts in ({@link SessionForgetting}).
   */
  Instant newestWritten;
  /** The feed time at which forgetting was last looked for (a scan), null before the first. */
  Instant forgetCheckedAt;
  /** Whether the file refused {@link #policyApplied}'s overrides (the file's policy is in force). */
  boolean policyRefused;

  CoordinatorRuntime(String agentId, TrainingPolicy policy, SettingsOverlay.Resolver<TrainingPolicy> resolver,
      TrainingCoordinator.Ports ports, Clock clock, ActorContext<Command> ctx, TimerScheduler<Command> timers) {
    this.agentId = agentId;
    this.policy = policy;
    this.resolver = resolver;
    this.ports = ports;
    this.clock = clock;
    this.ctx = ctx;
    this.timers = timers;
    this.rollouts = new RolloutGate(agentId, ports.rolloutProbe(), ctx);
  }

  Instant now() {
    return clock.instant();
  }

  Logger log() {
    return ctx.getLog();
  }

  /** One more failure of {@code step}: the back-off before its next attempt. */
  Duration failed(StepKey step) {
    return policy.backoff(failures.merge(step, 1, Integer::sum));
  }
}
