package io.otl.core.model;

import io.otl.core.SettingsOverlay;
import io.otl.core.entity.Plan;
import io.otl.core.model.ModelEvents.EvaluationStarted;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.GateCheck;
import io.otl.core.model.ModelEvents.OfflineGateFailed;
import io.otl.core.model.ModelEvents.OfflineGatePassed;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRegistered;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.Promote;
import io.otl.core.model.ModelProtocol.RegisterCandidate;
import io.otl.core.model.ModelProtocol.RegisterManual;
import io.otl.core.model.ModelProtocol.Rollback;
import io.otl.core.model.ModelProtocol.Route;
import io.otl.core.model.ModelProtocol.RouteDecision;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.serving.Serving;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * The command handlers of {@link ModelVersion}: validate, decide the events on a {@link Plan},
 * persist them and reply. The decisions themselves are {@link RolloutPlanner}'s, {@link
 * DeploymentPlanner}'s and {@link OfflineGate}'s; the calls to serving are {@link DeploymentCalls}'.
 * Here: registration, the operator's transitions, the run-time rollout settings and the reads; the
 * deployment commands are {@link DeploymentCommands}', those of a rollout in progress {@link
 * RolloutCommands}', and how all of them write {@link ModelWrites}'. {@link ModelVersion} wires these
 * methods per phase.
 */
final class ModelCommandHandlers {

  private final String agentId;
  /** Lays the run-time overrides over the file's settings (validated as the file is). */
  private final SettingsOverlay.Resolver<ModelSettings> resolver;
  /** The settings in force: the file's, then the state's run-time overrides ({@link #refresh}). */
  private ModelSettings settings;
  /** The change {@link #settings} was resolved from (null: none), so a state is resolved once. */
  private RolloutPolicy.RolloutPolicyChanged applied;
  /** Whether the file refused {@link #applied}'s overrides (the file's settings are in force). */
  private boolean appliedRefused;
  private final Clock clock;
  private final Serving serving;
  private final ActorContext<Command> context;
  private final DeploymentCalls calls;
  private final DeploymentPlanner deployments;
  private final RolloutPlanner rollouts;
  private final RetentionTimer retention;
  private final ModelWrites writes;
  private final DeploymentCommands deploymentCommands;
  private final RolloutCommands rolloutCommands;
  private final EffectFactories<Event, State> effect;

  ModelCommandHandlers(String agentId, SettingsOverlay.Resolver<ModelSettings> resolver, Clock clock,
      TimerScheduler<Command> timers, Serving serving, ActorContext<Command> context,
      EffectFactories<Event, State> effect) {
    this.agentId = agentId;
    this.resolver = resolver;
    this.settings = resolver.resolve(Map.of());
    this.clock = clock;
    this.serving = serving;
    this.context = context;
    this.effect = effect;
    this.calls = new DeploymentCalls(agentId, serving, context, timers);
    this.deployments = new DeploymentPlanner(agentId, serving);
    this.rollouts = new RolloutPlanner(agentId, () -> settings, serving, deployments);
    this.retention = new RetentionTimer(deployments, timers, clock);
    this.writes = new ModelWrites(agentId, () -> settings, clock, timers, context, calls, deployments, retention,
        effect);
    this.deploymentCommands = new DeploymentCommands(agentId, () -> settings, clock, serving, context, calls,
        deployments, rollouts, retention, writes, effect);
    this.rolloutCommands = new RolloutCommands(() -> settings, clock, rollouts, writes);
  }

  /** The commands of the deployment calls, v0 and retention ends. */
  DeploymentCommands deployment() {
    return deploymentCommands;
  }

  /** The commands of a rollout in progress (pause, resume, outcomes, the step timer). */
  RolloutCommands rollout() {
    return rolloutCommands;
  }

  /** After recovery: the settings in force, the step timer, the calls whose outcome is unknown, the adapters to reload. */
  void recovered(State state) {
    // Which node serves an agent's routes is otherwise visible nowhere after a fail-over moved the
    // entity (trial t21): one line when an agent with versions comes up here.
    if (!state.models().versions().isEmpty()) {
      String rollout = state instanceof RollingOut r ? ", canary " + r.rollout().candidate() : "";
      context.getLog().info("agent {}: model versions recovered on {} (stable {}{})", agentId,
          context.getSystem().address(), state.models().stable(), rollout);
    }
    refresh(state);
    writes.scheduleStepTick(state, true);
    calls.resume(state);
    calls.ensureLoaded(state);
    retention.schedule(state);
  }

  // ------------------------------------------------------------------------------------------
  // Registration and transitions
  // ------------------------------------------------------------------------------------------

  ReplyEffect<Event, State> registerCandidate(State s, RegisterCandidate c) {
    Optional<String> invalid = ModelValidation.registration(c.version(), c.artifact(), c.endpoint());
    if (invalid.isEmpty()) {
      invalid = ModelValidation.offlineMetrics(c.offlineMetrics());
    }
    if (invalid.isPresent()) {
      return reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    Optional<VersionRecord> existing = s.models().find(c.version());
    if (existing.isPresent()) {
      VersionRecord v = existing.get();
      if (!v.manual()
          && v.artifact().equals(c.artifact())
          && Objects.equals(v.sourceJobId(), c.sourceJobId())) {
        return reply(c.replyTo(), status(s, v.version(), false, List.of()));
      }
      return reply(c.replyTo(), Failure.alreadyExists(v));
    }
    Instant now = clock.instant();
    Map<String, Double> metrics = c.offlineMetrics() == null ? Map.of() : c.offlineMetrics();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new VersionRegistered(c.version(), c.artifact(), c.endpoint(), c.sourceJobId(), metrics, false, now));
    String baseline = s.models().stable();
    p.add(new EvaluationStarted(c.version(), baseline, now));
    Optional<String> noEvidence = EvalEvidence.originRolledBack(c.trainedFrom(), s.models())
        .or(() -> EvalEvidence.missing(c.version(), c.sourceJobId(), metrics, settings.evaluationMetrics(), s.models()));
    if (noEvidence.isPresent()) {
      p.add(new EvalEvidence.GateWithoutEvidence(c.version(), noEvidence.get(), now));
      return persist(p, c.replyTo(), st -> status(st, c.version(), true, List.of(noEvidence.get())));
    }
    List<GateCheck> checks = OfflineGate.checks(settings, s.models(), metrics);
    List<String> reasons =
        checks.stream().filter(g -> !g.passed()).map(GateCheck::detail).collect(Collectors.toList());
    if (reasons.isEmpty()) {
      p.add(new OfflineGatePassed(c.version(), checks,
          baseline == null ? "offline gate passed: no stable version yet" : "offline gate passed against " + baseline,
          now));
      Supersession.olderReady(p.state().models(), c.version(), now).forEach(p::add);
      rollouts.autoDeploy(p, now);
    } else {
      p.add(new OfflineGateFailed(c.version(), checks, reasons, now));
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), true, reasons));
  }

  ReplyEffect<Event, State> registerManual(State s, RegisterManual c) {
    Optional<String> invalid = ModelValidation.registration(c.version(), c.artifact(), c.endpoint());
    if (invalid.isEmpty()) {
      invalid = ModelValidation.servedModel(c.servedModel());
    }
    if (invalid.isEmpty() && serving.backend().callsServer()
        && !serving.servesAtOwnEndpoint(true, c.artifact(), c.servedModel())) {
      invalid = ModelValidation.adapterDirectory(c.artifact());
    }
    if (invalid.isPresent()) {
      return reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    Optional<VersionRecord> existing = s.models().find(c.version());
    if (existing.isPresent()) {
      return reply(c.replyTo(), Failure.alreadyExists(existing.get()));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new VersionRegistered(
        c.version(), c.artifact(), c.endpoint(), null, Map.of(), true, now, c.servedModel(), c.actor()));
    p.add(new EvaluationStarted(c.version(), s.models().stable(), now));
    p.add(new OfflineGatePassed(c.version(), List.of(),
        "registered by hand: no offline metrics, offline gate skipped", now));
    Supersession.olderReady(p.state().models(), c.version(), now).forEach(p::add);
    rollouts.autoDeploy(p, now);
    return persist(p, c.replyTo(), st -> status(st, c.version(), true, List.of()));
  }

  ReplyEffect<Event, State> promote(State s, Promote c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    switch (v.state()) {
      case READY, DEPLOY_FAILED, NO_EVIDENCE -> {
        // NO_EVIDENCE: the operator decides without an offline comparison (EvalEvidence).
        // DEPLOY_FAILED: an operator's retry (the served name stays: same version, same weights).
        Optional<VersionRecord> deploying = s.models().deploying();
        if (deploying.isPresent()) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot promote " + v.version() + ": " + deploying.get().version()
                  + " is being deployed; only one candidate rolls out at a time"));
        }
        if (s instanceof RollingOut r) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot promote " + v.version() + ": it is " + v.state() + " and " + r.rollout().candidate()
                  + " is already in rollout (" + RolloutPlanner.describe(r)
                  + "); only one candidate rolls out at a time"));
        }
        // The actor goes into the reason too: a deployment's later events carry only the reason.
        rollouts.startRollout(p, v.version(), now,
            c.actor() == null ? "manual promote" : "manual promote by " + c.actor(), c.actor());
      }
      case CANARY, RAMP, PAUSED -> {
        RollingOut r = (RollingOut) s;
        p.add(new VersionPromoted(v.version(), r.rollout().stableVersion(),
            now.plus(settings.retainPrevious()), false,
            "manual promote from " + RolloutPlanner.describe(r) + ", remaining steps skipped", List.of(), now,
            c.actor()));
        rollouts.autoDeploy(p, now);
      }
      default -> {
        return reply(c.replyTo(), Failure.invalidTransition("promote", v));
      }
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  ReplyEffect<Event, State> rollback(State s, Rollback c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    String reason =
        c.reason() == null || c.reason().isBlank() ? "manual rollback" : "manual rollback: " + c.reason();
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    switch (v.state()) {
      case CANARY, RAMP, PAUSED -> {
        p.add(new VersionRolledBack(v.version(), false, reason, List.of(), null, now, c.actor()));
        rollouts.autoDeploy(p, now);
      }
      case STABLE -> {
        if (s instanceof RollingOut r) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot roll back " + v.version() + ": it is STABLE and " + r.rollout().candidate()
                  + " is in rollout (" + RolloutPlanner.describe(r) + ") against it; roll back or promote "
                  + r.rollout().candidate() + " first"));
        }
        Optional<VersionRecord> previous = s.models().restorablePrevious(now);
        if (previous.isEmpty()) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot roll back " + v.version() + ": it is STABLE and no previous stable is retained"
                  + " (retain-previous = " + RolloutPolicy.duration(settings.retainPrevious()) + ")"));
        }
        p.add(new VersionRolledBack(v.version(), false, reason, List.of(), previous.get().version(), now, c.actor()));
        rollouts.autoDeploy(p, now);
      }
      default -> {
        return reply(c.replyTo(), Failure.invalidTransition("roll back", v));
      }
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  // ------------------------------------------------------------------------------------------
  // Run-time rollout settings
  // ------------------------------------------------------------------------------------------

  /**
   * Lays the state's run-time overrides over the file's settings when they changed (every command
   * and recovery call this first, so a replayed or snapshotted change is in force before any decision).
   */
  void refresh(State s) {
    RolloutPolicy.RolloutPolicyChanged change = s.models().policyChange();
    if (change == applied) return;
    applied = change;
    appliedRefused = false;
    // A file changed since may refuse them now: then the file's settings are in force, and that is said.
    settings = io.otl.core.SettingsOverlay.inForce(resolver, change == null ? Map.of() : change.overrides(),
        e -> {
          appliedRefused = true;
          context.getLog().warn("agent {}: the run-time rollout settings of {} no longer apply ({}); the file's"
              + " are in force", agentId, change.at(), e.getMessage());
        });
  }

  /**
   * The whole set of run-time overrides, validated as the file is; persisted when it differs from the
   * set in force, then in force at once (see {@link RolloutPolicy} for a rollout in progress). Turning
   * auto-deploy on starts a READY candidate that waits.
   */
  ReplyEffect<Event, State> setRolloutPolicy(State s, ModelProtocol.SetRolloutPolicy c) {
    Map<String, Object> flat;
    ModelSettings next;
    try {
      flat = RolloutPolicy.flatten(c.overrides());
      next = resolver.resolve(flat);
    } catch (IllegalArgumentException e) {
      return reply(c.replyTo(), Failure.invalidInput(e.getMessage()));
    }
    RolloutPolicy.RolloutPolicyChanged current = s.models().policyChange();
    if (flat.equals(current == null ? Map.of() : current.overrides())) {
      return reply(c.replyTo(), rolloutPolicyView(s));
    }
    String by = c.requestedBy() == null || c.requestedBy().isBlank() ? "api" : c.requestedBy();
    Instant now = clock.instant();
    RolloutPolicy.RolloutPolicyChanged change = new RolloutPolicy.RolloutPolicyChanged(flat, by, now);
    settings = next; // the decisions below already see it; refresh keeps it
    applied = change;
    appliedRefused = false;
    context.getLog().info("agent {}: rollout settings changed by {}; run-time keys {}", agentId, by, flat.keySet());
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(change);
    // The change is a step check of a rollout in progress (trial t30): a step-duration shortened below the
    // time the step has already run moves the step on now, not at the next outcome or the old deadline.
    rollouts.evaluate(p, now);
    rollouts.autoDeploy(p, now);
    return persist(p, c.replyTo(), this::rolloutPolicyView);
  }

  ReplyEffect<Event, State> getRolloutPolicy(State s, ModelProtocol.GetRolloutPolicy c) {
    return reply(c.replyTo(), rolloutPolicyView(s));
  }

  private ModelProtocol.RolloutPolicyView rolloutPolicyView(State s) {
    RolloutPolicy.RolloutPolicyChanged c = s.models().policyChange();
    Map<String, Object> policy = RolloutPolicy.effective(settings);
    return new ModelProtocol.RolloutPolicyView(agentId, policy,
        c == null ? Map.of() : io.otl.core.SettingsOverlay.asRead(c.overrides(), policy, !appliedRefused),
        c == null ? null : c.changedBy(), c == null ? null : c.at());
  }

  // ------------------------------------------------------------------------------------------
  // Reads
  // ------------------------------------------------------------------------------------------

  /**
   * A read writes nothing: for an agent whose v0 is not registered yet, the view shows v0 as the
   * first version-touching command will register it (design §3.3: STABLE from the start).
   */
  ReplyEffect<Event, State> get(State s, ModelProtocol.Get c) {
    State shown = deploymentCommands.needsBaseModel(s)
        ? ModelEventHandler.apply(s, deploymentCommands.baseModelRegistered(clock.instant())) : s;
    return effect.reply(c.replyTo(), ModelViews.of(agentId, shown, settings.stepDuration(),
        (version, recorded) -> deployments.currentEndpoint(shown.models(), version, recorded)));
  }

  ReplyEffect<Event, State> route(State s, Route c) {
    if (c.sessionId() == null || c.sessionId().isBlank()) {
      return reply(c.replyTo(), Failure.invalidInput("sessionId: must not be blank"));
    }
    Optional<RoutingTable.Target> target = RoutingTable.of(s).route(c.sessionId(), c.pinnedVersion());
    if (target.isEmpty()) {
      return reply(c.replyTo(), new Failure(ErrorCode.NO_VERSION,
          "agent " + agentId + " has no stable version and no candidate in rollout; configure a base model "
              + "(the model section's base URL and model name: it serves as v0), or register a version with "
              + "POST /v1/models/" + agentId + "/versions"));
    }
    String version = target.get().version();
    return reply(c.replyTo(), new RouteDecision(agentId, c.sessionId(), version,
        deployments.currentEndpoint(s.models(), version, target.get().endpoint()),
        deployments.servedModel(s.models(), version)));
  }

  ReplyEffect<Event, State> noReply() {
    return effect.noReply();
  }

  private <R> ReplyEffect<Event, State> reply(ActorRef<R> replyTo, R message) {
    return writes.reply(replyTo, message);
  }

  private <R> ReplyEffect<Event, State> persist(Plan<State, Event> p, ActorRef<R> replyTo, Function<State, R> reply) {
    return writes.persist(p, replyTo, reply);
  }

  private VersionStatus status(State s, String version, boolean created, List<String> reasons) {
    return writes.status(s, version, created, reasons);
  }
}
