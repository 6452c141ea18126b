package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.StepTick;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * How ModelVersion's command handlers write and reply: a plan's events are persisted with the
 * unloads they make due, then the transitions are logged, the step and retention timers set and the
 * calls the recorded intents announce started. Shared by {@link ModelCommandHandlers}, {@link
 * DeploymentCommands} and {@link RolloutCommands}.
 */
final class ModelWrites {

  static final String STEP_TIMER = "step-tick";
  /** The longest single wait of the step timer: a day, well under what a Pekko timer can take. */
  static final Duration LONGEST_TICK_WAIT = Duration.ofDays(1);

  private final String agentId;
  private final Supplier<ModelSettings> settings;
  private final Clock clock;
  private final TimerScheduler<Command> timers;
  private final ActorContext<Command> context;
  private final DeploymentCalls calls;
  private final DeploymentPlanner deployments;
  private final RetentionTimer retention;
  private final EffectFactories<Event, State> effect;

  ModelWrites(String agentId, Supplier<ModelSettings> settings, Clock clock, TimerScheduler<Command> timers,
      ActorContext<Command> context, DeploymentCalls calls, DeploymentPlanner deployments, RetentionTimer retention,
      EffectFactories<Event, State> effect) {
    this.agentId = agentId;
    this.settings = settings;
    this.clock = clock;
    this.timers = timers;
    this.context = context;
    this.calls = calls;
    this.deployments = deployments;
    this.retention = retention;
    this.effect = effect;
  }

  ReplyEffect<Event, State> noReply() {
    return effect.noReply();
  }

  <R> ReplyEffect<Event, State> reply(ActorRef<R> replyTo, R message) {
    return effect.reply(replyTo, message);
  }

  <R> ReplyEffect<Event, State> persist(Plan<State, Event> p, ActorRef<R> replyTo, Function<State, R> reply) {
    if (p.isEmpty()) {
      return effect.reply(replyTo, reply.apply(p.state()));
    }
    deployments.planUndeploys(p, clock.instant());
    List<Event> events = List.copyOf(p.events());
    return effect
        .persist(events)
        .thenRun((State st) -> afterPersist(st, events))
        .thenReply(replyTo, reply::apply);
  }

  ReplyEffect<Event, State> persistNoReply(Plan<State, Event> p) {
    deployments.planUndeploys(p, clock.instant());
    List<Event> events = List.copyOf(p.events());
    return effect.persist(events).thenRun((State st) -> afterPersist(st, events)).thenNoReply();
  }

  private void afterPersist(State st, List<Event> events) {
    TransitionLog.log(context, agentId, events, st);
    scheduleStepTick(st, false);
    calls.resume(st);
    retention.schedule(st);
  }

  VersionStatus status(State s, String version, boolean created, List<String> reasons) {
    VersionRecord v = s.models().require(version);
    return new VersionStatus(agentId, version, v.state(), ModelViews.ratioOf(s, v), created, List.copyOf(reasons));
  }

  /**
   * Schedules a StepTick for the time left in the current step (computed from the injected clock
   * and the step start stored in state), or cancels it when nothing waits for a deadline. After
   * recovery a deadline that has already passed gets one immediate tick.
   */
  void scheduleStepTick(State state, boolean afterRecovery) {
    if (state instanceof RollingOut r && !r.rollout().paused()) {
      Instant deadline = r.rollout().stepStartedAt().plus(settings.get().stepDuration());
      Duration remaining = Duration.between(clock.instant(), deadline);
      if (!remaining.isNegative() && !remaining.isZero()) {
        // Pekko's timers wait at most ~248 days and throw beyond; stepTick schedules the rest of a
        // longer step when it wakes early. A journal holding a longer step-duration (accepted before
        // the settings capped it) must still recover.
        Duration wait = remaining.compareTo(LONGEST_TICK_WAIT) > 0 ? LONGEST_TICK_WAIT : remaining;
        timers.startSingleTimer(STEP_TIMER, StepTick.INSTANCE, wait);
      } else if (afterRecovery) {
        timers.startSingleTimer(STEP_TIMER, StepTick.INSTANCE, Duration.ofMillis(1));
      }
    } else {
      timers.cancel(STEP_TIMER);
    }
  }
}
