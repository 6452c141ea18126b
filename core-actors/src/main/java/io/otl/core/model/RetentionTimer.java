package io.otl.core.model;

import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelState.State;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Wakes ModelVersion when a retired stable's retention ends, so its adapter is unloaded then and not
 * at the agent's next transition, which may never come. The deadline is read from the state after
 * every write and after recovery; a retention that ended while the node was down wakes it at once.
 */
final class RetentionTimer {

  /** Internal timer: a retained version's retention may have ended. No reply. */
  enum RetentionEnded implements Command {
    INSTANCE
  }

  static final String KEY = "retention-end";

  private final DeploymentPlanner deployments;
  private final TimerScheduler<Command> timers;
  private final Clock clock;

  RetentionTimer(DeploymentPlanner deployments, TimerScheduler<Command> timers, Clock clock) {
    this.deployments = deployments;
    this.timers = timers;
    this.clock = clock;
  }

  void schedule(State s) {
    Optional<Instant> end = deployments.nextRetentionEnd(s.models());
    if (end.isEmpty()) {
      timers.cancel(KEY);
      return;
    }
    Duration wait = Duration.between(clock.instant(), end.get());
    if (wait.isNegative() || wait.isZero()) {
      wait = Duration.ofMillis(1);
    } else if (wait.compareTo(ModelWrites.LONGEST_TICK_WAIT) > 0) {
      // Pekko's timers cannot wait a retention of weeks; an early wake-up schedules the rest.
      wait = ModelWrites.LONGEST_TICK_WAIT;
    }
    timers.startSingleTimer(KEY, RetentionEnded.INSTANCE, wait);
  }
}
