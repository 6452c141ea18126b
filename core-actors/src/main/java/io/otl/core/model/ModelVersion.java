package io.otl.core.model;

import io.otl.core.JsonSerializable;
import io.otl.core.Persisted;
import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.serving.Serving;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorRef;
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
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
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
 */
public final class ModelVersion
    extends EventSourcedBehaviorWithEnforcedReplies<
        ModelVersion.Command, ModelVersion.Event, ModelVersion.State> {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "ModelVersion");

  /** Tag of every transition event (read by the model-updates publisher and the audit). */
  public static final String TRANSITIONS_TAG = "model-transitions";

  static final String STEP_TIMER = "step-tick";


  // ------------------------------------------------------------------------------------------
  // Version states
  // ------------------------------------------------------------------------------------------

  /**
   * State of one version. the design's "PROMOTED (100 %, becomes STABLE)" is the {@link
   * VersionPromoted} event; the version's state is then STABLE. The stable it replaced becomes
   * RETIRED, restorable by a manual rollback until its {@code retainedUntil}.
   */
  public enum VersionState {
    REGISTERED,
    EVALUATING,
    READY,
    REJECTED,
    /** Being loaded into serving (intent recorded, load not confirmed): serves nothing. */
    DEPLOYING,
    /** The serving backend refused or never confirmed the load: serves nothing. */
    DEPLOY_FAILED,
    CANARY,
    RAMP,
    PAUSED,
    STABLE,
    RETIRED,
    ROLLED_BACK,
    /** A job's candidate whose offline gate had no evidence: waits for a manual promote. */
    NO_EVIDENCE
  }

  // ------------------------------------------------------------------------------------------
  // Commands
  // ------------------------------------------------------------------------------------------

  public sealed interface Command extends JsonSerializable
      permits RegisterCandidate,
          RegisterManual,
          Promote,
          Rollback,
          Pause,
          Resume,
          RecordOutcome,
          StepTick,
          Get,
          Route,
          DeploymentCalls.DeployCall,
          DeploymentCalls.DeployOutcome,
          DeploymentCalls.UndeployCall,
          DeploymentCalls.UndeployOutcome {}

  /**
   * A trained model from a job: REGISTERED → EVALUATING → offline gate → READY or REJECTED, and
   * with auto-deploy on into CANARY (or straight to STABLE for an agent's first version). A repeat
   * with the same artifact and job is answered with the version's status (idempotent hand-over).
   *
   * @param offlineMetrics the job's evaluation metrics, by metric key (other keys are kept)
   */
  public record RegisterCandidate(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      Map<String, Double> offlineMetrics,
      ActorRef<TransitionReply> replyTo)
      implements Command {}

  /** POST /v1/models/{agentId}/versions: a version registered by hand (offline gate skipped). */
  public record RegisterManual(
      String version, String artifact, String endpoint, ActorRef<TransitionReply> replyTo)
      implements Command {}

  /**
   * READY → CANARY (or → STABLE when the agent has no stable yet); CANARY/RAMP/PAUSED → STABLE at
   * once, skipping the remaining steps (an operator's override).
   */
  public record Promote(String version, ActorRef<TransitionReply> replyTo) implements Command {}

  /**
   * CANARY/RAMP/PAUSED → ROLLED_BACK; STABLE → ROLLED_BACK with the previous stable restored (if
   * still retained and no rollout is in progress).
   */
  public record Rollback(String version, String reason, ActorRef<TransitionReply> replyTo)
      implements Command {}

  /** CANARY/RAMP → PAUSED: holds the ratio, no step advances (degradation still rolls back). */
  public record Pause(String version, ActorRef<TransitionReply> replyTo) implements Command {}

  /** PAUSED → CANARY/RAMP at the same step; the step's duration restarts from the resume. */
  public record Resume(String version, ActorRef<TransitionReply> replyTo) implements Command {}

  /**
   * One completed trajectory's outcome, deduplicated by sessionId per version during a rollout.
   *
   * @param success task result, null when unknown
   * @param rating 1–5, null when the user did not rate
   * @param latencyP95Ms the session's p95 assistant latency, null when unknown
   * @param modelCalls, upstreamErrors, tokens the inference gateway's figures of the session
   *     (guardrails), null when its calls did not go through the gateway
   */
  public record RecordOutcome(
      String sessionId,
      String modelVersion,
      Boolean success,
      Double rating,
      int thumbsUp,
      int thumbsDown,
      Double latencyP95Ms,
      ActorRef<OutcomeReply> replyTo,
      Integer modelCalls,
      Integer upstreamErrors,
      Long tokens)
      implements Command {
    public RecordOutcome(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, ActorRef<OutcomeReply> replyTo) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, replyTo,
          null, null, null);
    }
  }

  /** Internal timer: the current step's deadline may have passed. No reply. */
  public enum StepTick implements Command {
    INSTANCE
  }

  /** GET /v1/models/{agentId}. */
  public record Get(ActorRef<ModelsView> replyTo) implements Command {}

  /** GET /v1/models/{agentId}/route?sessionId=. */
  public record Route(String sessionId, ActorRef<RouteReply> replyTo) implements Command {}

  // ------------------------------------------------------------------------------------------
  // Replies
  // ------------------------------------------------------------------------------------------

  /**
   * Why a command was refused; HTTP mapping: NOT_FOUND → 404, ALREADY_EXISTS → 409,
   * INVALID_TRANSITION → 409, INVALID_INPUT → 400, NO_VERSION → 404.
   */
  public enum ErrorCode {
    NOT_FOUND,
    ALREADY_EXISTS,
    INVALID_TRANSITION,
    INVALID_INPUT,
    NO_VERSION
  }

  public sealed interface TransitionReply extends JsonSerializable permits VersionStatus, Failure {}

  public sealed interface RouteReply extends JsonSerializable permits RouteDecision, Failure {}

  public sealed interface OutcomeReply extends JsonSerializable permits OutcomeAck, Failure {}

  /** A command was refused and nothing was persisted. */
  public record Failure(ErrorCode code, String message)
      implements TransitionReply, RouteReply, OutcomeReply {}

  /**
   * The version's state after an accepted command.
   *
   * @param created true when this command registered the version (HTTP 201)
   * @param reasons e.g. the offline gate's reasons for a REJECTED version
   */
  public record VersionStatus(
      String agentId,
      String version,
      VersionState state,
      double ratio,
      boolean created,
      List<String> reasons)
      implements TransitionReply {}

  /**
   * @param endpoint the serving endpoint of the version (its confirmed deployment's)
   * @param servedModel the model name to send upstream; null: pass the agent's own name on
   */
  public record RouteDecision(
      String agentId, String sessionId, String version, String endpoint, String servedModel)
      implements RouteReply {}

  public enum Disposition {
    /** Persisted and counted. */
    RECORDED,
    /** This session was already counted for this version. */
    DUPLICATE,
    /** Not measured (no rollout in progress, or the version is neither candidate nor stable). */
    IGNORED
  }

  public record OutcomeAck(
      String sessionId, String modelVersion, Disposition disposition, String detail)
      implements OutcomeReply {}

  // ------------------------------------------------------------------------------------------
  // Views (GET /v1/models/{agentId})
  // ------------------------------------------------------------------------------------------

  public record ModelsView(
      String agentId, String stable, String candidate, List<VersionView> versions)
      implements JsonSerializable {}

  /**
   * @param ratio share of sessions this version serves now
   * @param step index in the rollout plan while in rollout, else null
   * @param stepDeadline earliest time the current step may advance (null unless in rollout and
   *     not paused)
   * @param retainedUntil for a RETIRED version: until when a rollback may restore it
   */
  public record VersionView(
      String version,
      VersionState state,
      double ratio,
      String artifact,
      String endpoint,
      String sourceJobId,
      boolean manual,
      Instant registeredAt,
      Integer step,
      Instant stepStartedAt,
      Instant stepDeadline,
      Instant retainedUntil,
      MetricsView metrics,
      List<HistoryEntry> history,
      Deployment deployment) {}

  /**
   * @param offline the offline evaluation metrics given at registration
   * @param online everything measured for this version (all its rollouts)
   * @param currentStep what the current rollout step has measured for it (candidate or stable
   *     during a rollout, else null)
   */
  public record MetricsView(
      Map<String, Double> offline, MetricSummary online, MetricSummary currentStep) {}

  public record MetricSummary(
      long sessions,
      Double taskSuccessRate,
      long taskSuccessSamples,
      Double userSatisfaction,
      long userSatisfactionSamples,
      Double responseLatencyP95Ms,
      long responseLatencySamples) {

    static MetricSummary of(OutcomeAggregates a) {
      return new MetricSummary(
          a.sessions(),
          a.value(Metric.TASK_SUCCESS_RATE),
          a.samples(Metric.TASK_SUCCESS_RATE),
          a.value(Metric.USER_SATISFACTION),
          a.samples(Metric.USER_SATISFACTION),
          a.value(Metric.RESPONSE_LATENCY),
          a.samples(Metric.RESPONSE_LATENCY));
    }
  }

  /** One entry of a version's history; ratio is set for states that serve traffic. */
  public record HistoryEntry(VersionState state, Double ratio, Instant at, String reason) {}

  // ------------------------------------------------------------------------------------------
  // Events (facts only; every one but OutcomeRecorded is a tagged transition)
  // ------------------------------------------------------------------------------------------

  public sealed interface Event extends Persisted permits TransitionEvent, OutcomeRecorded {
    Instant at();
  }

  public sealed interface TransitionEvent extends Event
      permits VersionRegistered,
          EvaluationStarted,
          OfflineGatePassed,
          OfflineGateFailed,
          RolloutStarted,
          StepAdvanced,
          RolloutPaused,
          RolloutResumed,
          VersionPromoted,
          VersionRolledBack,
          Deployments.BaseModelRegistered,
          Deployments.DeploymentRequested,
          Deployments.DeploymentConfirmed,
          Deployments.DeploymentFailed,
          Deployments.UndeployRequested,
          Deployments.Undeployed,
          Supersession.CandidateSuperseded,
          EvalEvidence.GateWithoutEvidence {
    String version();
  }

  public record VersionRegistered(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      Map<String, Double> offlineMetrics,
      boolean manual,
      Instant at)
      implements TransitionEvent {}

  /** @param baselineVersion the stable the candidate is compared with, null if none */
  public record EvaluationStarted(String version, String baselineVersion, Instant at)
      implements TransitionEvent {}

  /** One metric of the offline gate. */
  public record GateCheck(
      Metric metric, Double candidate, Double baseline, double tolerance, boolean passed, String detail) {}

  public record OfflineGatePassed(String version, List<GateCheck> checks, String note, Instant at)
      implements TransitionEvent {}

  public record OfflineGateFailed(
      String version, List<GateCheck> checks, List<String> reasons, Instant at)
      implements TransitionEvent {}

  /**
   * @param stableVersion the stable the candidate is measured against
   * @param plan the ratios of the rollout, fixed for its whole duration
   */
  public record RolloutStarted(
      String version, String stableVersion, List<Double> plan, String reason, Instant at)
      implements TransitionEvent {}

  /** @param tests the tests of the step that passed (the evidence for advancing) */
  public record StepAdvanced(
      String version, int fromStep, int toStep, double ratio, List<TestResult> tests, Instant at)
      implements TransitionEvent {}

  /** @param tests for an automatic pause (rollback-on-degradation off): the failing figures */
  public record RolloutPaused(
      String version, boolean automatic, String reason, List<TestResult> tests, Instant at)
      implements TransitionEvent {}

  public record RolloutResumed(String version, Instant at) implements TransitionEvent {}

  /**
   * @param previousStable the stable it replaces (null for an agent's first version)
   * @param previousRetainedUntil until when the previous stable may be restored
   * @param tests the last step's tests for an automatic promotion
   */
  public record VersionPromoted(
      String version,
      String previousStable,
      Instant previousRetainedUntil,
      boolean automatic,
      String reason,
      List<TestResult> tests,
      Instant at)
      implements TransitionEvent {}

  /**
   * @param tests for an automatic rollback: every test run at that moment, the degraded ones with
   *     {@code degraded = true} (metric, both values, sample sizes, statistic, critical value,
   *     threshold, tolerance)
   * @param restoredStable for a rollback of the STABLE version: the previous stable restored
   */
  public record VersionRolledBack(
      String version,
      boolean automatic,
      String reason,
      List<TestResult> tests,
      String restoredStable,
      Instant at)
      implements TransitionEvent {}

  public record OutcomeRecorded(
      String sessionId,
      String modelVersion,
      Boolean success,
      Double rating,
      int thumbsUp,
      int thumbsDown,
      Double latencyP95Ms,
      Instant at,
      // Guardrail figures (issue #19): optional, null in events written before them.
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) Integer modelCalls,
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) Integer upstreamErrors,
      @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) Long tokens)
      implements Event {
    @com.fasterxml.jackson.annotation.JsonCreator
    public OutcomeRecorded {}

    public OutcomeRecorded(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, Instant at) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, at, null,
          null, null);
    }

    OutcomeAggregates addTo(OutcomeAggregates a) {
      return a.add(success, rating, thumbsUp, thumbsDown, latencyP95Ms, modelCalls, upstreamErrors, tokens);
    }
  }

  /** Tags of an event: transitions carry {@link #TRANSITIONS_TAG}, outcomes none. */
  public static Set<String> tagsOf(Event event) {
    return event instanceof TransitionEvent ? Set.of(TRANSITIONS_TAG) : Set.of();
  }

  // ------------------------------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------------------------------

  public sealed interface State extends Persisted permits Idle, RollingOut {
    Models models();
  }

  /** No candidate in rollout. */
  public record Idle(Models models) implements State {}

  /** Exactly one candidate in CANARY, RAMP or PAUSED. */
  public record RollingOut(Models models, Rollout rollout) implements State {}

  /**
   * All versions of the agent, in registration order, the stable one, and the deployment of each
   * version that has one.
   */
  public record Models(List<VersionRecord> versions, String stable, Map<String, Deployment> deployments) {
    public static final Models EMPTY = new Models(List.of(), null, Map.of());

    public Models {
      versions = List.copyOf(versions);
      deployments = deployments == null ? Map.of() : Map.copyOf(deployments);
    }

    Models withDeployments(Map<String, Deployment> next) {
      return new Models(versions, stable, next);
    }

    Optional<VersionRecord> deploying() {
      return versions.stream().filter(v -> v.state() == VersionState.DEPLOYING).findFirst();
    }

    Optional<VersionRecord> find(String version) {
      return versions.stream().filter(v -> v.version().equals(version)).findFirst();
    }

    VersionRecord require(String version) {
      return find(version).orElseThrow(() -> new IllegalStateException("unknown version " + version));
    }

    Models with(VersionRecord updated) {
      List<VersionRecord> next = new ArrayList<>(versions.size() + 1);
      boolean replaced = false;
      for (VersionRecord v : versions) {
        if (v.version().equals(updated.version())) {
          next.add(updated);
          replaced = true;
        } else {
          next.add(v);
        }
      }
      if (!replaced) {
        next.add(updated);
      }
      return new Models(next, stable, deployments);
    }

    Models withStable(String newStable) {
      return new Models(versions, newStable, deployments);
    }

    Optional<VersionRecord> oldestReady() {
      return versions.stream().filter(v -> v.state() == VersionState.READY).findFirst();
    }

    /** The most recently retired version that may still be restored at {@code now}. */
    Optional<VersionRecord> restorablePrevious(Instant now) {
      return versions.stream()
          .filter(v -> v.state() == VersionState.RETIRED && v.retainedUntil() != null)
          .filter(v -> now.isBefore(v.retainedUntil()))
          .max((a, b) -> a.retiredAt().compareTo(b.retiredAt()));
    }
  }

  public record VersionRecord(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      boolean manual,
      Map<String, Double> offlineMetrics,
      VersionState state,
      Instant registeredAt,
      Instant retiredAt,
      Instant retainedUntil,
      OutcomeAggregates online,
      List<HistoryEntry> history) {

    public VersionRecord {
      offlineMetrics =
          offlineMetrics == null
              ? Map.of()
              : Collections.unmodifiableMap(new LinkedHashMap<>(offlineMetrics));
      history = List.copyOf(history);
    }

    VersionRecord moveTo(VersionState next, Double ratio, Instant at, String reason) {
      List<HistoryEntry> h = new ArrayList<>(history);
      h.add(new HistoryEntry(next, ratio, at, reason));
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          next, registeredAt, retiredAt, retainedUntil, online, h);
    }

    VersionRecord retire(Instant at, Instant until, String reason) {
      VersionRecord moved = moveTo(VersionState.RETIRED, null, at, reason);
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          moved.state, registeredAt, at, until, online, moved.history);
    }

    VersionRecord withOutcome(OutcomeRecorded o) {
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          state, registeredAt, retiredAt, retainedUntil,
          o.addTo(online),
          history);
    }
  }

  /**
   * The rollout in progress: the plan, the current step and what it has measured, and the
   * session ids already counted (for deduplication, for the whole rollout).
   */
  public record Rollout(
      String candidate,
      String stableVersion,
      List<Double> plan,
      int step,
      Instant stepStartedAt,
      boolean paused,
      OutcomeAggregates candidateStep,
      OutcomeAggregates stableStep,
      SessionSet candidateSessions,
      SessionSet stableSessions) {

    public Rollout {
      plan = List.copyOf(plan);
    }

    double ratio() {
      return plan.get(step);
    }

    VersionState servingState() {
      return step == 0 ? VersionState.CANARY : VersionState.RAMP;
    }

    Rollout toStep(int next, Instant at) {
      return new Rollout(candidate, stableVersion, plan, next, at, false, OutcomeAggregates.EMPTY,
          OutcomeAggregates.EMPTY, candidateSessions, stableSessions);
    }

    Rollout paused(boolean p, Instant stepStart) {
      return new Rollout(candidate, stableVersion, plan, step, stepStart, p, candidateStep,
          stableStep, candidateSessions, stableSessions);
    }

    Rollout withOutcome(OutcomeRecorded o) {
      if (o.modelVersion().equals(candidate)) {
        return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused,
            o.addTo(candidateStep),
            stableStep, candidateSessions.add(o.sessionId()), stableSessions);
      }
      return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused, candidateStep,
          o.addTo(stableStep),
          candidateSessions, stableSessions.add(o.sessionId()));
    }
  }

  // ------------------------------------------------------------------------------------------
  // Construction
  // ------------------------------------------------------------------------------------------

  private final String agentId;
  private final ModelSettings settings;
  private final Clock clock;
  private final TimerScheduler<Command> timers;
  private final Serving serving;
  private final ActorContext<Command> context;
  private final DeploymentCalls calls;
  private final DeploymentPlanner planner;

  /** Versions served at their registered endpoints, no base model (as before deployment existed). */
  public static Behavior<Command> create(String agentId, ModelSettings settings, Clock clock) {
    return create(agentId, settings, clock, Serving.registeredEndpoints());
  }

  /** With a serving backend, and the base model registered as v0 when {@code serving} has one. */
  public static Behavior<Command> create(String agentId, ModelSettings settings, Clock clock, Serving serving) {
    Objects.requireNonNull(agentId, "agentId");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(serving, "serving");
    return Behaviors.setup(ctx -> Behaviors.withTimers(
        timers -> new ModelVersion(agentId, settings, clock, timers, serving, ctx)));
  }

  private ModelVersion(
      String agentId, ModelSettings settings, Clock clock, TimerScheduler<Command> timers,
      Serving serving, ActorContext<Command> context) {
    super(
        PersistenceId.of(ENTITY_TYPE_KEY.name(), agentId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.agentId = agentId;
    this.settings = settings;
    this.clock = clock;
    this.timers = timers;
    this.serving = serving;
    this.context = context;
    this.calls = new DeploymentCalls(agentId, serving, context, timers);
    this.planner = new DeploymentPlanner(agentId, serving);
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

  @Override
  public Set<String> tagsFor(Event event) {
    return tagsOf(event);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          scheduleStepTick(state, true);
          calls.resume(state);
          calls.ensureLoaded(state);
        })
        .build();
  }

  // ------------------------------------------------------------------------------------------
  // Command handlers
  // ------------------------------------------------------------------------------------------

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    CommandHandlerWithReplyBuilder<Command, Event, State> b = newCommandHandlerWithReplyBuilder();

    b.forStateType(Idle.class)
        .onCommand(Pause.class, (s, c) -> reply(c.replyTo(), refuseOutsideRollout(s, c.version(), "pause")))
        .onCommand(Resume.class, (s, c) -> reply(c.replyTo(), refuseOutsideRollout(s, c.version(), "resume")))
        .onCommand(RecordOutcome.class, this::outcomeWithoutRollout)
        .onCommand(StepTick.class, (s, c) -> Effect().noReply());

    b.forStateType(RollingOut.class)
        .onCommand(Pause.class, this::pause)
        .onCommand(Resume.class, this::resume)
        .onCommand(RecordOutcome.class, this::recordOutcome)
        .onCommand(StepTick.class, (s, c) -> stepTick(s));

    b.forAnyState()
        .onCommand(RegisterCandidate.class, this::registerCandidate)
        .onCommand(RegisterManual.class, this::registerManual)
        .onCommand(Promote.class, this::promote)
        .onCommand(Rollback.class, this::rollback)
        .onCommand(Get.class, (s, c) -> Effect().reply(c.replyTo(), view(s)))
        .onCommand(Route.class, this::route)
        .onCommand(DeploymentCalls.DeployCall.class, (s, c) -> {
          calls.deploy(s, c);
          return Effect().noReply();
        })
        .onCommand(DeploymentCalls.DeployOutcome.class, this::deployOutcome)
        .onCommand(DeploymentCalls.UndeployCall.class, (s, c) -> {
          calls.undeploy(s, c);
          return Effect().noReply();
        })
        .onCommand(DeploymentCalls.UndeployOutcome.class, this::undeployOutcome);

    CommandHandlerWithReply<Command, Event, State> handler = b.build();
    return (state, command) -> needsBaseModel(state)
        ? registerBaseModelThenHandle(command)
        : handler.apply(state, command);
  }

  // ------------------------------------------------------------------------------------------
  // Base model (v0) and deployment outcomes
  // ------------------------------------------------------------------------------------------

  /**
   * v0 is registered before the first command of an agent that has never had a stable version,
   * so the first candidate canaries against the base model instead of replacing it at once.
   */
  private boolean needsBaseModel(State s) {
    return serving.baseModel().isPresent() && s instanceof Idle && s.models().stable() == null
        && s.models().find(io.otl.core.serving.BaseModel.VERSION).isEmpty();
  }

  private ReplyEffect<Event, State> registerBaseModelThenHandle(Command command) {
    io.otl.core.serving.BaseModel base = serving.baseModel().orElseThrow();
    Event e = new Deployments.BaseModelRegistered(io.otl.core.serving.BaseModel.VERSION, base.provider(),
        base.model(), base.endpoint(), clock.instant());
    // The command is handled again once v0 is in the state; its reply comes from that pass.
    return Effect().persist(e).thenRun((State st) -> context.getSelf().tell(command)).thenNoReply();
  }

  private ReplyEffect<Event, State> deployOutcome(State s, DeploymentCalls.DeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.REQUESTED
        || !Objects.equals(dep.servedModel(), c.servedModel())) {
      return Effect().noReply();
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    if (c.error() == null) {
      planner.confirm(p, c.version(), dep, settings.steps(), now);
    } else if (c.retryable() && c.attempt() < serving.maxAttempts()) {
      calls.retryDeploy(c.version(), c.attempt() + 1);
      return Effect().noReply();
    } else {
      p.add(new Deployments.DeploymentFailed(c.version(), dep.servedModel(), c.error(), c.attempt(), now));
      autoDeploy(p, now);
    }
    return persistNoReply(p);
  }

  private ReplyEffect<Event, State> undeployOutcome(State s, DeploymentCalls.UndeployOutcome c) {
    calls.finished(c.version());
    Deployment dep = s.models().deployments().get(c.version());
    if (dep == null || dep.status() != Deployments.Status.UNDEPLOYING) {
      return Effect().noReply();
    }
    if (c.error() != null) {
      calls.retryUndeploy(c.version(), c.attempt() + 1);
      return Effect().noReply();
    }
    Plan p = new Plan(s);
    p.add(new Deployments.Undeployed(c.version(), dep.servedModel(), clock.instant()));
    return persistNoReply(p);
  }

  private ReplyEffect<Event, State> persistNoReply(Plan p) {
    planner.planUndeploys(p, clock.instant());
    return Effect().persist(p.events).thenRun((State st) -> afterPersist(st)).thenNoReply();
  }

  private void afterPersist(State st) {
    scheduleStepTick(st, false);
    calls.resume(st);
  }

  private ReplyEffect<Event, State> registerCandidate(State s, RegisterCandidate c) {
    Optional<String> invalid = validateRegistration(c.version(), c.artifact(), c.endpoint());
    if (invalid.isEmpty()) {
      invalid = validateOfflineMetrics(c.offlineMetrics());
    }
    if (invalid.isPresent()) {
      return reply(c.replyTo(), new Failure(ErrorCode.INVALID_INPUT, invalid.get()));
    }
    Optional<VersionRecord> existing = s.models().find(c.version());
    if (existing.isPresent()) {
      VersionRecord v = existing.get();
      if (!v.manual()
          && v.artifact().equals(c.artifact())
          && Objects.equals(v.sourceJobId(), c.sourceJobId())) {
        return reply(c.replyTo(), status(s, v.version(), false, List.of()));
      }
      return reply(c.replyTo(), alreadyExists(v));
    }
    Instant now = clock.instant();
    Map<String, Double> metrics = c.offlineMetrics() == null ? Map.of() : c.offlineMetrics();
    Plan p = new Plan(s);
    p.add(new VersionRegistered(c.version(), c.artifact(), c.endpoint(), c.sourceJobId(), metrics, false, now));
    String baseline = s.models().stable();
    p.add(new EvaluationStarted(c.version(), baseline, now));
    Optional<String> noEvidence =
        EvalEvidence.missing(c.version(), c.sourceJobId(), metrics, settings.evaluationMetrics(), s.models());
    if (noEvidence.isPresent()) {
      p.add(new EvalEvidence.GateWithoutEvidence(c.version(), noEvidence.get(), now));
      return persist(p, c.replyTo(), st -> status(st, c.version(), true, List.of(noEvidence.get())));
    }
    List<GateCheck> checks = offlineGate(s.models(), metrics);
    List<String> reasons =
        checks.stream().filter(g -> !g.passed()).map(GateCheck::detail).collect(Collectors.toList());
    if (reasons.isEmpty()) {
      p.add(new OfflineGatePassed(c.version(), checks,
          baseline == null ? "offline gate passed: no stable version yet" : "offline gate passed against " + baseline,
          now));
      Supersession.olderReady(p.state.models(), c.version(), now).forEach(p::add);
      autoDeploy(p, now);
    } else {
      p.add(new OfflineGateFailed(c.version(), checks, reasons, now));
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), true, reasons));
  }

  private ReplyEffect<Event, State> registerManual(State s, RegisterManual c) {
    Optional<String> invalid = validateRegistration(c.version(), c.artifact(), c.endpoint());
    if (invalid.isPresent()) {
      return reply(c.replyTo(), new Failure(ErrorCode.INVALID_INPUT, invalid.get()));
    }
    Optional<VersionRecord> existing = s.models().find(c.version());
    if (existing.isPresent()) {
      return reply(c.replyTo(), alreadyExists(existing.get()));
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    p.add(new VersionRegistered(c.version(), c.artifact(), c.endpoint(), null, Map.of(), true, now));
    p.add(new EvaluationStarted(c.version(), s.models().stable(), now));
    p.add(new OfflineGatePassed(c.version(), List.of(),
        "registered by hand: no offline metrics, offline gate skipped", now));
    Supersession.olderReady(p.state.models(), c.version(), now).forEach(p::add);
    autoDeploy(p, now);
    return persist(p, c.replyTo(), st -> status(st, c.version(), true, List.of()));
  }

  private ReplyEffect<Event, State> promote(State s, Promote c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), notFound(c.version()));
    }
    VersionRecord v = found.get();
    Instant now = clock.instant();
    Plan p = new Plan(s);
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
                  + " is already in rollout (" + describe(r) + "); only one candidate rolls out at a time"));
        }
        startRollout(p, v.version(), now, "manual promote");
      }
      case CANARY, RAMP, PAUSED -> {
        RollingOut r = (RollingOut) s;
        p.add(new VersionPromoted(v.version(), r.rollout().stableVersion(),
            now.plus(settings.retainPrevious()), false,
            "manual promote from " + describe(r) + ", remaining steps skipped", List.of(), now));
        autoDeploy(p, now);
      }
      default -> {
        return reply(c.replyTo(), invalidTransition("promote", v));
      }
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  private ReplyEffect<Event, State> rollback(State s, Rollback c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), notFound(c.version()));
    }
    VersionRecord v = found.get();
    String reason =
        c.reason() == null || c.reason().isBlank() ? "manual rollback" : "manual rollback: " + c.reason();
    Instant now = clock.instant();
    Plan p = new Plan(s);
    switch (v.state()) {
      case CANARY, RAMP, PAUSED -> {
        p.add(new VersionRolledBack(v.version(), false, reason, List.of(), null, now));
        autoDeploy(p, now);
      }
      case STABLE -> {
        if (s instanceof RollingOut r) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot roll back " + v.version() + ": it is STABLE and " + r.rollout().candidate()
                  + " is in rollout (" + describe(r) + ") against it; roll back or promote "
                  + r.rollout().candidate() + " first"));
        }
        Optional<VersionRecord> previous = s.models().restorablePrevious(now);
        if (previous.isEmpty()) {
          return reply(c.replyTo(), new Failure(ErrorCode.INVALID_TRANSITION,
              "cannot roll back " + v.version() + ": it is STABLE and no previous stable is retained"
                  + " (retain-previous = " + settings.retainPrevious() + ")"));
        }
        p.add(new VersionRolledBack(v.version(), false, reason, List.of(), previous.get().version(), now));
        autoDeploy(p, now);
      }
      default -> {
        return reply(c.replyTo(), invalidTransition("roll back", v));
      }
    }
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  private ReplyEffect<Event, State> pause(RollingOut s, Pause c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return reply(c.replyTo(), invalidTransition("pause", v));
    }
    if (s.rollout().paused()) {
      return reply(c.replyTo(), status(s, v.version(), false, List.of("already paused")));
    }
    Plan p = new Plan(s);
    p.add(new RolloutPaused(v.version(), false, "manual pause", List.of(), clock.instant()));
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  private ReplyEffect<Event, State> resume(RollingOut s, Resume c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return reply(c.replyTo(), notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return reply(c.replyTo(), invalidTransition("resume", v));
    }
    if (!s.rollout().paused()) {
      return reply(c.replyTo(), status(s, v.version(), false, List.of("not paused")));
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    p.add(new RolloutResumed(v.version(), now));
    evaluate(p, now);
    return persist(p, c.replyTo(), st -> status(st, c.version(), false, List.of()));
  }

  private ReplyEffect<Event, State> outcomeWithoutRollout(Idle s, RecordOutcome c) {
    Optional<String> invalid = validateOutcome(c);
    if (invalid.isPresent()) {
      return reply(c.replyTo(), new Failure(ErrorCode.INVALID_INPUT, invalid.get()));
    }
    return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED,
        "no rollout in progress: outcomes are measured only for a candidate in rollout and for the "
            + "stable during that rollout"));
  }

  private ReplyEffect<Event, State> recordOutcome(RollingOut s, RecordOutcome c) {
    Optional<String> invalid = validateOutcome(c);
    if (invalid.isPresent()) {
      return reply(c.replyTo(), new Failure(ErrorCode.INVALID_INPUT, invalid.get()));
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
    if (seen.contains(c.sessionId())) {
      return reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.DUPLICATE,
          "session " + c.sessionId() + " was already counted for " + c.modelVersion()));
    }
    Instant now = clock.instant();
    Plan p = new Plan(s);
    p.add(new OutcomeRecorded(c.sessionId(), c.modelVersion(), c.success(), c.rating(),
        c.thumbsUp(), c.thumbsDown(), c.latencyP95Ms(), now, c.modelCalls(), c.upstreamErrors(), c.tokens()));
    evaluate(p, now);
    OutcomeAck ack = new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.RECORDED, "recorded");
    return persist(p, c.replyTo(), st -> ack);
  }

  private ReplyEffect<Event, State> stepTick(RollingOut s) {
    Instant now = clock.instant();
    Rollout r = s.rollout();
    if (r.paused()) {
      return Effect().noReply();
    }
    Instant deadline = r.stepStartedAt().plus(settings.stepDuration());
    if (now.isBefore(deadline)) {
      scheduleStepTick(s, false);
      return Effect().noReply();
    }
    Plan p = new Plan(s);
    evaluate(p, now);
    if (p.events.isEmpty()) {
      // Deadline passed but too few samples: the next outcome re-evaluates; no busy re-ticking.
      return Effect().noReply();
    }
    return persistNoReply(p);
  }

  private ReplyEffect<Event, State> route(State s, Route c) {
    if (c.sessionId() == null || c.sessionId().isBlank()) {
      return reply(c.replyTo(), new Failure(ErrorCode.INVALID_INPUT, "sessionId: must not be blank"));
    }
    Optional<RoutingTable.Target> target = routingTable(s).route(c.sessionId());
    if (target.isEmpty()) {
      return reply(c.replyTo(), new Failure(ErrorCode.NO_VERSION,
          "agent " + agentId + " has no stable version and no candidate in rollout; register one "
              + "with POST /v1/models/" + agentId + "/versions"));
    }
    String version = target.get().version();
    return reply(c.replyTo(), new RouteDecision(agentId, c.sessionId(), version,
        planner.currentEndpoint(s.models(), version, target.get().endpoint()),
        planner.servedModel(s.models(), version)));
  }

  // ------------------------------------------------------------------------------------------
  // Decisions (pure functions of state, settings and the time taken by the command handler)
  // ------------------------------------------------------------------------------------------

  /** Events of one command, with the state they lead to, so later decisions see earlier ones. */
  static final class Plan {
    final List<Event> events = new ArrayList<>();
    State state;

    Plan(State initial) {
      this.state = initial;
    }

    void add(Event e) {
      events.add(e);
      state = applyEvent(state, e);
    }
  }

  /** With auto-deploy on and no rollout in progress, the oldest READY version starts. */
  private void autoDeploy(Plan p, Instant now) {
    while (settings.autoDeploy() && p.state instanceof Idle && p.state.models().deploying().isEmpty()) {
      Optional<VersionRecord> next = p.state.models().oldestReady();
      if (next.isEmpty()) {
        return;
      }
      startRollout(p, next.get().version(), now, "auto-deploy");
    }
  }

  /** READY → CANARY, or → STABLE directly when there is no stable to compare with. */
  private void startRollout(Plan p, String version, Instant now, String why) {
    String stable = p.state.models().stable();
    if (stable == null) {
      p.add(new VersionPromoted(version, null, null, why.equals("auto-deploy"),
          why + ": first version of agent " + agentId + ", no stable to compare with; promoted directly",
          List.of(), now));
    } else if (!serving.backend().callsServer()) {
      p.add(new RolloutStarted(version, stable, settings.steps(), why, now));
    } else {
      planner.requestDeployment(p, version, why, now);
    }
  }

  /**
   * The degradation and step rule ({@link CanaryRules}), after the events already planned:
   * sample-ratio mismatch → PAUSED; a metric degraded by the always-valid sequential test →
   * ROLLED_BACK (or PAUSED when rollback-on-degradation is off); the step's duration over with
   * enough observations on every metric → next step, or STABLE after the last step below 100 %.
   */
  private void evaluate(Plan p, Instant now) {
    if (!(p.state instanceof RollingOut s)) {
      return;
    }
    Rollout r = s.rollout();
    CanaryRules.Decision d = CanaryRules.decide(settings, CanaryRules.Method.SEQUENTIAL, r.plan(),
        r.step(), r.stepStartedAt(), r.paused(), r.stableStep(), r.candidateStep(),
        CanaryRules.mismatchAcknowledged(s.models().require(r.candidate()).history()), now);
    List<TestResult> tests = d.tests();
    switch (d.action()) {
      case PAUSE_MISMATCH -> {
        if (!r.paused()) {
          p.add(new RolloutPaused(r.candidate(), true, CanaryRules.MISMATCH_PREFIX + " at "
              + describe(s) + ": " + d.detail() + "; no step-up and no rollback on these figures "
              + "until an operator resumes, promotes or rolls back", tests, now));
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
        p.add(new VersionPromoted(r.candidate(), r.stableVersion(), now.plus(settings.retainPrevious()),
            true, "all rollout steps passed (last: " + describe(s) + ")", tests, now));
        autoDeploy(p, now);
      }
      case ADVANCE -> {
        int next = r.step() + 1;
        p.add(new StepAdvanced(r.candidate(), r.step(), next, r.plan().get(next), tests, now));
      }
      case WAIT -> { }
    }
  }

  private List<GateCheck> offlineGate(Models models, Map<String, Double> candidate) {
    String stable = models.stable();
    Map<String, Double> baseline =
        stable == null ? Map.of() : models.require(stable).offlineMetrics();
    double tol = settings.offlineGateTolerance();
    List<GateCheck> checks = new ArrayList<>();
    for (Metric m : settings.evaluationMetrics()) {
      Double c = candidate.get(m.key());
      Double b = EvalEvidence.baseline(candidate, baseline, m);
      String what = candidate.containsKey(EvalEvidence.BASELINE_PREFIX + m.key()) ? "same-run bench score" : "baseline";
      if (stable == null) {
        checks.add(new GateCheck(m, c, null, tol, true, m.key() + ": no stable version yet"));
      } else if (b == null) {
        checks.add(new GateCheck(m, c, null, tol, true,
            m.key() + ": stable " + stable + " has no offline baseline"));
      } else if (c == null) {
        checks.add(new GateCheck(m, null, b, tol, false, String.format(Locale.ROOT,
            "%s: missing from the offline metrics (stable %s has %.4f)", m.key(), stable, b)));
      } else {
        double bound = m.higherIsBetter() ? b * (1 - tol) : b * (1 + tol);
        boolean ok = m.higherIsBetter() ? c >= bound : c <= bound;
        checks.add(new GateCheck(m, c, b, tol, ok, String.format(Locale.ROOT,
            "%s: %.4f %s stable %s %s %.4f (limit %.4f, offline-gate-tolerance %.4f)",
            m.key(), c, ok ? "meets" : (m.higherIsBetter() ? "is below" : "is above"), stable, what, b,
            bound, tol)));
      }
    }
    return checks;
  }

  // ------------------------------------------------------------------------------------------
  // Event handler (pure)
  // ------------------------------------------------------------------------------------------

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(ModelVersion::applyEvent);
  }

  /**
   * The pure event handler of the entity: the live entity, recovery and the audit's "state as of
   * T" all go through here.
   */
  public static State applyEvent(State s, Event e) {
    Optional<State> deployed = Deployments.apply(s, e);
    if (deployed.isPresent()) {
      return deployed.get();
    }
    Models m = s.models();
    if (e instanceof OutcomeRecorded o) {
      RollingOut r = (RollingOut) s;
      return new RollingOut(m.with(m.require(o.modelVersion()).withOutcome(o)), r.rollout().withOutcome(o));
    }
    if (e instanceof VersionRegistered v) {
      String reason = v.manual() ? "registered by hand"
          : v.sourceJobId() == null ? "registered as candidate" : "registered from job " + v.sourceJobId();
      VersionRecord rec = new VersionRecord(v.version(), v.artifact(), v.endpoint(), v.sourceJobId(),
          v.manual(), v.offlineMetrics(), VersionState.REGISTERED, v.at(), null, null,
          OutcomeAggregates.EMPTY, List.of(new HistoryEntry(VersionState.REGISTERED, null, v.at(), reason)));
      return withModels(s, m.with(rec));
    }
    if (e instanceof EvaluationStarted v) {
      String reason = v.baselineVersion() == null ? "offline evaluation (no stable yet)"
          : "offline evaluation against " + v.baselineVersion();
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.EVALUATING, null, v.at(), reason)));
    }
    if (e instanceof OfflineGatePassed v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.READY, null, v.at(), v.note())));
    }
    if (e instanceof EvalEvidence.GateWithoutEvidence v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.NO_EVIDENCE, null, v.at(),
          EvalEvidence.historyReason(v))));
    }
    if (e instanceof Supersession.CandidateSuperseded v) {
      return withModels(s, m.with(m.require(v.version()).retire(v.at(), null, Supersession.reason(v))));
    }
    if (e instanceof OfflineGateFailed v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.REJECTED, null, v.at(),
          "offline gate failed: " + String.join("; ", v.reasons()))));
    }
    if (e instanceof RolloutStarted v) {
      Rollout rollout = new Rollout(v.version(), v.stableVersion(), v.plan(), 0, v.at(), false,
          OutcomeAggregates.EMPTY, OutcomeAggregates.EMPTY, SessionSet.EMPTY, SessionSet.EMPTY);
      return new RollingOut(m.with(m.require(v.version()).moveTo(VersionState.CANARY, rollout.ratio(),
          v.at(), v.reason() + ": canary against " + v.stableVersion())), rollout);
    }
    if (e instanceof StepAdvanced v) {
      Rollout rollout = ((RollingOut) s).rollout().toStep(v.toStep(), v.at());
      return new RollingOut(m.with(m.require(v.version()).moveTo(rollout.servingState(), v.ratio(), v.at(),
          "step " + v.fromStep() + " passed, step " + v.toStep() + " starts")), rollout);
    }
    if (e instanceof RolloutPaused v) {
      Rollout rollout = ((RollingOut) s).rollout();
      return new RollingOut(m.with(m.require(v.version()).moveTo(VersionState.PAUSED, rollout.ratio(),
          v.at(), v.reason())), rollout.paused(true, rollout.stepStartedAt()));
    }
    if (e instanceof RolloutResumed v) {
      Rollout rollout = ((RollingOut) s).rollout().paused(false, v.at());
      return new RollingOut(m.with(m.require(v.version()).moveTo(rollout.servingState(), rollout.ratio(),
          v.at(), "resumed at step " + rollout.step())), rollout);
    }
    if (e instanceof VersionPromoted v) {
      Models next = m.with(m.require(v.version()).moveTo(VersionState.STABLE, 1.0, v.at(), v.reason()));
      if (v.previousStable() != null) {
        next = next.with(next.require(v.previousStable()).retire(v.at(), v.previousRetainedUntil(),
            "superseded by " + v.version() + "; restorable until " + v.previousRetainedUntil()));
      }
      return new Idle(next.withStable(v.version()));
    }
    if (e instanceof VersionRolledBack v) {
      Models next = m.with(m.require(v.version()).moveTo(VersionState.ROLLED_BACK, 0.0, v.at(), v.reason()));
      if (v.restoredStable() == null) {
        return new Idle(next);
      }
      VersionRecord restored = next.require(v.restoredStable());
      restored = new VersionRecord(restored.version(), restored.artifact(), restored.endpoint(),
          restored.sourceJobId(), restored.manual(), restored.offlineMetrics(), restored.state(),
          restored.registeredAt(), null, null, restored.online(), restored.history())
          .moveTo(VersionState.STABLE, 1.0, v.at(), "restored by the rollback of " + v.version());
      return new Idle(next.with(restored).withStable(v.restoredStable()));
    }
    throw new IllegalStateException("unhandled event " + e.getClass().getName());
  }

  private static State withModels(State s, Models m) {
    if (s instanceof RollingOut r) {
      return new RollingOut(m, r.rollout());
    }
    return new Idle(m);
  }

  // ------------------------------------------------------------------------------------------
  // Timers
  // ------------------------------------------------------------------------------------------

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
        timers.startSingleTimer(STEP_TIMER, StepTick.INSTANCE, remaining);
      } else if (afterRecovery) {
        timers.startSingleTimer(STEP_TIMER, StepTick.INSTANCE, Duration.ofMillis(1));
      }
    } else {
      timers.cancel(STEP_TIMER);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Replies and views
  // ------------------------------------------------------------------------------------------

  private <R> ReplyEffect<Event, State> reply(ActorRef<R> replyTo, R message) {
    return Effect().reply(replyTo, message);
  }

  private <R> ReplyEffect<Event, State> persist(Plan p, ActorRef<R> replyTo, Function<State, R> reply) {
    if (p.events.isEmpty()) {
      return Effect().reply(replyTo, reply.apply(p.state));
    }
    planner.planUndeploys(p, clock.instant());
    return Effect()
        .persist(p.events)
        .thenRun((State st) -> afterPersist(st))
        .thenReply(replyTo, reply::apply);
  }

  private VersionStatus status(State s, String version, boolean created, List<String> reasons) {
    VersionRecord v = s.models().require(version);
    return new VersionStatus(agentId, version, v.state(), ratioOf(s, v), created, List.copyOf(reasons));
  }

  private static double ratioOf(State s, VersionRecord v) {
    if (s instanceof RollingOut r) {
      if (v.version().equals(r.rollout().candidate())) {
        return r.rollout().ratio();
      }
      if (v.version().equals(s.models().stable())) {
        return 1.0 - r.rollout().ratio();
      }
      return 0.0;
    }
    return v.version().equals(s.models().stable()) ? 1.0 : 0.0;
  }

  static RoutingTable routingTable(State s) {
    Models m = s.models();
    VersionRecord stable = m.stable() == null ? null : m.require(m.stable());
    if (s instanceof RollingOut r) {
      VersionRecord cand = m.require(r.rollout().candidate());
      return new RoutingTable(stable == null ? null : stable.version(),
          stable == null ? null : endpointOf(m, stable), cand.version(), endpointOf(m, cand), r.rollout().ratio());
    }
    return stable == null ? RoutingTable.EMPTY
        : new RoutingTable(stable.version(), endpointOf(m, stable), null, null, 0);
  }

  /** The confirmed deployment's endpoint, else the registered one (versions without deployment). */
  private static String endpointOf(Models m, VersionRecord v) {
    Deployment d = m.deployments().get(v.version());
    return d != null && d.status() == Deployments.Status.CONFIRMED ? d.endpoint() : v.endpoint();
  }

  private ModelsView view(State s) {
    return view(agentId, s, settings.stepDuration());
  }

  /**
   * GET /v1/models/{agentId} of a state: the live entity answers with it, the audit builds the
   * same view of a replayed state.
   *
   * @param stepDuration {@code model-update.step-duration}, which sets the current step's deadline
   */
  public static ModelsView view(String agentId, State s, Duration stepDuration) {
    Rollout rollout = s instanceof RollingOut r ? r.rollout() : null;
    List<VersionView> versions = new ArrayList<>();
    for (VersionRecord v : s.models().versions()) {
      boolean isCandidate = rollout != null && v.version().equals(rollout.candidate());
      boolean isStableInRollout = rollout != null && v.version().equals(rollout.stableVersion());
      MetricSummary step = isCandidate ? MetricSummary.of(rollout.candidateStep())
          : isStableInRollout ? MetricSummary.of(rollout.stableStep()) : null;
      Instant deadline = isCandidate && !rollout.paused()
          ? rollout.stepStartedAt().plus(stepDuration) : null;
      versions.add(new VersionView(v.version(), v.state(), ratioOf(s, v), v.artifact(), v.endpoint(),
          v.sourceJobId(), v.manual(), v.registeredAt(),
          isCandidate ? rollout.step() : null,
          isCandidate ? rollout.stepStartedAt() : null,
          deadline,
          v.state() == VersionState.RETIRED ? v.retainedUntil() : null,
          new MetricsView(v.offlineMetrics(), MetricSummary.of(v.online()), step),
          v.history(), s.models().deployments().get(v.version())));
    }
    return new ModelsView(agentId, s.models().stable(), rollout == null ? null : rollout.candidate(),
        List.copyOf(versions));
  }

  private static String describe(RollingOut r) {
    Rollout o = r.rollout();
    return String.format(Locale.ROOT, "%s%s at %.2f, step %d of %d",
        o.paused() ? "PAUSED " : "", o.servingState(), o.ratio(), o.step(), o.plan().size() - 1);
  }

  private static Failure notFound(String version) {
    return new Failure(ErrorCode.NOT_FOUND, "version " + version + " is not registered");
  }

  private static Failure alreadyExists(VersionRecord v) {
    return new Failure(ErrorCode.ALREADY_EXISTS,
        "version " + v.version() + " already exists (it is " + v.state() + ")");
  }

  private static Failure invalidTransition(String verb, VersionRecord v) {
    return new Failure(ErrorCode.INVALID_TRANSITION,
        "cannot " + verb + " " + v.version() + ": it is " + v.state());
  }

  private static TransitionReply refuseOutsideRollout(State s, String version, String verb) {
    return s.models().find(version)
        .<TransitionReply>map(v -> invalidTransition(verb, v))
        .orElseGet(() -> notFound(version));
  }

  // ------------------------------------------------------------------------------------------
  // Validation (the HTTP edge validates too; the domain refuses what is invalid regardless)
  // ------------------------------------------------------------------------------------------

  private static Optional<String> validateRegistration(String version, String artifact, String endpoint) {
    String versionProblem = io.otl.core.Ids.versionProblem("version", version);
    if (versionProblem != null) return Optional.of(versionProblem);
    if (artifact == null || artifact.isBlank() || artifact.length() > 2048) {
      return Optional.of("artifact: must be a non-blank URI of at most 2048 characters, was " + quote(artifact));
    }
    if (endpoint == null || endpoint.isBlank() || endpoint.length() > 2048) {
      return Optional.of("endpoint: must be non-blank, at most 2048 characters, was " + quote(endpoint));
    }
    return Optional.empty();
  }

  private static Optional<String> validateOfflineMetrics(Map<String, Double> metrics) {
    if (metrics == null) {
      return Optional.empty();
    }
    for (Map.Entry<String, Double> e : metrics.entrySet()) {
      Double v = e.getValue();
      if (e.getKey() == null || v == null || v.isNaN() || v.isInfinite()) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be a finite number, was " + v);
      }
      boolean rate = Metric.TASK_SUCCESS_RATE.key().equals(e.getKey())
          || Metric.USER_SATISFACTION.key().equals(e.getKey());
      if (rate && (v < 0 || v > 1)) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be between 0 and 1, was " + v);
      }
      if (Metric.RESPONSE_LATENCY.key().equals(e.getKey()) && v < 0) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be >= 0 ms, was " + v);
      }
    }
    return Optional.empty();
  }

  private static Optional<String> validateOutcome(RecordOutcome c) {
    if (c.sessionId() == null || c.sessionId().isBlank()) {
      return Optional.of("sessionId: must not be blank");
    }
    if (c.modelVersion() == null || c.modelVersion().isBlank()) {
      return Optional.of("modelVersion: must not be blank");
    }
    if (c.rating() != null && !(c.rating() >= 1 && c.rating() <= 5)) {
      return Optional.of("rating: must be between 1 and 5 or absent, was " + c.rating());
    }
    if (c.thumbsUp() < 0 || c.thumbsDown() < 0) {
      return Optional.of("thumbsUp/thumbsDown: must be >= 0, were " + c.thumbsUp() + "/" + c.thumbsDown());
    }
    if (c.latencyP95Ms() != null && !(c.latencyP95Ms() >= 0 && !c.latencyP95Ms().isInfinite())) {
      return Optional.of("latencyP95Ms: must be a finite number >= 0 or absent, was " + c.latencyP95Ms());
    }
    return GuardrailInput.validate(c.modelCalls(), c.upstreamErrors(), c.tokens());
  }

  private static String quote(String s) {
    return s == null ? "null" : "'" + s + "'";
  }
}
