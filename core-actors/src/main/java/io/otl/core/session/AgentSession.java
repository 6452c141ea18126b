package io.otl.core.session;

import static com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.JsonSerializable;
import io.otl.core.Persisted;
import io.otl.core.entity.Rejection;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * One agent session: accumulates a trajectory from what the agent reports, seals it for training
 * on a task result or after an idle timeout, and keeps revising its reward as late feedback comes
 * in (design §3.1). Sharded by session id, event-sourced.
 *
 * <p>A request's events are persisted as one atomic write (design §10: one write of ten events
 * costs about as much as one of one). Only completions and reward revisions are tagged, since
 * tagged events are written row by row.
 */
public final class AgentSession
    extends EventSourcedBehaviorWithEnforcedReplies<AgentSession.Command, AgentSession.Event, AgentSession.State> {

  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY =
      EntityTypeKey.create(Command.class, "AgentSession");
  /** The tag of the two events the read side follows: completions and reward revisions. */
  public static final String TRAJECTORY_TAG = "trajectory";

  private static final String IDLE_TIMER = "idle";
  private static final String PASSIVATE_TIMER = "passivate";

  // ---------------------------------------------------------------- commands and replies

  public sealed interface Command extends JsonSerializable {}

  /**
   * Record a batch of inputs for this session, atomically: all are stored, or none. A null
   * {@code agentId} means "the session's agent" and is refused for a session never written.
   *
   * <p>A gateway's write names itself ({@code writer}); the session remembers the last one it stored, in
   * memory only. {@code after} (null: unconditional; {@code ""}: none since the entity started) is the
   * write the gateway numbered this one after: when the session's last gateway write is another, nothing
   * is stored and the reply is {@link Outdated}, with the session as stored. A gateway numbers a turn's
   * recurring messages from what it knows the session holds; when another node's gateway recorded into
   * the session since, that is stale, and a repeated "continue" took an id the session held and was
   * dropped as a duplicate (trial t93).
   */
  public record Record(String agentId, List<SessionInput> inputs, ActorRef<RecordReply> replyTo,
      @JsonInclude(NON_NULL) String writer, @JsonInclude(NON_NULL) String after) implements Command {
    public Record(String agentId, List<SessionInput> inputs, ActorRef<RecordReply> replyTo) {
      this(agentId, inputs, replyTo, null, null);
    }
  }

  /** The trajectory as stored; a session never written answers with status NEW. */
  public record Get(ActorRef<State> replyTo) implements Command {}

  /**
   * As {@link Get}, for a caller about to record (the gateway): a session never written stays in
   * memory until passivate-after instead of leaving at once, so the recording that follows does not
   * start and recover the entity a second time (W8: two remember-entities writes and a recovery).
   */
  public record Lookup(ActorRef<State> replyTo) implements Command {}

  /** Timer: the session may have been idle for longer than the idle timeout. */
  public record IdleCheck() implements Command {}

  /** Timer: a completed session leaves memory (the journal keeps it). */
  public record PassivateCheck() implements Command {}

  /** Sharding's stop message after a passivation request. */
  public record Stop() implements Command {}

  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "reply")
  @JsonSubTypes({
    @JsonSubTypes.Type(value = Recorded.class, name = "recorded"),
    @JsonSubTypes.Type(value = Rejected.class, name = "rejected"),
    @JsonSubTypes.Type(value = Outdated.class, name = "outdated")
  })
  public sealed interface RecordReply extends JsonSerializable {}

  /**
   * Nothing was stored: the write was numbered after a gateway write ({@link Record#after}) that is not
   * the session's last one (another node's gateway wrote since, or the session restarted and forgot it).
   * Only a conditional write gets it. {@code state} is the session as stored and {@code lastWrite} its last
   * gateway write (null: none since the entity started), to number the turn again and write it after that.
   */
  public record Outdated(State state, @JsonInclude(NON_NULL) String lastWrite) implements RecordReply {}

  /** {@code accepted} new inputs are in the journal, {@code duplicates} were already there. */
  public record Recorded(int accepted, int duplicates, boolean sampled) implements RecordReply {}

  /** Nothing was stored. {@code code} tells the edge how to answer (design §7.1 error codes). */
  public record Rejected(RejectionCode code, String field, String message) implements RecordReply, Rejection {

    /**
     * The message naming its field once: most messages start with it ({@code events[0].role is not
     * one of …}), which "field: message" repeated; the others get it in front.
     */
    public String describe() {
      String m = message == null ? "" : message;
      if (field == null || field.isEmpty() || m.startsWith(field)) return m;
      return field + ": " + m;
    }

    /**
     * The session names a field by its place in a batch ({@code events[0].value}); a door whose caller
     * sent one feedback, not a batch (HTTP's feedback body, {@code DataCollector.feedback}), names the
     * field as that caller wrote it ({@code value}).
     */
    public Rejected asSingleEvent() {
      return new Rejected(code, field == null ? null : singleEvent(field), message == null ? null : singleEvent(message));
    }

    private static String singleEvent(String text) {
      String prefix = "events[0].";
      return text.startsWith(prefix) ? text.substring(prefix.length()) : text.replace("events[0]", "the feedback");
    }

    @Override
    public Rejection.Kind rejectionKind() {
      return switch (code) {
        case INVALID -> Rejection.Kind.INVALID_INPUT;
        case CONFLICT -> Rejection.Kind.CONFLICT;
        case NOT_FOUND -> Rejection.Kind.NOT_FOUND;
      };
    }
  }

  public enum RejectionCode {
    /** The request is malformed: 400. */
    INVALID,
    /** The request contradicts the session's state (other agent, already completed): 409. */
    CONFLICT,
    /** The request needs an existing session and there is none: 404. */
    NOT_FOUND
  }

  // ---------------------------------------------------------------- events

  /** Every event carries its id (client-supplied or derived), its time and the server's time. */
  public sealed interface Event extends Persisted {
    String eventId();

    Instant at();

    Instant recordedAt();
  }

  public record SessionStarted(
      String eventId, Instant at, Instant recordedAt, String agentId, String agentVersion,
      String modelVersion, Map<String, String> metadata) implements Event {}

  /**
   * @param inference what the inference gateway observed of the call; null from other doors
   * @param truncated {@code content} → its length before the inference gateway cut it at
   *     {@code data-collector.max-text-length}; null (absent in the journal) when nothing was cut
   */
  public record MessageRecorded(
      String eventId, Instant at, Instant recordedAt, Role role, String content, String msgId,
      Long latencyMs,
      @JsonInclude(NON_NULL)
      InferenceCall inference,
      @JsonInclude(NON_NULL)
      Map<String, Integer> truncated) implements Event {
    @JsonCreator
    public MessageRecorded {}

    public MessageRecorded(String eventId, Instant at, Instant recordedAt, Role role, String content, String msgId,
        Long latencyMs) {
      this(eventId, at, recordedAt, role, content, msgId, latencyMs, null, null);
    }

    public MessageRecorded(String eventId, Instant at, Instant recordedAt, Role role, String content, String msgId,
        Long latencyMs, InferenceCall inference) {
      this(eventId, at, recordedAt, role, content, msgId, latencyMs, inference, null);
    }
  }

  /**
   * @param truncated {@code input} and/or {@code output} → the length of its JSON text before the
   *     inference gateway cut it at {@code data-collector.max-text-length} (the field then holds the
   *     cut text as a string); null (absent in the journal) when nothing was cut
   * @param awaitingResult true for a call the model made (the inference gateway stores it with the answer)
   *     whose result has not come back: {@code output} is null and {@code success} is not the tool's; a
   *     {@link ToolResultRecorded} attaches the result. Null (absent in the journal): the call has its result,
   *     as every event written before this field
   */
  public record ToolCallRecorded(
      String eventId, Instant at, Instant recordedAt, String callId, String toolName, JsonNode input,
      JsonNode output, boolean success, Long latencyMs,
      @JsonInclude(NON_NULL)
      Map<String, Integer> truncated,
      @JsonInclude(NON_NULL)
      Boolean awaitingResult) implements Event {
    @JsonCreator
    public ToolCallRecorded {}

    public ToolCallRecorded(String eventId, Instant at, Instant recordedAt, String callId, String toolName,
        JsonNode input, JsonNode output, boolean success, Long latencyMs, Map<String, Integer> truncated) {
      this(eventId, at, recordedAt, callId, toolName, input, output, success, latencyMs, truncated, null);
    }

    /** Whether the call still waits for its result ({@link #awaitingResult}). */
    public boolean pending() {
      return Boolean.TRUE.equals(awaitingResult);
    }

    public ToolCallRecorded(String eventId, Instant at, Instant recordedAt, String callId, String toolName,
        JsonNode input, JsonNode output, boolean success, Long latencyMs) {
      this(eventId, at, recordedAt, callId, toolName, input, output, success, latencyMs, null);
    }
  }

  /**
   * The result of a tool call stored awaiting it ({@link ToolCallRecorded#awaitingResult}): from this event on
   * the call {@code callEventId} has this {@code output}, {@code success} and {@code latencyMs}, one call with
   * its result as if it had been stored whole. The inference gateway stores a model's tool call when the model
   * makes it, and its result when the agent's next request brings it.
   *
   * @param truncated {@code output} → its JSON text's length before the gateway cut it; null when not cut
   */
  public record ToolResultRecorded(
      String eventId, Instant at, Instant recordedAt, String callEventId, JsonNode output, boolean success,
      Long latencyMs,
      @JsonInclude(NON_NULL)
      Map<String, Integer> truncated) implements Event {
    /** The event id of the result of the call stored as {@code callEventId}: a result sent again is a duplicate. */
    public static String eventIdOf(String callEventId) {
      return callEventId + ":out";
    }

    /** {@code call} with this result: how every reader of the journal sees the call. */
    public ToolCallRecorded appliedTo(ToolCallRecorded call) {
      Map<String, Integer> cut = call.truncated();
      if (truncated != null) {
        Map<String, Integer> both = new java.util.TreeMap<>(cut == null ? Map.of() : cut);
        both.putAll(truncated);
        cut = Collections.unmodifiableMap(both);
      }
      return new ToolCallRecorded(call.eventId(), call.at(), call.recordedAt(), call.callId(), call.toolName(),
          call.input(), output, success, latencyMs != null ? latencyMs : call.latencyMs(), cut, null);
    }
  }

  public record ReasoningStepRecorded(
      String eventId, Instant at, Instant recordedAt, int index, String thought, String action,
      String observation) implements Event {}

  /** @param msgId the response (assistant message's msgId) the feedback rates; null: the whole session */
  public record FeedbackRecorded(
      String eventId, Instant at, Instant recordedAt, String feedbackId, FeedbackKind kind, Double value,
      String source,
      @JsonInclude(NON_NULL)
      String msgId) implements Event {
    @JsonCreator
    public FeedbackRecorded {}

    public FeedbackRecorded(String eventId, Instant at, Instant recordedAt, String feedbackId, FeedbackKind kind,
        Double value, String source) {
      this(eventId, at, recordedAt, feedbackId, kind, value, source, null);
    }
  }

  public record TaskResultRecorded(
      String eventId, Instant at, Instant recordedAt, TaskStatus status, String detail) implements Event {}

  /**
   * The trajectory is sealed for training; carries what the read side needs without a lookup.
   * {@code msgIds}: the assistant messages' msgIds in order, for the trajectory feed; null in events
   * written before it was added (the feed then reads them from the session's journal).
   */
  public record TrajectoryCompleted(
      String eventId, Instant at, Instant recordedAt, String agentId, String modelVersion, double reward,
      double qualityScore, Counts counts, Outcome outcome, @JsonInclude(NON_NULL) List<String> msgIds)
      implements Event {
    @JsonCreator
    public TrajectoryCompleted {}

    public TrajectoryCompleted(String eventId, Instant at, Instant recordedAt, String agentId, String modelVersion,
        double reward, double qualityScore, Counts counts, Outcome outcome) {
      this(eventId, at, recordedAt, agentId, modelVersion, reward, qualityScore, counts, outcome, null);
    }
  }

  /** Late feedback changed the reward of a completed trajectory ({@code msgIds} as above). */
  public record RewardRevised(
      String eventId, Instant at, Instant recordedAt, String agentId, String modelVersion, String feedbackId,
      double reward, double qualityScore, Outcome outcome, @JsonInclude(NON_NULL) List<String> msgIds)
      implements Event {
    @JsonCreator
    public RewardRevised {}

    public RewardRevised(String eventId, Instant at, Instant recordedAt, String agentId, String modelVersion,
        String feedbackId, double reward, double qualityScore, Outcome outcome) {
      this(eventId, at, recordedAt, agentId, modelVersion, feedbackId, reward, qualityScore, outcome, null);
    }
  }

  /**
   * The inference gateway's details of an answer the session already held without them: another
   * node stored it first, from the history of the agent's next call (history has no response id and
   * no call figures), so the answering node's own recording came as a duplicate. {@code messageEventId}
   * names the stored assistant message; from this event on it has {@code msgId}, {@code latencyMs} and
   * {@code inference} as if the answering node had stored it first.
   */
  public record MessageDetailsAdded(
      String eventId, Instant at, Instant recordedAt, String messageEventId, String msgId, Long latencyMs,
      @JsonInclude(NON_NULL)
      InferenceCall inference) implements Event {
    /** {@code stored} with this event's details: how every reader of the journal sees the message. */
    public MessageRecorded appliedTo(MessageRecorded stored) {
      return new MessageRecorded(stored.eventId(), stored.at(), stored.recordedAt(), stored.role(), stored.content(),
          msgId, latencyMs, inference, stored.truncated());
    }
  }

  // ---------------------------------------------------------------- state

  /**
   * The trajectory. Immutable: every event yields a new state, so a snapshot being serialized is
   * never changed underneath (copying lists per event is cheap at the sizes sessions reach; the
   * event ids, one per event, are an {@link EventIdSet} that shares structure instead).
   */
  public record State(
      Status status,
      String agentId,
      String agentVersion,
      String modelVersion,
      Map<String, String> metadata,
      Instant startedAt,
      Instant lastActivityAt,
      Instant completedAt,
      List<MessageRecorded> messages,
      List<ToolCallRecorded> toolCalls,
      List<ReasoningStepRecorded> steps,
      List<FeedbackRecorded> feedback,
      TaskResultRecorded result,
      Double reward,
      Double qualityScore,
      int unexplainedToolErrors,
      Set<String> eventIds)
      implements Persisted {

    public State {
      // A snapshot read by Jackson brings a HashSet; from here on every state shares one EventIdSet.
      eventIds = eventIds == null ? EventIdSet.empty() : EventIdSet.of(eventIds);
    }

    public static State empty() {
      return new State(Status.NEW, null, null, null, Map.of(), null, null, null, List.of(), List.of(), List.of(),
          List.of(), null, null, null, 0, EventIdSet.empty());
    }

    public Counts counts() {
      return new Counts(messages.size(), toolCalls.size(), steps.size(), feedback.size());
    }

    /** The pure event handler: the live entity, replay and "state as of T" all go through here. */
    public State apply(Event event) {
      Set<String> ids = with(eventIds, event.eventId());
      Instant activity = event.recordedAt();
      // A session starts at its earliest step, not at whichever arrived first: an OpenTelemetry
      // exporter sends a chat span (which ends first) before the agent span that began earlier.
      Instant startedAt = earlier(this.startedAt, event instanceof FeedbackRecorded
          || event instanceof TrajectoryCompleted || event instanceof RewardRevised ? null : event.at());
      if (event instanceof SessionStarted e) {
        // In the order the keys first came (a later start's value replaces, in place): the events
        // keep it in the journal, so a replay after a restart shows the same order as the live
        // entity did (Map.copyOf's order changes from one JVM to the next).
        Map<String, String> meta = new LinkedHashMap<>(metadata);
        if (e.metadata() != null) meta.putAll(e.metadata());
        return new State(Status.ACTIVE, e.agentId(), firstNonNull(e.agentVersion(), agentVersion),
            firstNonNull(e.modelVersion(), modelVersion), Collections.unmodifiableMap(meta),
            startedAt, activity, completedAt, messages, toolCalls, steps, feedback,
            result, reward, qualityScore, unexplainedToolErrors, ids);
      } else if (event instanceof MessageRecorded e) {
        int unexplained = e.role() == Role.assistant ? 0 : unexplainedToolErrors;
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            with(messages, e), toolCalls, steps, feedback, result, reward, qualityScore, unexplained, ids);
      } else if (event instanceof ToolCallRecorded e) {
        int unexplained = e.success() ? unexplainedToolErrors : unexplainedToolErrors + 1;
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, with(toolCalls, e), steps, feedback, result, reward, qualityScore, unexplained, ids);
      } else if (event instanceof ToolResultRecorded e) {
        List<ToolCallRecorded> answered = new ArrayList<>(toolCalls);
        answered.replaceAll(t -> t.eventId().equals(e.callEventId()) && t.pending() ? e.appliedTo(t) : t);
        int unexplained = e.success() ? unexplainedToolErrors : unexplainedToolErrors + 1;
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, Collections.unmodifiableList(answered), steps, feedback, result, reward, qualityScore,
            unexplained, ids);
      } else if (event instanceof ReasoningStepRecorded e) {
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, toolCalls, with(steps, e), feedback, result, reward, qualityScore, 0, ids);
      } else if (event instanceof FeedbackRecorded e) {
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, toolCalls, steps, with(feedback, e), result, reward, qualityScore, unexplainedToolErrors, ids);
      } else if (event instanceof TaskResultRecorded e) {
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, toolCalls, steps, feedback, e, reward, qualityScore, unexplainedToolErrors, ids);
      } else if (event instanceof TrajectoryCompleted e) {
        return new State(Status.COMPLETED, agentId, agentVersion, modelVersion, metadata, startedAt, activity,
            e.recordedAt(), messages, toolCalls, steps, feedback, result, e.reward(), e.qualityScore(),
            unexplainedToolErrors, ids);
      } else if (event instanceof RewardRevised e) {
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            messages, toolCalls, steps, feedback, result, e.reward(), e.qualityScore(), unexplainedToolErrors, ids);
      } else if (event instanceof MessageDetailsAdded e) {
        List<MessageRecorded> detailed = new ArrayList<>(messages);
        detailed.replaceAll(m -> m.eventId().equals(e.messageEventId()) ? e.appliedTo(m) : m);
        return new State(status, agentId, agentVersion, modelVersion, metadata, startedAt, activity, completedAt,
            Collections.unmodifiableList(detailed), toolCalls, steps, feedback, result, reward, qualityScore,
            unexplainedToolErrors, ids);
      }
      throw new IllegalArgumentException("unknown event " + event.getClass().getName());
    }

    private static Instant earlier(Instant a, Instant b) {
      return a == null ? b : b == null || !b.isBefore(a) ? a : b;
    }

    /** One copy per event (List.copyOf of the new list was a second one), read-only like before. */
    private static <T> List<T> with(List<T> list, T item) {
      List<T> copy = new ArrayList<>(list.size() + 1);
      copy.addAll(list);
      copy.add(item);
      return Collections.unmodifiableList(copy);
    }

    private static Set<String> with(Set<String> set, String item) {
      return EventIdSet.of(set).with(item);
    }

    private static String firstNonNull(String a, String b) {
      return a != null ? a : b;
    }
  }

  // ---------------------------------------------------------------- behavior

  private final String sessionId;
  private final SessionSettings settings;
  private final RecordPlanner planner;
  private final Clock clock;
  private final ActorRef<ClusterSharding.ShardCommand> shard;
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  /**
   * The write being applied: its plan's states after each event ({@link RecordPlanner.Store#states}), the
   * state it was planned on and the next event's index. Pekko applies a persisted write's events to the
   * state through the event handler; the plan computed those very states already (its draft), so the
   * handler takes them for the same event instances on the same state instead of applying each event a
   * second time (a state copy per event, session 47). Anything else (recovery, timeouts) is applied.
   */
  private RecordPlanner.Store applying;
  private State applyingFrom;
  private int applyingNext;

  /**
   * @param shard the shard to ask for passivation once the session is completed; null outside
   *     sharding (tests), where the session simply stays in memory
   */
  public static Behavior<Command> create(
      String sessionId, SessionSettings settings, Clock clock, ActorRef<ClusterSharding.ShardCommand> shard) {
    return Behaviors.setup(ctx -> {
      // The name Pekko would give the log anyway; set here, it need not find it by walking the
      // stack at every entity start (a measurable share of starting a session).
      ctx.setLoggerName(AgentSession.class);
      return Behaviors.withTimers(timers -> new AgentSession(sessionId, settings, clock, shard, ctx, timers));
    });
  }

  public static PersistenceId persistenceId(String sessionId) {
    return PersistenceId.of(ENTITY_TYPE_KEY.name(), sessionId);
  }

  private AgentSession(
      String sessionId, SessionSettings settings, Clock clock, ActorRef<ClusterSharding.ShardCommand> shard,
      ActorContext<Command> context, TimerScheduler<Command> timers) {
    super(persistenceId(sessionId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.1));
    this.sessionId = sessionId;
    this.settings = settings;
    this.planner = new RecordPlanner(sessionId, settings);
    this.clock = clock;
    this.shard = shard;
    this.context = context;
    this.timers = timers;
  }

  @Override
  public State emptyState() {
    return State.empty();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(100, 2);
  }

  @Override
  public Set<String> tagsFor(Event event) {
    return event instanceof TrajectoryCompleted || event instanceof RewardRevised ? Set.of(TRAJECTORY_TAG) : Set.of();
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder().onSignal(RecoveryCompleted.instance(), this::scheduleTimers).build();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(this::applyEvent);
  }

  /** {@code state.apply(event)}, taken from the plan of the write in flight when it is that write's next step. */
  private State applyEvent(State state, Event event) {
    RecordPlanner.Store write = applying;
    if (write != null) {
      int k = applyingNext;
      if (write.events().get(k) == event && state == (k == 0 ? applyingFrom : write.states().get(k - 1))) {
        applyingNext = k + 1;
        if (applyingNext == write.events().size()) forgetApplying();
        return write.states().get(k);
      }
      forgetApplying();
    }
    return state.apply(event);
  }

  private void forgetApplying() {
    applying = null;
    applyingFrom = null;
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Record.class, this::onRecord)
        .onCommand(Get.class, (state, cmd) -> {
          passivateIfNew(state);
          return Effect().reply(cmd.replyTo(), state);
        })
        .onCommand(Lookup.class, (state, cmd) -> Effect().reply(cmd.replyTo(), state))
        .onCommand(IdleCheck.class, this::onIdleCheck)
        .onCommand(PassivateCheck.class, this::onPassivateCheck)
        .onCommand(Stop.class, (state, cmd) -> Effect().stop().thenNoReply())
        .build();
  }

  private ReplyEffect<Event, State> onRecord(State state, Record cmd) {
    RecordPlanner.Plan plan = planner.plan(state, cmd.agentId(), cmd.inputs(), clock.instant(), cmd.writer(),
        cmd.after());
    // A session never written stays in memory (its passivate timer) for the recording that follows, as after a Lookup.
    if (plan instanceof RecordPlanner.NotAfter notAfter) return Effect().reply(cmd.replyTo(), notAfter.reply());
    if (plan instanceof RecordPlanner.Refused refused) {
      context.getLog().debug("session {} rejected a request: {}", sessionId, refused.rejection().message());
      passivateIfNew(state);
      return Effect().reply(cmd.replyTo(), refused.rejection());
    }
    RecordPlanner.Store store = (RecordPlanner.Store) plan;
    if (store.events().isEmpty()) {
      // Only a sampled-out session stores nothing while NEW: it leaves memory at once.
      passivateIfNew(state);
      return Effect().reply(cmd.replyTo(), store.reply());
    }
    if (store.states().size() == store.events().size()) {
      applying = store;
      applyingFrom = state;
      applyingNext = 0;
    }
    return Effect().persist(store.events()).thenRun(this::scheduleTimers).thenReply(cmd.replyTo(), s -> store.reply());
  }

  private ReplyEffect<Event, State> onIdleCheck(State state, IdleCheck cmd) {
    if (state.status() != Status.ACTIVE) return Effect().noReply();
    Instant now = clock.instant();
    Instant deadline = state.lastActivityAt().plus(settings.idleTimeout());
    if (now.isBefore(deadline)) {
      timers.startSingleTimer(IDLE_TIMER, new IdleCheck(), Duration.between(now, deadline));
      return Effect().noReply();
    }
    context.getLog().info("session {} of agent {} timed out after {} idle", sessionId, state.agentId(),
        settings.idleTimeout());
    return Effect().persist(planner.timedOut(state, now)).thenRun(this::scheduleTimers).thenNoReply();
  }

  private ReplyEffect<Event, State> onPassivateCheck(State state, PassivateCheck cmd) {
    // NEW: a Lookup that no recording followed (the upstream refused the call).
    if ((state.status() == Status.COMPLETED || state.status() == Status.NEW) && shard != null) {
      shard.tell(new ClusterSharding.Passivate<>(context.getSelf()));
    }
    return Effect().noReply();
  }

  private void scheduleTimers(State state) {
    if (state.status() == Status.ACTIVE) {
      Duration remaining = Duration.between(clock.instant(), state.lastActivityAt().plus(settings.idleTimeout()));
      timers.startSingleTimer(IDLE_TIMER, new IdleCheck(), remaining.isNegative() ? Duration.ZERO : remaining);
    } else if (state.status() == Status.COMPLETED) {
      timers.cancel(IDLE_TIMER);
      if (shard != null) timers.startSingleTimer(PASSIVATE_TIMER, new PassivateCheck(), settings.passivateAfter());
    } else if (shard != null) {
      // NEW (after recovery): a Lookup keeps it for a recording; if none follows, it leaves then.
      timers.startSingleTimer(PASSIVATE_TIMER, new PassivateCheck(), settings.passivateAfter());
    }
  }

  /**
   * A session that has stored nothing (a read of an unknown id, a refused first request, a
   * sampled-out session) leaves memory at once: probing ids must not fill the cluster.
   */
  private void passivateIfNew(State state) {
    if (state.status() == Status.NEW && shard != null) {
      shard.tell(new ClusterSharding.Passivate<>(context.getSelf()));
    }
  }
}
