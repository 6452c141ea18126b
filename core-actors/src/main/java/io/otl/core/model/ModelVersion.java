package io.otl.core.model;

import io.otl.core.SettingsOverlay;
import io.otl.core.serving.Serving;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReplyBuilder;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The model versions of one agent (entity key = agentId), design §3.3: registration, offline
 * gate, canary and ramp with automatic rollback, promotion to STABLE, manual transitions and
 * routing. See {@code package-info.java} of this package for the choices made where the design is silent.
 *
 * <p>Entity-level phases: {@link Idle} (no candidate in rollout) and {@link RollingOut} (exactly
 * one candidate in CANARY, RAMP or PAUSED). Commands that only make sense during a rollout
 * (pause, resume, outcomes, step ticks) are handled per phase.
 *
 * <p>This file is the behaviour's wiring only. The entity is a set of small files of this package:
 * {@link ModelProtocol} (commands, replies), {@link ModelEvents}, {@link ModelState}, {@link
 * ModelViews}, {@link ModelCommandHandlers}, {@link ModelEventHandler}, and the pure rules ({@link
 * RolloutPlanner}, {@link CanaryRules}, {@link OfflineGate}, {@link DeploymentPlanner}, {@link
 * RoutingTable}, {@link ModelValidation}). It implements the namespaces so that {@code
 * ModelVersion.Promote}, {@code ModelVersion.State} and the like name the same types as before.
 */
public final class ModelVersion
    extends EventSourcedBehaviorWithEnforcedReplies<
        ModelProtocol.Command, ModelEvents.Event, ModelState.State>
    implements ModelProtocol, ModelEvents, ModelState, ModelViews {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "ModelVersion");

  private final ModelCommandHandlers handlers;

  /** Versions served at their registered endpoints, no base model (as before deployment existed). */
  public static Behavior<Command> create(String agentId, ModelSettings settings, Clock clock) {
    return create(agentId, settings, clock, Serving.registeredEndpoints());
  }

  /**
   * With a serving backend, and the base model registered as v0 when {@code serving} has one; the
   * settings are fixed (run-time rollout settings are refused).
   */
  public static Behavior<Command> create(String agentId, ModelSettings settings, Clock clock, Serving serving) {
    Objects.requireNonNull(settings, "settings");
    return create(agentId, RolloutPolicy.fixed(settings), clock, serving);
  }

  /**
   * With the file's settings as a {@link SettingsOverlay.Resolver}, which lays the run-time overrides
   * ({@code PUT /v1/training/{agentId}/policy}, {@code model-update.*}) over them.
   */
  public static Behavior<Command> create(String agentId, SettingsOverlay.Resolver<ModelSettings> settings, Clock clock,
      Serving serving) {
    Objects.requireNonNull(agentId, "agentId");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(serving, "serving");
    return Behaviors.setup(ctx -> Behaviors.withTimers(
        timers -> new ModelVersion(agentId, settings, clock, timers, serving, ctx)));
  }

  private ModelVersion(
      String agentId, SettingsOverlay.Resolver<ModelSettings> settings, Clock clock, TimerScheduler<Command> timers,
      Serving serving, ActorContext<Command> context) {
    super(
        PersistenceId.of(ENTITY_TYPE_KEY.name(), agentId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.handlers = new ModelCommandHandlers(agentId, settings, clock, timers, serving, context, Effect());
  }

  @Override
  public State emptyState() {
    return initialState();
  }

  /** The state of an agent without any event: what replays (and "state as of T") start from. */
  public static State initialState() {
    return new Idle(Models.EMPTY);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  /** Tags of an event: transitions carry {@link #TRANSITIONS_TAG}, outcomes none. */
  public static Set<String> tagsOf(Event event) {
    return event instanceof TransitionEvent ? Set.of(TRANSITIONS_TAG) : Set.of();
  }

  @Override
  public Set<String> tagsFor(Event event) {
    return tagsOf(event);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), handlers::recovered)
        .build();
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    ModelCommandHandlers h = handlers;
    CommandHandlerWithReplyBuilder<Command, Event, State> b = newCommandHandlerWithReplyBuilder();

    b.forStateType(Idle.class)
        .onCommand(Pause.class, (s, c) -> h.rollout().refuseOutsideRollout(s, c.version(), "pause", c.replyTo()))
        .onCommand(Resume.class, (s, c) -> h.rollout().refuseOutsideRollout(s, c.version(), "resume", c.replyTo()))
        .onCommand(RecordOutcome.class, h.rollout()::outcomeWithoutRollout)
        .onCommand(StepTick.class, (s, c) -> h.noReply());

    b.forStateType(RollingOut.class)
        .onCommand(Pause.class, h.rollout()::pause)
        .onCommand(Resume.class, h.rollout()::resume)
        .onCommand(RecordOutcome.class, h.rollout()::recordOutcome)
        .onCommand(StepTick.class, (s, c) -> h.rollout().stepTick(s));

    b.forAnyState()
        .onCommand(RegisterCandidate.class, h::registerCandidate)
        .onCommand(RegisterManual.class, h::registerManual)
        .onCommand(Promote.class, h::promote)
        .onCommand(Rollback.class, h::rollback)
        .onCommand(Get.class, h::get)
        .onCommand(Route.class, h::route)
        .onCommand(SetRolloutPolicy.class, h::setRolloutPolicy)
        .onCommand(GetRolloutPolicy.class, h::getRolloutPolicy)
        .onCommand(ServingLost.class, h.deployment()::servingLost)
        .onCommand(RetentionTimer.RetentionEnded.class, (s, c) -> h.deployment().retentionEnded(s))
        .onCommand(DeploymentCalls.DeployCall.class, h.deployment()::deployCall)
        .onCommand(DeploymentCalls.DeployOutcome.class, h.deployment()::deployOutcome)
        .onCommand(DeploymentCalls.UndeployCall.class, h.deployment()::undeployCall)
        .onCommand(DeploymentCalls.UndeployOutcome.class, h.deployment()::undeployOutcome);

    CommandHandlerWithReply<Command, Event, State> handler = b.build();
    return (state, command) -> {
      h.refresh(state);
      // Rollout settings touch no version: setting them (even before the agent's first session)
      // registers no base model; nor does a read of the versions (it shows v0 as it will be).
      boolean touchesNoVersion = command instanceof SetRolloutPolicy || command instanceof GetRolloutPolicy
          || command instanceof Get || command instanceof RetentionTimer.RetentionEnded;
      return h.deployment().needsBaseModel(state) && !touchesNoVersion
          ? h.deployment().registerBaseModelThenHandle(command)
          : handler.apply(state, command);
    };
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(ModelEventHandler::apply);
  }

  /**
   * The pure event handler of the entity ({@link ModelEventHandler}): the live entity, recovery
   * and the audit's "state as of T" all go through here.
   */
  public static State applyEvent(State s, Event e) {
    return ModelEventHandler.apply(s, e);
  }

  /**
   * GET /v1/models/{agentId} of a state: the live entity answers with it, the audit builds the
   * same view of a replayed state.
   *
   * @param stepDuration {@code model-update.step-duration}, which sets the current step's deadline
   */
  public static ModelsView view(String agentId, State s, Duration stepDuration) {
    return ModelViews.of(agentId, s, stepDuration);
  }

  /**
   * GET /v1/models/{agentId} of an agent with no event yet, with a base model configured: v0 STABLE
   * with its deployment, as the agent's first version-touching command registers it. Built without
   * the entity, so that reading it starts no entity and writes nothing.
   *
   * @param at the time shown as v0's registration (the read's time: nothing is registered yet)
   */
  public static ModelsView baseModelView(String agentId, io.otl.core.serving.BaseModel base, java.time.Instant at) {
    State s = applyEvent(initialState(), new Deployments.BaseModelRegistered(
        io.otl.core.serving.BaseModel.VERSION, base.provider(), base.model(), base.endpoint(), at));
    return view(agentId, s, Duration.ZERO);
  }

  /**
   * Where the sessions of state {@code s} go: what the live entity routes by, and what the
   * {@code model-updates} topic publishes for a replayed state.
   */
  public static RoutingTable routingTable(State s) {
    return RoutingTable.of(s);
  }

  /**
   * The model name a route sends upstream for {@code version}, as the journal records it (null: the
   * node's serving settings decide, or no version), for the {@code model-updates} topic, which
   * publishes replayed states without the serving settings.
   */
  public static String recordedServedModel(State s, String version) {
    return version == null ? null : DeploymentPlanner.recordedServedModel(s.models(), version);
  }
}
