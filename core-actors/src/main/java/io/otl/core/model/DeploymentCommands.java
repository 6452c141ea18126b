package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.ServingLost;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.State;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * ModelVersion's deployment commands: v0 from the base model, the load and unload calls and what
 * their outcomes record, a retention's end, a model server that lost an adapter. The decisions are
 * {@link DeploymentPlanner}'s, the calls {@link DeploymentCalls}'.
 */
final class DeploymentCommands {

  private final String agentId;
  private final Supplier<ModelSettings> settings;
  private final Clock clock;
  private final Serving serving;
  private final ActorContext<Command> context;
  private final DeploymentCalls calls;
  private final DeploymentPlanner deployments;
  private final RolloutPlanner rollouts;
  private final RetentionTimer retention;
  private final ModelWrites writes;
  private final EffectFactories<Event, State> effect;

  DeploymentCommands(String agentId, Supplier<ModelSettings> settings, Clock clock, Serving serving,
      ActorContext<Command> context, DeploymentCalls calls, DeploymentPlanner deployments, RolloutPlanner rollouts,
      RetentionTimer retention, ModelWrites writes, EffectFactories<Event, State> effect) {
    this.agentId = agentId;
    this.settings = settings;
    this.clock = clock;
    this.serving = serving;
    this.context = context;
    this.calls = calls;
    this.deployments = deployments;
    this.rollouts = rollouts;
    this.retention = retention;
    this.writes = writes;
    this.effect = effect;
  }

  /**
   * v0 is registered before the first command of an agent that has never had a stable version,
   * so the first candidate canaries against the base model instead of replacing it at once.
   */
  boolean needsBaseModel(State s) {
    return serving.baseModel().isPresent() && s instanceof Idle && s.models().stable() == null
        && s.models().find(BaseModel.VERSION).isEmpty();
  }

  ReplyEffect<Event, State> registerBaseModelThenHandle(Command command) {
    Event e = baseModelRegistered(clock.instant());
    // The command is handled again once v0 is in the state; its reply comes from that pass.
    return effect.persist(e).thenRun((State st) -> {
      TransitionLog.log(context, agentId, List.of(e), st);
      context.getSelf().tell(command);
    }).thenNoReply();
  }

  /** The model server lost a version's adapter: load the routable ones again (at most once a while). */
  ReplyEffect<Event, State> servingLost(State s, ServingLost c) {
    calls.reload(s, c.version(), clock.instant());
    return writes.noReply();
  }

  Event baseModelRegistered(Instant at) {
    BaseModel base = serving.baseModel().orElseThrow();
    return new Deployments.BaseModelRegistered(BaseModel.VERSION, base.provider(), base.model(), base.endpoint(), at);
  }

  ReplyEffect<Event, State> deployCall(State s, DeploymentCalls.DeployCall c) {
    calls.deploy(s, c);
    return writes.noReply();
  }

  ReplyEffect<Event, State> undeployCall(State s, DeploymentCalls.UndeployCall c) {
    calls.undeploy(s, c);
    return writes.noReply();
  }

  ReplyEffect<Event, State> deployOutcome(State s, DeploymentCalls.DeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.REQUESTED
        || !Objects.equals(dep.servedModel(), c.servedModel())) {
      calls.resume(s); // an intent recorded while this call ran waits for it to end
      return writes.noReply();
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    if (c.error() == null) {
      deployments.confirm(p, c.version(), dep, settings.get().steps(), now);
    } else if (c.retryable() && c.attempt() < serving.maxAttempts()) {
      calls.retryDeploy(c.version(), c.attempt() + 1);
      return writes.noReply();
    } else {
      p.add(new Deployments.DeploymentFailed(c.version(), dep.servedModel(), c.error(), c.attempt(), now));
      // A load that timed out or lost its answer may still land on the server, and nothing would
      // ever unload it: the unload intent goes into the same write (an unknown name counts as done).
      p.add(new Deployments.UndeployRequested(c.version(), dep.servedModel(),
          "load failed: unloading whatever of it may have landed", now));
      rollouts.autoDeploy(p, now);
    }
    return writes.persistNoReply(p);
  }

  /** A retained version's retention may have ended: its unload is due now, with nothing else written. */
  ReplyEffect<Event, State> retentionEnded(State s) {
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    deployments.planDueUndeploys(p, clock.instant());
    if (p.isEmpty()) {
      retention.schedule(s); // woke before the end (a wait longer than a timer takes)
      return writes.noReply();
    }
    return writes.persistNoReply(p);
  }

  ReplyEffect<Event, State> undeployOutcome(State s, DeploymentCalls.UndeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.UNDEPLOYING) {
      calls.resume(s); // a promote again while the unload ran: its load starts now
      return writes.noReply();
    }
    if (c.error() != null) {
      calls.retryUndeploy(c.version(), c.attempt() + 1);
      return writes.noReply();
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new Deployments.Undeployed(c.version(), dep.servedModel(), clock.instant()));
    return writes.persistNoReply(p);
  }
}
