package io.otl.core.coordinator;

import io.otl.core.SettingsOverlay;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.entity.Plan;
import io.otl.core.training.OnlineTrainingBackend;
import io.otl.core.training.TrainingBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
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
import org.apache.pekko.persistence.typed.javadsl.EffectBuilder;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The training coordinator of one agent (entity key = agentId, design §3.2): the training pool,
 * the triggers (threshold, scheduled, manual), the pre-flight checklist and the job lifecycle
 * REQUESTED → SUBMITTED → RUNNING → SUCCEEDED | FAILED | CANCELLED, the hand-over of trained models
 * to ModelVersion, and the online (trinity-proxy) variant. See {@code package-info.java} for the
 * choices made where the design is silent.
 *
 * <p>Domain only: I/O goes through the ports ({@link DatasetExporter}, {@link TrainingBackend} or
 * {@link OnlineTrainingBackend}, {@link CandidateSink}); their results come back as internal
 * commands through {@code pipeToSelf}. Every intent is persisted before the call it announces
 * (JobSubmitting before submit, JobRequested before export, JobSucceeded before hand-over), so a
 * crash in between is recovered by repeating an idempotent call.
 *
 * <p>The entity is a package of small files: its {@link CoordinatorProtocol commands}, {@link
 * CoordinatorReplies replies and views}, {@link CoordinatorEvents events} and {@link
 * CoordinatorState state} (this class implements those interfaces, so {@code
 * TrainingCoordinator.JobRequested} and the like name their types); the pure {@link
 * CoordinatorEventHandler event handler}; the pure rules ({@link PoolRules}, {@link Preflight},
 * {@link ScheduleSlots}, {@link JobLifecycle}, {@link ProxyRules}); and the command handlers that
 * call ports: this class (pool, triggers, policy, recovery, cancel), {@link JobSteps}, {@link
 * ProxyLoop} and {@link ScheduleTrigger}. Each handler decides a {@link Plan}, run here.
 */
public final class TrainingCoordinator
    extends EventSourcedBehaviorWithEnforcedReplies<Command, Event, State>
    implements CoordinatorProtocol, CoordinatorReplies, CoordinatorEvents, CoordinatorState {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "TrainingCoordinator");
  private static final String THRESHOLD_RECHECK_TIMER = "threshold-recheck";

  /** The persistence id {@code TrainingCoordinator|<agentId>}. */
  public static PersistenceId persistenceId(String agentId) {
    return PersistenceId.of(ENTITY_TYPE_KEY.name(), agentId);
  }

  /** See {@link JobIds#jobId}. */
  public static String jobId(int seq, String agentId) {
    return JobIds.jobId(seq, agentId);
  }

  /** See {@link JobIds#agentIdOf}. */
  public static Optional<String> agentIdOf(String jobId) {
    return JobIds.agentIdOf(jobId);
  }

  /** Tags of an event: job events carry {@link #JOBS_TAG}, the others none. */
  public static Set<String> tagsOf(Event event) {
    return CoordinatorEvents.tagsOf(event);
  }

  /** See {@link CoordinatorEventHandler#applyEvent}. */
  public static State applyEvent(State s, Event e) {
    return CoordinatorEventHandler.applyEvent(s, e);
  }

  /** See {@link CoordinatorEventHandler#replay}. */
  public static State replay(Iterable<? extends Event> events) {
    return CoordinatorEventHandler.replay(events);
  }

  /**
   * The next scheduled slot {@code s} would answer at {@code at} under {@code policy} (the live
   * status's {@code nextScheduledRun}), or null: the audit's "state as of T" answers it for T. Null
   * too when the schedule {@code s} kept names another cron or zone than {@code policy}: the
   * configuration changed since T, and the journal does not say which slot the old one gave.
   */
  public static Instant nextScheduledRunAsOf(State s, TrainingPolicy policy, Instant at) {
    if (!ScheduleSlots.enabled(policy) || s.schedule() != null && ScheduleSlots.needsArming(s.schedule(), policy)) {
      return null;
    }
    return ScheduleSlots.nextScheduledRun(s, policy, at);
  }

  /**
   * The side-effect ports. With {@code ray-jobs} the exporter and the batch backend are required;
   * with {@code trinity-proxy} the online backend (the exporter and batch backend may be null).
   */
  public record Ports(
      DatasetExporter exporter,
      TrainingBackend batchBackend,
      OnlineTrainingBackend onlineBackend,
      CandidateSink candidateSink,
      RolloutProbe rolloutProbe) {

    public Ports {
      Objects.requireNonNull(candidateSink, "candidateSink");
      rolloutProbe = rolloutProbe == null ? RolloutProbe.NONE : rolloutProbe;
    }

    public Ports(DatasetExporter exporter, TrainingBackend batchBackend, OnlineTrainingBackend onlineBackend,
        CandidateSink candidateSink) {
      this(exporter, batchBackend, onlineBackend, candidateSink, null);
    }

    /** The same ports, with ModelVersion asked for "no rollout in progress" before each job. */
    public Ports withRolloutProbe(RolloutProbe probe) {
      return new Ports(exporter, batchBackend, onlineBackend, candidateSink, probe);
    }

    public static Ports batch(DatasetExporter exporter, TrainingBackend backend, CandidateSink sink) {
      return new Ports(exporter, backend, null, sink);
    }

    public static Ports online(OnlineTrainingBackend backend, CandidateSink sink) {
      return new Ports(null, null, backend, sink);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Construction
  // ------------------------------------------------------------------------------------------

  final CoordinatorRuntime rt;
  private final ProxyLoop proxy;
  private final JobSteps steps;
  private final ScheduleTrigger schedule;

  /**
   * @param agentId the entity key
   * @param policy {@link TrainingPolicy#fromConfig}
   * @param ports the ports for {@code policy.backend()} (see {@link Ports})
   * @param clock the source of every timestamp and timer delay
   */
  public static Behavior<Command> create(String agentId, TrainingPolicy policy, Ports ports, Clock clock) {
    return create(agentId, policy, PolicyOverrides.fixed(policy), ports, clock);
  }

  /**
   * @param resolver makes the agent's policy from run-time overrides ({@link
   *     PolicyOverrides#over}); {@code policy} is its answer to none
   */
  public static Behavior<Command> create(String agentId, TrainingPolicy policy,
      SettingsOverlay.Resolver<TrainingPolicy> resolver, Ports ports, Clock clock) {
    Objects.requireNonNull(resolver, "resolver");
    Objects.requireNonNull(agentId, "agentId");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(ports, "ports");
    Objects.requireNonNull(clock, "clock");
    if (policy.backend() == Backend.RAY_JOBS && (ports.exporter() == null || ports.batchBackend() == null)) {
      throw new IllegalArgumentException("backend ray-jobs needs a DatasetExporter and a TrainingBackend");
    }
    if (policy.backend() == Backend.TRINITY_PROXY && ports.onlineBackend() == null) {
      throw new IllegalArgumentException("backend trinity-proxy needs an OnlineTrainingBackend");
    }
    return Behaviors.setup(ctx -> Behaviors.withTimers(
        timers -> new TrainingCoordinator(agentId, policy, resolver, ports, clock, ctx, timers)));
  }

  /** Package-private (like its planning methods) so unit tests can plan on a synchronous test context. */
  TrainingCoordinator(String agentId, TrainingPolicy policy, SettingsOverlay.Resolver<TrainingPolicy> resolver,
      Ports ports, Clock clock, ActorContext<Command> ctx, TimerScheduler<Command> timers) {
    super(persistenceId(agentId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.rt = new CoordinatorRuntime(agentId, policy, resolver, ports, clock, ctx, timers);
    this.proxy = new ProxyLoop(rt);
    this.steps = new JobSteps(rt, proxy, this::maybeThreshold);
    this.schedule = new ScheduleTrigger(rt, this::startJob);
  }

  @Override
  public State emptyState() {
    return State.EMPTY;
  }

  /**
   * Events between the coordinator's snapshots (two kept). Each snapshot writes the whole state, the pool
   * included, and the pool grows while no job takes it (a schedule trigger, a paused agent, a job running for
   * hours): at every 100 events, as the sessions snapshot, a pool of 100,000 cost O(pool) per 100 trajectories
   * (4–5 % of W1's samples at 5,000–8,000). A replay of at most 1,000 small events (~15 ms, W5) is the price.
   */
  public static final int SNAPSHOT_EVERY = 1000;

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(SNAPSHOT_EVERY, 2);
  }

  @Override
  public Set<String> tagsFor(Event event) {
    return tagsOf(event);
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent((s, e) -> {
      State next = applyEvent(s, e);
      refreshPolicy(next);
      return next;
    });
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          refreshPolicy(state); // a snapshot replays no PolicyChanged
          rt.ctx.getSelf().tell(Recovered.INSTANCE);
        })
        .build();
  }

  // ------------------------------------------------------------------------------------------
  // Command handlers
  // ------------------------------------------------------------------------------------------

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(TrajectoryAvailable.class, this::onTrajectory)
        .onCommand(TrajectoriesAvailable.class, this::onTrajectories)
        .onCommand(Trigger.class, this::onTrigger)
        .onCommand(CancelJob.class, this::onCancel)
        .onCommand(GetStatus.class, (s, c) -> Effect().reply(c.replyTo(), statusView(s)))
        .onCommand(GetJob.class, (s, c) -> Effect().reply(c.replyTo(), s.job(c.jobId())
            .<JobReply>map(this::view).orElseGet(() -> notFound(c.jobId()))))
        .onCommand(ListJobs.class, (s, c) -> Effect().reply(c.replyTo(), new JobList(s.jobs().stream()
            .filter(j -> c.status() == null || j.status() == c.status()).map(this::view).toList())))
        .onCommand(SetPolicy.class, this::onSetPolicy)
        .onCommand(GetPolicy.class, (s, c) -> Effect().reply(c.replyTo(), policyView(s)))
        .onCommand(GetJobLineage.class, (s, c) -> Effect().reply(c.replyTo(), s.job(c.jobId())
            .<LineageReply>map(j -> new JobLineage(j.jobId(), rt.agentId, j.sessionIds(), j.manifest()))
            .orElseGet(() -> notFound(c.jobId()))))
        .onCommand(Recovered.class, (s, c) -> onRecovered(s))
        .onCommand(ScheduleTick.class, (s, c) -> run(schedule.onScheduleTick(s)))
        .onCommand(PollTick.class, (s, c) -> run(steps.onPollTick(s)))
        .onCommand(RetryStep.class, (s, c) -> run(steps.onRetryStep(s, c)))
        .onCommand(ExportFinished.class, (s, c) -> run(steps.onExportFinished(s, c)))
        .onCommand(SubmitFinished.class, (s, c) -> run(steps.onSubmitFinished(s, c)))
        .onCommand(StatusPolled.class, (s, c) -> run(steps.onStatusPolled(s, c)))
        .onCommand(CancelFinished.class, (s, c) -> run(steps.onCancelFinished(s, c)))
        .onCommand(HandOverFinished.class, (s, c) -> run(steps.onHandOverFinished(s, c)))
        .onCommand(RewardForwardFinished.class, (s, c) -> run(proxy.onRewardForwardFinished(s, c)))
        .onCommand(ForwardRetryTick.class, (s, c) -> {
          proxy.forwardPending(s);
          return Effect().noReply();
        })
        .onCommand(ProxyMetricsTick.class, (s, c) -> run(proxy.onMetricsTick(s)))
        .onCommand(ProxyMetricsPolled.class, (s, c) -> run(proxy.onMetricsPolled(s, c)))
        .onCommand(ProxyHandOverFinished.class, (s, c) -> run(proxy.onHandOverFinished(s, c)))
        .onCommand(RolloutChecked.class, (s, c) -> c.trigger() == TriggerType.MANUAL && c.rollout() != null
            ? Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, c.preflightReason()))
            : c.trigger() == TriggerType.MANUAL ? startManual(s, c.requestedBy(), c.preflightReason(), c.replyTo())
            : c.trigger() == TriggerType.SCHEDULED ? run(schedule.onSlotChecked(s, c))
            : rt.rollouts.thresholdMayStart(c) ? startThreshold(s) : recheckLater())
        .onCommand(ThresholdRecheck.class, (s, c) -> {
          Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
          maybeThreshold(p);
          return run(p);
        })
        .onCommand(ProxyHandOverRetry.class, (s, c) -> {
          proxy.handOverPending(s);
          return Effect().noReply();
        })
        .build();
  }

  // ---- pool ----------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onTrajectory(State s, TrajectoryAvailable c) {
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    TrajectoryAck ack = judge(p, c);
    if (ack.disposition() == Disposition.POOLED) maybeThreshold(p);
    maybeForget(p, List.of(c));
    return run(p, c.replyTo(), st -> ack);
  }

  /** One plan, one write; the threshold is looked at once, after the whole batch joined the pool. */
  private ReplyEffect<Event, State> onTrajectories(State s, TrajectoriesAvailable c) {
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    List<TrajectoryAck> acks = new ArrayList<>(c.items().size());
    for (TrajectoryAvailable item : c.items()) acks.add(judge(p, item));
    if (acks.stream().anyMatch(a -> a.disposition() == Disposition.POOLED)) maybeThreshold(p);
    maybeForget(p, c.items());
    TrajectoryAcks reply = new TrajectoryAcks(List.copyOf(acks));
    return run(p, c.replyTo(), st -> reply);
  }

  /** Judges one trajectory into the plan; a pooled one's reward is forwarded once persisted (trinity-proxy). */
  private TrajectoryAck judge(Plan<State, Event> p, TrajectoryAvailable c) {
    TrajectoryAck ack = PoolRules.judge(p, c, rt.policy, rt.now());
    if (PoolRules.forwards(ack, c, rt.policy)) {
      p.after(st -> proxy.forward(c.sessionId(), st.pendingRewards().get(c.sessionId())));
    }
    return ack;
  }

  /**
   * Forgets used and filtered sessions no revision can reach any more ({@link SessionForgetting}),
   * in the same write as the delivery that moved the feed time on: at most once per {@link
   * SessionForgetting#CHECK_EVERY} of feed time (a scan of every entry), and only if it drops some.
   */
  private void maybeForget(Plan<State, Event> p, List<TrajectoryAvailable> delivered) {
    Instant newest = null;
    for (TrajectoryAvailable c : delivered) {
      if (c.recordedAt() != null && (newest == null || c.recordedAt().isAfter(newest))) newest = c.recordedAt();
    }
    if (newest == null || rt.newestWritten != null && !newest.isAfter(rt.newestWritten)) return;
    Instant feedTime = newest;
    // Remembered once the write succeeded: a batch that failed to persist comes again, judged first.
    p.after(st -> {
      if (rt.newestWritten == null || feedTime.isAfter(rt.newestWritten)) rt.newestWritten = feedTime;
    });
    if (rt.forgetCheckedAt != null && feedTime.isBefore(rt.forgetCheckedAt.plus(SessionForgetting.CHECK_EVERY))) {
      return;
    }
    if (p.state().activeJobId() != null) return; // looked at again with the next delivery after the job
    SessionsForgotten forgotten = SessionForgetting.decide(p.state(),
        SessionForgetting.cutoff(feedTime, rt.policy.feedbackWindow()), rt.now());
    p.after(st -> rt.forgetCheckedAt = feedTime);
    if (forgotten != null) {
      p.add(forgotten);
      p.after(st -> rt.log().info("agent {}: forgot {} used or filtered sessions written before {}",
          rt.agentId, forgotten.count(), forgotten.before()));
    }
  }

  // ---- triggers ------------------------------------------------------------------------------

  private ReplyEffect<Event, State> onTrigger(State s, Trigger c) {
    if (!rt.policy.trainingEnabled()) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, TrainingSwitch.refusal(rt.agentId)));
    }
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      return Effect().reply(c.replyTo(), busy(active.get()));
    }
    String requestedBy = c.requestedBy() == null || c.requestedBy().isBlank() ? "api" : c.requestedBy();
    if (rt.rollouts.enabled()) {
      rt.rollouts.ask(TriggerType.MANUAL, requestedBy, c.replyTo());
      return Effect().noReply();
    }
    return startManual(s, requestedBy, null, c.replyTo());
  }

  /** A cancel of an ended job: say it ended, so a retried cancel that had succeeded reads as done. */
  static String ended(Job job) {
    return "job " + job.jobId() + " is " + job.status() + ": it has ended, there is nothing to cancel"
        + " (only a REQUESTED, SUBMITTED or RUNNING job can be cancelled)";
  }

  private Refused busy(Job active) {
    return new Refused(ErrorCode.CONFLICT, "job " + active.jobId() + " of agent " + rt.agentId + " is "
        + active.status() + (active.cancelRequested()
            // A stop Ray took is over only when Ray reports the job ended (trial t76).
            ? "; its cancel was requested and it ends when the backend reports it stopped: wait until then"
            : "; wait until it ends or cancel it"));
  }

  /** Run-time policy (see {@link PolicyOverrides}): validated like the file, persisted, in force at once. */
  private ReplyEffect<Event, State> onSetPolicy(State s, SetPolicy c) {
    Map<String, Object> flat;
    TrainingPolicy next;
    try {
      flat = PolicyOverrides.flatten(c.overrides());
      next = rt.resolver.resolve(flat);
      PolicyOverrides.checkValues(flat);
    } catch (IllegalArgumentException e) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.INVALID_INPUT, e.getMessage()));
    }
    String by = c.requestedBy() == null || c.requestedBy().isBlank() ? "api" : c.requestedBy();
    PolicyChanged change = new PolicyChanged(flat, by, rt.now());
    TrainingPolicy before = rt.policy;
    rt.policy = next; // the threshold check below already sees it; the event handler keeps it
    rt.policyApplied = change;
    rt.policyRefused = false;
    rt.log().info("agent {}: policy changed by {}; run-time keys {}", rt.agentId, by, flat.keySet());
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    p.add(change);
    schedule.armOnPolicyChange(p, before);
    maybeThreshold(p);
    p.after(schedule::armTimer);
    return run(p, c.replyTo(), this::policyView);
  }

  PolicyView policyView(State s) {
    PolicyChanged c = s.policyChange();
    Map<String, Object> policy = PolicyOverrides.effective(rt.policy);
    return new PolicyView(rt.agentId, policy,
        c == null ? Map.of() : io.otl.core.SettingsOverlay.asRead(c.overrides(), policy, !rt.policyRefused),
        c == null ? null : c.changedBy(), c == null ? null : c.at());
  }

  /** Lays the state's run-time overrides over the file's policy when they changed (replay included). */
  void refreshPolicy(State s) {
    PolicyChanged change = s.policyChange();
    if (change == rt.policyApplied) return;
    rt.policyApplied = change;
    rt.policyRefused = false;
    // A file changed since may refuse them now: then the file's policy is in force, and that is said.
    rt.policy = io.otl.core.SettingsOverlay.inForce(rt.resolver, change == null ? Map.of() : change.overrides(),
        e -> {
          rt.policyRefused = true;
          rt.log().warn("agent {}: the run-time policy of {} no longer applies ({}); the file's policy is in force",
              rt.agentId, change.at(), e.getMessage());
        });
  }

  /** A manual job after the rollout check; {@code rolloutReason} is its failed pre-flight item, or null. */
  private ReplyEffect<Event, State> startManual(State s, String requestedBy, String rolloutReason,
      ActorRef<TriggerReply> replyTo) {
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      return Effect().reply(replyTo, busy(active.get()));
    }
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    String jobId = startJob(p, TriggerType.MANUAL, requestedBy, rolloutReason);
    List<String> warnings = Preflight.warnings(rt.policy, s.poolSize());
    return run(p, replyTo, st -> {
      Job j = st.job(jobId).orElseThrow();
      // A job its pre-flight failed runs nowhere: what it would have met on a real cluster is no news.
      return new TriggerAccepted(jobId, j.status(), j.preflightFailures(),
          j.preflightFailures().isEmpty() ? warnings : List.of());
    });
  }

  /** The threshold trigger: fires when the pool reaches min-samples and no job is active. */
  void maybeThreshold(Plan<State, Event> p) {
    if (!Preflight.thresholdDue(p.state(), rt.policy)) {
      return;
    }
    if (rt.rollouts.enabled()) {
      // Ask ModelVersion once the events are persisted; the answer starts the job or keeps waiting.
      p.after(st -> rt.rollouts.ask(TriggerType.THRESHOLD, "threshold", null));
      return;
    }
    startJob(p, TriggerType.THRESHOLD, "threshold");
  }

  /**
   * The threshold waits for a rollout: the next trajectory asks again, and so does this timer (every
   * {@code poll-interval}), so the job starts once the rollout ends even if no traffic follows.
   */
  private ReplyEffect<Event, State> recheckLater() {
    rt.timers.startSingleTimer(THRESHOLD_RECHECK_TIMER, ThresholdRecheck.INSTANCE, rt.policy.pollInterval());
    return Effect().noReply();
  }

  /** The threshold job after the rollout check found none in progress. */
  private ReplyEffect<Event, State> startThreshold(State s) {
    if (!Preflight.thresholdDue(s, rt.policy)) {
      return Effect().noReply();
    }
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    startJob(p, TriggerType.THRESHOLD, "threshold");
    return run(p);
  }

  /**
   * Records a new job that takes the whole pool, runs the pre-flight checklist (a failure is
   * recorded with the job, which is then FAILED and returns the pool), and schedules the first
   * step (export, or commit for trinity-proxy) to run once the events are persisted.
   */
  private String startJob(Plan<State, Event> p, TriggerType trigger, String requestedBy) {
    return startJob(p, trigger, requestedBy, null);
  }

  String startJob(Plan<State, Event> p, TriggerType trigger, String requestedBy, String rolloutReason) {
    TrainingPolicy policy = rt.policy;
    State before = p.state();
    Instant now = rt.now();
    String jobId = jobId(before.nextJobSeq(), rt.agentId);
    p.add(new JobRequested(jobId, trigger, requestedBy, policy.backend(), policy.algorithm(),
        policy.baseModel(), policy.hyperparams(), before.poolSessionIds(), now));
    List<String> reasons = Preflight.check(before, trigger, policy);
    if (rolloutReason != null) {
      reasons.add(rolloutReason);
    }
    if (!reasons.isEmpty()) {
      p.add(new PreflightFailed(jobId, reasons, true,
          Preflight.rearmAt(before.poolSize(), policy, Preflight.failedInARow(before, jobId)), now));
      return jobId;
    }
    // Logged, not journaled: a warning changes nothing, and the settings it names are the node's.
    List<String> warnings = Preflight.warnings(policy, before.poolSize());
    p.after(st -> warnings.forEach(w ->
        rt.log().warn("agent {}: job {} pre-flight warning: {}", rt.agentId, jobId, w)));
    if (policy.backend() == Backend.TRINITY_PROXY) {
      p.add(new JobSubmitting(jobId, 1, now));
      p.after(st -> st.job(jobId).ifPresent(j -> steps.sendSubmission(st, j)));
    } else {
      p.after(st -> st.job(jobId).ifPresent(steps::export));
    }
    return jobId;
  }

  // ---- recovery ------------------------------------------------------------------------------

  /**
   * After recovery: record missed slots, re-arm the schedule, resume the active job where its
   * events left it (export again, re-send the same submission, poll), hand over a succeeded
   * model not yet handed over, re-forward pending rewards, and check the threshold.
   */
  private ReplyEffect<Event, State> onRecovered(State s) {
    // Commands stashed during recovery run before this message, and may already have started
    // operations (a forward, a submission): inFlight guards them, so it is not cleared here.
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    schedule.handleDueSlot(p, true);
    maybeThreshold(p);
    p.after(st -> {
      if (!rt.rollouts.slotAsking()) schedule.armTimer(st);
    });
    p.after(st -> steps.resume(s));
    if (rt.policy.backend() == Backend.TRINITY_PROXY) {
      p.after(proxy::resume);
    }
    return run(p);
  }

  // ---- cancellation --------------------------------------------------------------------------

  private ReplyEffect<Event, State> onCancel(State s, CancelJob c) {
    Optional<Job> found = s.job(c.jobId());
    if (found.isEmpty()) {
      return Effect().reply(c.replyTo(), notFound(c.jobId()));
    }
    Job job = found.get();
    if (!job.status().isActive()) {
      return Effect().reply(c.replyTo(), new Refused(ErrorCode.CONFLICT, ended(job)));
    }
    if (job.cancelRequested()) {
      return Effect().reply(c.replyTo(), new CancelAccepted(job.jobId(), job.status()));
    }
    Instant now = rt.now();
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    p.add(new JobCancelRequested(job.jobId(), c.requestedBy(), now));
    if (job.status() == JobStatus.REQUESTED && job.submitAttempts() == 0) {
      p.add(new JobCancelled(job.jobId(), "cancelled before submission", now));
      maybeThreshold(p);
    } else {
      p.after(st -> st.job(job.jobId()).ifPresent(steps::cancelOnBackend));
    }
    return run(p, c.replyTo(), st -> new CancelAccepted(job.jobId(), st.job(job.jobId()).orElseThrow().status()));
  }

  // ------------------------------------------------------------------------------------------
  // Plans: events decided by a command, applied as they are added, persisted together
  // ------------------------------------------------------------------------------------------

  private ReplyEffect<Event, State> run(Plan<State, Event> p) {
    return run(p, null, null);
  }

  private <R> ReplyEffect<Event, State> run(Plan<State, Event> p, ActorRef<R> replyTo, Function<State, R> reply) {
    List<Consumer<State>> after = List.copyOf(p.afterEffects());
    if (p.isEmpty()) {
      after.forEach(a -> a.accept(p.state()));
      return replyTo == null ? Effect().noReply() : Effect().reply(replyTo, reply.apply(p.state()));
    }
    List<Event> events = List.copyOf(p.events());
    EffectBuilder<Event, State> b = Effect().persist(events).thenRun((State st) -> {
      logTransitions(events);
      after.forEach(a -> a.accept(st));
    });
    return replyTo == null ? b.thenNoReply() : b.thenReply(replyTo, (State st) -> reply.apply(st));
  }

  /** One INFO line per job transition: ids and statuses only, no payloads. */
  private void logTransitions(List<Event> events) {
    for (Event e : events) {
      String what = JobLifecycle.transition(e);
      if (what != null) {
        rt.log().info("agent {}: job {} {}", rt.agentId, ((JobEvent) e).jobId(), what);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Views
  // ------------------------------------------------------------------------------------------

  CoordinatorView statusView(State s) {
    JobSummary active = s.activeJob().map(j -> new JobSummary(j.jobId(), j.status())).orElse(null);
    TrainingPolicy policy = rt.policy;
    // Only while the threshold is due and held back: an active job or a small pool is its own answer.
    String waitingFor = active == null && Preflight.thresholdDue(s, policy) ? rt.rollouts.waitingFor() : null;
    return new CoordinatorView(rt.agentId, s.poolSize(), policy.minSamples(), policy.triggerNames(),
        schedule.nextScheduledRun(s), active, waitingFor, s.meanQuality(), policy.backend().configName(),
        TrainingSwitch.status(policy));
  }

  private JobView view(Job j) {
    return jobView(rt.agentId, j);
  }

  /**
   * The job shape of design §7.1 for a job of {@code agentId}: GET /v1/jobs/{jobId} and the audit's
   * job "as of T" both build it here.
   */
  public static JobView jobView(String agentId, Job j) {
    DatasetManifest m = j.manifest();
    return new JobView(
        j.jobId(),
        agentId,
        j.status(),
        j.trigger().configName(),
        j.algorithm(),
        j.baseModel(),
        j.hyperparams(),
        m == null ? null : new DatasetView(m.count(), m.sha256(), m.path(), m.exclusions(), m.lineage()),
        new BackendView(j.backend().configName(), j.externalId()),
        outputModel(j),
        j.lastError(),
        j.history(),
        m == null ? List.of() : Preflight.smallDataset(j.backend(), j.hyperparams(), m.count()));
  }

  /** A trinity-proxy candidate has no checkpoint of ours (the proxy serves its weights): only its name. */
  private static OutputModelView outputModel(Job j) {
    if (j.outputModel() != null) {
      return new OutputModelView(j.outputModel().checkpointUri(), j.outputModel().metrics(), j.candidateVersion());
    }
    return j.proxyCandidate() == null ? null : new OutputModelView(null, Map.of(), j.proxyCandidate());
  }

  private Refused notFound(String jobId) {
    return new Refused(ErrorCode.NOT_FOUND, "job " + jobId + " not found for agent " + rt.agentId);
  }
}

