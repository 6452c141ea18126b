package io.otl.core.model;

import io.otl.core.SettingsOverlay;
import io.otl.core.entity.Plan;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelEvents.EvaluationStarted;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.GateCheck;
import io.otl.core.model.ModelEvents.OfflineGateFailed;
import io.otl.core.model.ModelEvents.OfflineGatePassed;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutResumed;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRegistered;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.Disposition;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.OutcomeAck;
import io.otl.core.model.ModelProtocol.Pause;
import io.otl.core.model.ModelProtocol.Promote;
import io.otl.core.model.ModelProtocol.RecordOutcome;
import io.otl.core.model.ModelProtocol.RegisterCandidate;
import io.otl.core.model.ModelProtocol.RegisterManual;
import io.otl.core.model.ModelProtocol.Resume;
import io.otl.core.model.ModelProtocol.Rollback;
import io.otl.core.model.ModelProtocol.Route;
import io.otl.core.model.ModelProtocol.RouteDecision;
import io.otl.core.model.ModelProtocol.ServingLost;
import io.otl.core.model.ModelProtocol.StepTick;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import java.time.Clock;
import java.time.Duration;
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
 * {@link ModelVersion} wires these methods per phase.
 */
final class ModelCommandHandlers {

  static final String STEP_TIMER = "step-tick";
  /** The longest single wait of the step timer: a day, well under what a Pekko timer can take. */
  static final Duration LONGEST_TICK_WAIT = Duration.ofDays(1);

  private final String agentId;
  /** Lays the run-time overrides over the file's settings (validated as the file is). */
  private final SettingsOverlay.Resolver<ModelSettings> resolver;
  /** The settings in force: the file's, then the state's run-time overrides ({@link #refresh}). */
  private ModelSettings settings;
  /** The change {@link #settings} was resolved from (null: none), so a state is resolved once. */
  private RolloutPolicy.RolloutPolicyChanged applied;
  private final Clock clock;
  private final TimerScheduler<Command> timers;
  private final Serving serving;
  private final ActorContext<Command> context;
  private final DeploymentCalls calls;
  private final DeploymentPlanner deployments;
  private final RolloutPlanner rollouts;
  private final RetentionTimer retention;
  private final EffectFactories<Event, State> effect;

  ModelCommandHandlers(String agentId, SettingsOverlay.Resolver<ModelSettings> resolver, Clock clock,
      TimerScheduler<Command> timers, Serving serving, ActorContext<Command> context,
      EffectFactories<Event, State> effect) {
    this.agentId = agentId;
    this.resolver = resolver;
    this.settings = resolver.resolve(Map.of());
    this.clock = clock;
    this.timers = timers;
    this.serving = serving;
    this.context = context;
    this.effect = effect;
    this.calls = new DeploymentCalls(agentId, serving, context, timers);
    this.deployments = new DeploymentPlanner(agentId, serving);
    this.rollouts = new RolloutPlanner(agentId, () -> settings, serving, deployments);
    this.retention = new RetentionTimer(deployments, timers, clock);
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
    scheduleStepTick(state, true);
    calls.resume(state);
    calls.ensureLoaded(state);
    retention.schedule(state);
  }

  // ------------------------------------------------------------------------------------------
  // Base model (v0) and deployment calls
  // ------------------------------------------------------------------------------------------

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
      TransitionLog.log(context.getLog(), agentId, List.of(e), st);
      context.getSelf().tell(command);
    }).thenNoReply();
  }

  /** The model server lost a version's adapter: load the routable ones again (at most once a while). */
  ReplyEffect<Event, State> servingLost(State s, ServingLost c) {
    calls.reload(s, c.version(), clock.instant());
    return effect.noReply();
  }

  private Event baseModelRegistered(Instant at) {
    BaseModel base = serving.baseModel().orElseThrow();
    return new Deployments.BaseModelRegistered(BaseModel.VERSION, base.provider(), base.model(), base.endpoint(), at);
  }

  ReplyEffect<Event, State> deployCall(State s, DeploymentCalls.DeployCall c) {
    calls.deploy(s, c);
    return effect.noReply();
  }

  ReplyEffect<Event, State> undeployCall(State s, DeploymentCalls.UndeployCall c) {
    calls.undeploy(s, c);
    return effect.noReply();
  }

  ReplyEffect<Event, State> deployOutcome(State s, DeploymentCalls.DeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.REQUESTED
        || !Objects.equals(dep.servedModel(), c.servedModel())) {
      calls.resume(s); // an intent recorded while this call ran waits for it to end
      return effect.noReply();
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    if (c.error() == null) {
      deployments.confirm(p, c.version(), dep, settings.steps(), now);
    } else if (c.retryable() && c.attempt() < serving.maxAttempts()) {
      calls.retryDeploy(c.version(), c.attempt() + 1);
      return effect.noReply();
    } else {
      p.add(new Deployments.DeploymentFailed(c.version(), dep.servedModel(), c.error(), c.attempt(), now));
      // A load that timed out or lost its answer may still land on the server, and nothing would
      // ever unload it: the unload intent goes into the same write (an unknown name counts as done).
      p.add(new Deployments.UndeployRequested(c.version(), dep.servedModel(),
          "load failed: unloading whatever of it may have landed", now));
      rollouts.autoDeploy(p, now);
    }
    return persistNoReply(p);
  }

  /** A retained version's retention may have ended: its unload is due now, with nothing else written. */
  ReplyEffect<Event, State> retentionEnded(State s) {
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    deployments.planDueUndeploys(p, clock.instant());
    if (p.isEmpty()) {
      retention.schedule(s); // woke before the end (a wait longer than a timer takes)
      return effect.noReply();
    }
    return persistNoReply(p);
  }

  ReplyEffect<Event, State> undeployOutcome(State s, DeploymentCalls.UndeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.UNDEPLOYING) {
      calls.resume(s); // a promote again while the unload ran: its load starts now
      return effect.noReply();
    }
    if (c.error() != null) {
      calls.retryUndeploy(c.version(), c.attempt() + 1);
      return effect.noReply();
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new Deployments.Undeployed(c.version(), dep.servedModel(), clock.instant()));
    return persistNoReply(p);
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
        rollouts.startRollout(p, v.version(), now, RolloutPlanner.promoteReason(c.actor()), c.actor());
      }
      case CANARY, RAMP, PAUSED -> {
        RollingOut r = (RollingOut) s;
        if (RolloutPlanner.repeatsStartingPromote(r, v, RolloutPlanner.promoteReason(c.actor()))) {
          // A client that timed out sends its promote again: the canary it started keeps running.
          return reply(c.replyTo(), status(s, v.version(), false, List.of(RolloutPlanner.ALREADY_PROMOTED)));
        }
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
  // During a rollout (and their refusals outside one)
  // ------------------------------------------------------------------------------------------

  ReplyEffect<Event, State> pause(RollingOut s, Pause c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return reply(c.replyTo(), Failure.invalidTransition("pause", v));
    }
    if (s.rollout().paused()) {
      return reply(c.replyTo(), status(s, v.version(), false, List.of("already paused")));
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new RolloutPaused(v.version(), false, "manual pause", List.of(), clock.instant(), c.actor()));
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  ReplyEffect<Event, State> resume(RollingOut s, Resume c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return reply(c.replyTo(), Failure.invalidTransition("resume", v));
    }
    if (!s.rollout().paused()) {
      return reply(c.replyTo(), status(s, v.version(), false, List.of("not paused")));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new RolloutResumed(v.version(), now, c.actor()));
    rollouts.evaluate(p, now);
    // The resume is itself a step check: the tests may pause (or roll back) the candidate again at
    // once. The reply says why, or the operator saw 202 "PAUSED" with no reason (trial t74).
    List<String> reasons = p.events().stream().map(ModelCommandHandlers::transitionReason)
        .flatMap(Optional::stream).toList();
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, reasons));
  }

  /** The reason of a decision that ends or holds a rollout; empty for any other event. */
  private static Optional<String> transitionReason(Event e) {
    if (e instanceof RolloutPaused x) return Optional.of(x.reason());
    if (e instanceof VersionRolledBack x) return Optional.of(x.reason());
    if (e instanceof VersionPromoted x) return Optional.of(x.reason());
    return Optional.empty();
  }

  /** Pause or resume without a rollout: the version is unknown or not in rollout. */
  ReplyEffect<Event, State> refuseOutsideRollout(
      State s, String version, String verb, ActorRef<TransitionReply> replyTo) {
    TransitionReply refusal = s.models().find(version)
        .<TransitionReply>map(v -> Failure.invalidTransition(verb, v))
        .orElseGet(() -> Failure.notFound(version));
    return reply(replyTo, refusal);
  }

  ReplyEffect<Event, State> outcomeWithoutRollout(Idle s, RecordOutcome c) {
    Optional<String> invalid = ModelValidation.outcome(c);
    if (invalid.isPresent()) {
      return reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED,
        "no rollout in progress: outcomes are measured only for a candidate in rollout and for the "
            + "stable during that rollout"));
  }

  ReplyEffect<Event, State> recordOutcome(RollingOut s, RecordOutcome c) {
    Optional<String> invalid = ModelValidation.outcome(c);
    if (invalid.isPresent()) {
      return reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    Rollout r = s.rollout();
    SessionSet seen;
    if (c.modelVersion().equals(r.candidate())) {
      seen = r.candidateSessions();
    } else if (c.modelVersion().equals(r.stableVersion())) {
      seen = r.stableSessions();
    } else {
      String detail = s.models().find(c.modelVersion()).isPresent()
          ? c.modelVersion() + " is neither the candidate " + r.candidate() + " nor the stable "
              + r.stableVersion() + "; not measured"
          : "unknown version " + c.modelVersion() + "; not measured";
      return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED, detail));
    }
    if (c.isRevision()) return revisedOutcome(s, c, seen);
    Instant started = s.rolloutStartedAt();
    if (c.completedAt() != null && started != null && c.completedAt().isBefore(started)) {
      return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED,
          "session " + c.sessionId() + " completed at " + c.completedAt() + ", before the rollout of "
              + r.candidate() + " began at " + started + "; not measured"));
    }
    if (seen.contains(c.sessionId())) {
      return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.DUPLICATE,
          "session " + c.sessionId() + " was already counted for " + c.modelVersion()));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new OutcomeRecorded(c.sessionId(), c.modelVersion(), c.success(), c.rating(),
        c.thumbsUp(), c.thumbsDown(), c.latencyP95Ms(), now, c.modelCalls(), c.upstreamErrors(), c.tokens(),
        c.sessionStartedAt()));
    rollouts.evaluate(p, now);
    OutcomeAck ack = new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.RECORDED, "recorded");
    return persist(p, c.replyTo(), st -> ack);
  }

  /**
   * Feedback that came after a counted session's outcome: its satisfaction score, the first it has,
   * joins the figures (a rating sent after the result was never measured). Anything else of a
   * revision is already counted or, for a session this rollout did not count, not measured.
   */
  private ReplyEffect<Event, State> revisedOutcome(RollingOut s, RecordOutcome c, SessionSet seen) {
    String why = !seen.contains(c.sessionId()) ? "session " + c.sessionId() + " was not counted in this rollout"
        : seen.containsScored(c.sessionId(), s.rollout().marksKept()) ? "the satisfaction of session " + c.sessionId() + " was already counted"
        : OutcomeAggregates.satisfactionScore(c.rating(), c.thumbsUp(), c.thumbsDown()) == null
            ? "the revision of session " + c.sessionId() + " has no rating or thumbs" : null;
    if (why != null) {
      return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.DUPLICATE, why));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new ModelEvents.OutcomeRevised(c.sessionId(), c.modelVersion(), c.rating(), c.thumbsUp(), c.thumbsDown(),
        now));
    rollouts.evaluate(p, now);
    OutcomeAck ack = new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.RECORDED, "satisfaction recorded");
    return persist(p, c.replyTo(), st -> ack);
  }

  ReplyEffect<Event, State> stepTick(RollingOut s) {
    Instant now = clock.instant();
    Rollout r = s.rollout();
    if (r.paused()) {
      return effect.noReply();
    }
    Instant deadline = r.stepStartedAt().plus(settings.stepDuration());
    if (now.isBefore(deadline)) {
      scheduleStepTick(s, false);
      return effect.noReply();
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    rollouts.evaluate(p, now);
    if (p.isEmpty()) {
      // Deadline passed but too few samples: the next outcome re-evaluates; no busy re-ticking.
      return effect.noReply();
    }
    return persistNoReply(p);
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
    // A file changed since may refuse them now: then the file's settings are in force, and that is said.
    settings = io.otl.core.SettingsOverlay.inForce(resolver, change == null ? Map.of() : change.overrides(),
        e -> context.getLog().warn("agent {}: the run-time rollout settings of {} no longer apply ({}); the file's"
            + " are in force", agentId, change.at(), e.getMessage()));
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
    return new ModelProtocol.RolloutPolicyView(agentId, RolloutPolicy.effective(settings),
        c == null ? Map.of() : c.overrides(), c == null ? null : c.changedBy(), c == null ? null : c.at());
  }

  // ------------------------------------------------------------------------------------------
  // Reads
  // ------------------------------------------------------------------------------------------

  /**
   * A read writes nothing: for an agent whose v0 is not registered yet, the view shows v0 as the
   * first version-touching command will register it (design §3.3: STABLE from the start).
   */
  ReplyEffect<Event, State> get(State s, ModelProtocol.Get c) {
    State shown = needsBaseModel(s) ? ModelEventHandler.apply(s, baseModelRegistered(clock.instant())) : s;
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

  // ------------------------------------------------------------------------------------------
  // Persisting, replies and the step timer
  // ------------------------------------------------------------------------------------------

  ReplyEffect<Event, State> noReply() {
    return effect.noReply();
  }

  private <R> ReplyEffect<Event, State> reply(ActorRef<R> replyTo, R message) {
    return effect.reply(replyTo, message);
  }

  private <R> ReplyEffect<Event, State> persist(Plan<State, Event> p, ActorRef<R> replyTo, Function<State, R> reply) {
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

  private ReplyEffect<Event, State> persistNoReply(Plan<State, Event> p) {
    deployments.planUndeploys(p, clock.instant());
    List<Event> events = List.copyOf(p.events());
    return effect.persist(events).thenRun((State st) -> afterPersist(st, events)).thenNoReply();
  }

  private void afterPersist(State st, List<Event> events) {
    TransitionLog.log(context.getLog(), agentId, events, st);
    scheduleStepTick(st, false);
    calls.resume(st);
    retention.schedule(st);
  }

  private VersionStatus status(State s, String version, boolean created, List<String> reasons) {
    VersionRecord v = s.models().require(version);
    return new VersionStatus(agentId, version, v.state(), ModelViews.ratioOf(s, v), created, List.copyOf(reasons));
  }

  /**
   * Schedules a StepTick for the time left in the current step (computed from the injected clock
   * and the step start stored in state), or cancels it when nothing waits for a deadline. After
   * recovery a deadline that has already passed gets one immediate tick.
   */
  private void scheduleStepTick(State state, boolean afterRecovery) {
    if (state instanceof RollingOut r && !r.rollout().paused()) {
      Instant deadline = r.rollout().stepStartedAt().plus(settings.stepDuration());
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
