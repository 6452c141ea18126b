package io.otl.core.session;

import io.otl.core.Ids;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageDetailsAdded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.ReasoningStepRecorded;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.AgentSession.RejectionCode;
import io.otl.core.session.AgentSession.RewardRevised;
import io.otl.core.session.AgentSession.SessionStarted;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.TaskResultRecorded;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.AgentSession.ToolResultRecorded;
import io.otl.core.session.AgentSession.TrajectoryCompleted;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a session does with a request and with an idle timeout (design §3.1), decided without the
 * actor: the checks in their order, the events of one atomic write and the reply. {@link AgentSession}
 * persists, replies and runs the timers; the rules here are tested without an actor system.
 * One per entity (it remembers the last valid agent id).
 */
final class RecordPlanner {
  /** What to do with a Record command. */
  sealed interface Plan {}

  /** Store nothing and answer with the rejection. */
  record Refused(Rejected rejection) implements Plan {}

  /**
   * Store {@code events} in one write (none: a sampled-out session or only duplicates), then reply.
   * {@code states}: the session's state after each of the events, as the plan's draft computed it (empty
   * when not kept), so that the entity's event handler need not apply every event a second time.
   */
  record Store(List<Event> events, Recorded reply, List<State> states) implements Plan {
    Store(List<Event> events, Recorded reply) {
      this(events, reply, List.of());
    }
  }

  /** Store nothing: the write was numbered after a gateway write that is not the session's last one. */
  record NotAfter(AgentSession.Outdated reply) implements Plan {}

  private final String sessionId;
  /** The session id's problem, or null: it never changes, so it is checked once per entity start. */
  private final String sessionIdProblem;
  /** The last agent id that passed {@link Ids#problem}: the same id comes with every request. */
  private String validAgentId;
  private final SessionSettings settings;
  private final Desensitizer desensitizer;
  private final SessionInputValidation validation;
  private final SessionSampler sampler;
  /**
   * The last gateway write stored ({@link AgentSession.Record#writer}), null when none since the entity
   * started. In memory only: after a restart or a move, a conditional write is {@link NotAfter}, and its
   * gateway numbers the turn against the session as stored, as a gateway that never saw it does.
   */
  private String lastGatewayWrite;

  RecordPlanner(String sessionId, SessionSettings settings) {
    this.sessionId = sessionId;
    this.sessionIdProblem = Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID);
    this.settings = settings;
    this.desensitizer = settings.desensitizer();
    this.validation = new SessionInputValidation(settings.maxTextLength());
    this.sampler = settings.sampler();
  }

  /** The refusal of the first invalid input (or of none at all), or null when every input is valid. */
  private Plan invalidInput(State state, List<SessionInput> inputs) {
    if (inputs == null || inputs.isEmpty()) {
      return refuse(RejectionCode.INVALID, "events", "at least one event is required");
    }
    for (int i = 0; i < inputs.size(); i++) {
      String problem = validation.problem(inputs.get(i));
      if (problem == null) problem = newKeyLikeId(state, inputs.get(i));
      if (problem != null) {
        int sep = problem.indexOf(' ');
        String field = "events[" + i + "]" + (problem.startsWith(".") ? problem.substring(0, sep) : "");
        return refuse(RejectionCode.INVALID, field, "events[" + i + "]" + problem);
      }
    }
    return null;
  }

  /**
   * Why the input's {@code eventId} or {@code feedbackId} may not be stored because it holds a provider's API
   * key, or null. Ids are journaled, answered and exported as sent, past the desensitizer: an {@code eventId}
   * {@code sk-proj-…} was stored whole (the fuzzer of review t178). As for session and agent ids, only a NEW id
   * is refused: a retry of an input an earlier build stored stays a duplicate.
   */
  private static String newKeyLikeId(State state, SessionInput input) {
    if (input.eventId() != null && !state.eventIds().contains(input.eventId())) {
      String problem = Ids.keyProblem(".eventId", input.eventId());
      if (problem != null) return problem;
    }
    if (input instanceof SessionInput.Feedback f && f.feedbackId() != null && !feedbackHeld(state, input)) {
      return Ids.keyProblem(".feedbackId", f.feedbackId());
    }
    return null;
  }

  /** The earliest time of the inputs that carry one, or {@code fallback} when it is earlier or none does. */
  private static Instant earliest(List<SessionInput> inputs, Instant fallback) {
    Instant min = fallback;
    for (SessionInput in : inputs) {
      if (in.at() != null && in.at().isBefore(min)) min = in.at();
    }
    return min;
  }

  /** A request of {@code agentId} (null: the session's agent) to record {@code inputs}, received at {@code now}. */
  private static int resultIndex(List<SessionInput> inputs, int before) {
    for (int j = 0; j < before; j++) {
      if (inputs.get(j) instanceof SessionInput.Result) return j;
    }
    return -1;
  }

  Plan plan(State state, String requestAgentId, List<SessionInput> inputs, Instant now) {
    return plan(state, requestAgentId, inputs, now, null, null);
  }

  /**
   * As {@link #plan(State, String, List, Instant)}, for a gateway's write named {@code writer}, numbered
   * after the gateway write {@code after} (null: unconditional; {@code ""}: none; see {@link AgentSession.Record}).
   */
  Plan plan(State state, String requestAgentId, List<SessionInput> inputs, Instant now, String writer,
      String after) {
    if (after != null && !after.equals(lastGatewayWrite == null ? "" : lastGatewayWrite)) {
      return new NotAfter(new AgentSession.Outdated(state, lastGatewayWrite));
    }
    Plan plan = planned(state, requestAgentId, inputs, now);
    if (writer != null && plan instanceof Store store && store.reply().sampled()) lastGatewayWrite = writer;
    return plan;
  }

  /**
   * What this planner would answer a session the journal lacks (an empty state) when it refuses the
   * write, else null: the door answers it without addressing the session, whose start sharding would
   * journal (remember-entities). The checks of every input run; the per-input plan (which desensitizes
   * text) only for a request that could be refused there: feedback naming a msgId, or inputs after a result.
   */
  Rejected refusalWhenNew(String requestAgentId, List<SessionInput> inputs, Instant now) {
    State empty = State.empty();
    // head() first: it refuses a null list or null input, which refusableInThePlan cannot walk.
    Plan plan = head(empty, requestAgentId, inputs);
    if (plan == null && refusableInThePlan(inputs)) plan = plannedAfterHead(empty, requestAgentId, inputs, now);
    return plan instanceof Refused r ? r.rejection() : null;
  }

  /** Whether a request valid input by input may still be refused on an empty state. */
  private static boolean refusableInThePlan(List<SessionInput> inputs) {
    boolean afterResult = false;
    for (SessionInput input : inputs) {
      if (afterResult) return true;
      if (input instanceof SessionInput.Feedback f && !noMsgId(f.msgId())) return true;
      if (input instanceof SessionInput.Result) afterResult = true;
    }
    return false;
  }

  private Plan planned(State state, String requestAgentId, List<SessionInput> inputs, Instant now) {
    Plan head = head(state, requestAgentId, inputs);
    return head != null ? head : plannedAfterHead(state, requestAgentId, inputs, now);
  }

  private Plan plannedAfterHead(State state, String requestAgentId, List<SessionInput> inputs, Instant now) {
    String agentId = requestAgentId == null ? state.agentId() : requestAgentId;
    State draft = state;
    List<Event> events = new ArrayList<>();
    List<Event> applied = new ArrayList<>(inputs.size() + 2);
    List<State> states = new ArrayList<>(inputs.size() + 2);
    int accepted = 0;
    int duplicates = 0;
    Map<String, String> renamed = AnotherAnswers.of(state, inputs, desensitizer);
    for (int i = 0; i < inputs.size(); i++) {
      SessionInput input = inputs.get(i);
      String eventId = input.eventId() != null ? input.eventId() : DerivedEventIds.of(input, desensitizer);
      eventId = renamed.getOrDefault(eventId, eventId);
      if (draft.eventIds().contains(eventId)
          || input.formerId() != null && draft.eventIds().contains(input.formerId())
          || feedbackHeld(draft, input)
          || DerivedEventIds.seenBefore(draft.eventIds(), input, draft.status() != Status.NEW, desensitizer)) {
        MessageDetailsAdded details = detailsOfStoredAnswer(draft, input, eventId, now);
        if (details == null) {
          duplicates++;
          continue;
        }
        events.add(details);
        draft = applied(draft, details, applied, states);
        accepted++;
        continue;
      }
      if (input instanceof SessionInput.ToolResult r && !awaitsResult(draft, r.callEventId())) {
        // Its call has its result already (stored whole, by an earlier build or another door) or is not held
        // (another door's copy of the call was kept): nothing to attach it to.
        duplicates++;
        continue;
      }
      List<Event> echo = draft.status() == Status.COMPLETED ? null : echoOfOtherDoor(draft, input, eventId, now);
      if (echo != null) {
        if (echo.isEmpty()) {
          duplicates++;
          continue;
        }
        for (Event e : echo) {
          events.add(e);
          draft = applied(draft, e, applied, states);
        }
        accepted++;
        continue;
      }
      Instant at = input.at() != null ? input.at() : now;
      List<Event> produced = new ArrayList<>();
      if (draft.status() == Status.NEW && !(input instanceof SessionInput.Start)) {
        // The session starts at the earliest time the request names, not the first input's: a request
        // is not in time order (an OTel agent span precedes its chat span but its step is timed at
        // its end), and a session must not have started after its first message.
        produced.add(new SessionStarted("start:" + eventId, earliest(inputs, at), now, agentId, null, null,
            Map.of()));
      }
      String responseId = null;
      if (input instanceof SessionInput.Feedback f && !noMsgId(f.msgId())) {
        responseId = storedResponseId(draft, f.msgId());
        if (responseId == null) {
          return refuse(RejectionCode.NOT_FOUND, "events[" + i + "].msgId",
              // the id is not echoed: a client's text never goes back unredacted (it may hold anything)
              "events[" + i + "].msgId is not the msgId of a response recorded in session "
                  + sessionId);
        }
      }
      if (draft.status() == Status.COMPLETED && !(input instanceof SessionInput.Feedback)
          && state.status() != Status.COMPLETED) {
        // The result that completed the session is in this very request: the request contradicts itself
        // (a 400 naming both inputs), where "session s1 was completed at <now>" named a completion that,
        // the request being refused whole, never happened.
        return refuse(RejectionCode.INVALID, "events[" + i + "]",
            "events[" + i + "] (" + input.type() + ") comes after the result at events[" + resultIndex(inputs, i)
                + "] of this request, and a result completes the session: after it only feedback is accepted;"
                + " send the result last");
      }
      if (draft.status() == Status.COMPLETED && !(input instanceof SessionInput.Feedback)) {
        return refuse(RejectionCode.CONFLICT, "events[" + i + "]",
            "session " + sessionId + " was completed at " + draft.completedAt()
                + "; only feedback is accepted now, not " + input.type());
      }
      if (draft.status() == Status.COMPLETED && now.isAfter(draft.completedAt().plus(settings.feedbackWindow()))) {
        return refuse(RejectionCode.CONFLICT, "events[" + i + "]",
            "the feedback window of session " + sessionId + " closed at "
                + draft.completedAt().plus(settings.feedbackWindow()));
      }
      produced.add(toEvent(input, eventId, at, now, agentId, responseId));
      for (Event e : produced) draft = applied(draft, e, applied, states);
      if (input instanceof SessionInput.Result) {
        Event completed = completion(draft, at, now);
        produced.add(completed);
        draft = applied(draft, completed, applied, states);
      } else if (input instanceof SessionInput.Feedback && draft.status() == Status.COMPLETED) {
        FeedbackRecorded fr = (FeedbackRecorded) produced.get(produced.size() - 1);
        Event revised = new RewardRevised("reward:" + eventId, at, now, draft.agentId(), draft.modelVersion(),
            fr.feedbackId(), Scoring.reward(draft, settings.weights()), Scoring.quality(draft),
            Scoring.outcome(draft), responseIds(draft));
        produced.add(revised);
        draft = applied(draft, revised, applied, states);
      }
      events.addAll(produced);
      accepted++;
    }
    return new Store(events, new Recorded(accepted, duplicates, true), sameEvents(applied, events) ? states : List.of());
  }

  /** {@code draft} after {@code e}, both noted: the draft's states are the entity's states after the write. */
  private static State applied(State draft, Event e, List<Event> applied, List<State> states) {
    State next = draft.apply(e);
    applied.add(e);
    states.add(next);
    return next;
  }

  /** Whether the draft applied exactly the stored events, the same instances in the same order. */
  private static boolean sameEvents(List<Event> applied, List<Event> events) {
    if (applied.size() != events.size()) return false;
    for (int i = 0; i < events.size(); i++) {
      if (applied.get(i) != events.get(i)) return false;
    }
    return true;
  }

  /** The checks before the inputs are planned one by one: a refusal, a sampled-out new session, or null. */
  private Plan head(State state, String requestAgentId, List<SessionInput> inputs) {
    if (sessionIdProblem != null) return refuse(RejectionCode.INVALID, "sessionId", sessionIdProblem);
    // A new session only: one an earlier build stored under a key-like id keeps its reads and appends. The
    // doors refuse it before the session is addressed (KeyLikeIds; sharding journals the ids it starts):
    // this is what a collector without a journal to ask still holds to.
    String sessionKey = state.status() == Status.NEW ? Ids.keyProblem("sessionId", sessionId) : null;
    if (sessionKey != null) return refuse(RejectionCode.INVALID, "sessionId", sessionKey);
    if (requestAgentId == null && state.status() == Status.NEW) {
      if (!sampler.keep(sessionId)) {
        // Sampling dropped this session, so nothing of it is stored: its later feedback (AgentScope's
        // rate/thumbs name no agent) is acknowledged as its events were, "sampled": false, not a 404.
        Plan invalid = invalidInput(state, inputs);
        return invalid != null ? invalid : new Store(List.of(), new Recorded(0, 0, false));
      }
      return refuse(RejectionCode.NOT_FOUND, "sessionId",
          "session " + sessionId + " is unknown; its first events must name the agentId");
    }
    String agentId = requestAgentId == null ? state.agentId() : requestAgentId;
    if (agentId == null || !agentId.equals(validAgentId)) {
      String agentProblem = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
      if (agentProblem != null) return refuse(RejectionCode.INVALID, "agentId", agentProblem);
      validAgentId = agentId;
    }
    if (state.status() != Status.NEW && !state.agentId().equals(agentId)) {
      return refuse(RejectionCode.CONFLICT, "agentId", "session " + Ids.shown(sessionId) + " belongs to agent "
          + Ids.shown(state.agentId()) + ", not " + Ids.shown(agentId));
    }
    Plan invalid = invalidInput(state, inputs);
    if (invalid != null) return invalid;
    if (state.status() == Status.NEW && !sampler.keep(sessionId)) {
      return new Store(List.of(), new Recorded(0, 0, false));
    }
    return null;
  }

  /**
   * Feedback is keyed by its feedbackId whatever eventId carries it: the same rating sent as an event with
   * an eventId of its own and again through POST …/feedback (no eventId there), or from two doors, was
   * stored twice and counted twice in the reward (trial t105). A stored feedback sent without a feedbackId
   * holds its eventId as one, as GET /v1/sessions/{id} shows it.
   */
  private static boolean feedbackHeld(State draft, SessionInput input) {
    if (!(input instanceof SessionInput.Feedback f) || f.feedbackId() == null) return false;
    for (FeedbackRecorded stored : draft.feedback()) {
      if (f.feedbackId().equals(stored.feedbackId())) return true;
    }
    return false;
  }

  /** Whether the session holds the tool call {@code callEventId} awaiting its result. */
  private static boolean awaitsResult(State draft, String callEventId) {
    for (ToolCallRecorded t : draft.toolCalls()) {
      if (t.eventId().equals(callEventId)) return t.pending();
    }
    return false;
  }

  /**
   * The details an answer brings to the same answer stored without them, or null. Behind a load
   * balancer the agent's next call may reach another node before the answering node has recorded
   * the answer: that node stores it from the call's history (same event id, no msgId, no figures),
   * and the answering node's recording is then a duplicate that would lose what only it knows
   * (feedback naming the msgId found nothing). Only while the session is open: a completed one was
   * handed to training with the msgIds it had.
   */
  private MessageDetailsAdded detailsOfStoredAnswer(State draft, SessionInput input, String eventId, Instant now) {
    if (!(input instanceof SessionInput.Message m) || noMsgId(m.msgId()) || draft.status() == Status.COMPLETED
        || Role.parse(m.role()) != Role.assistant) {
      return null;
    }
    for (MessageRecorded stored : draft.messages()) {
      if (stored.eventId().equals(eventId)) {
        if (stored.role() != Role.assistant || stored.msgId() != null || stored.inference() != null) return null;
        MessageRecorded sent = (MessageRecorded) toEvent(input, eventId, stored.at(), now, draft.agentId(), null);
        return new MessageDetailsAdded("details:" + eventId, m.at() != null ? m.at() : now, now, eventId,
            sent.msgId(), sent.latencyMs(), sent.inference());
      }
    }
    return null;
  }

  /**
   * Whether {@code input} is another door's record of what the session holds ({@link DoorEchoes}), or
   * null when it is not. Only a session that holds another door's records is searched, and only then
   * is the input desensitized for the comparison.
   */
  private List<Event> echoOfOtherDoor(State draft, SessionInput input, String eventId, Instant now) {
    String door = DoorEchoes.door(eventId);
    if (door == null || !(input instanceof SessionInput.ToolCall || input instanceof SessionInput.Message)
        || !DoorEchoes.holdsOtherDoor(draft, door)) {
      return null;
    }
    return DoorEchoes.echo(draft, door, toEvent(input, eventId, now, now, draft.agentId(), null), now);
  }

  /** The events that seal a session idle since {@code state.lastActivityAt()}: a TIMEOUT result, then completion. */
  List<Event> timedOut(State state, Instant now) {
    Event result = new TaskResultRecorded("timeout", now, now, TaskStatus.TIMEOUT,
        "no activity for " + settings.idleTimeout());
    return List.of(result, completion(state.apply(result), now, now));
  }

  private Refused refuse(RejectionCode code, String field, String message) {
    return new Refused(new Rejected(code, field, message));
  }

  /**
   * The recorded response per-turn feedback names, as the session stored its id, or null. Ids are
   * stored desensitized, so the sent one is compared in that form; builds before hex tokens were
   * opaque ({@link PiiRules#outsideHexToken}) stored about one upstream id in a hundred with a
   * placeholder in place of a phone-shaped digit run, and such an id still names its response.
   */
  private String storedResponseId(State state, String sent) {
    String asStored = desensitizer.applyToId(sent);
    for (MessageRecorded m : state.messages()) {
      if (m.role() == Role.assistant && asStored.equals(m.msgId())) return asStored;
    }
    for (MessageRecorded m : state.messages()) {
      if (m.role() == Role.assistant && m.msgId() != null && m.msgId().indexOf('[') >= 0
          && placeholdersFor(m.msgId()).matcher(sent).matches()) {
        return m.msgId();
      }
    }
    return null;
  }

  private static final Pattern PLACEHOLDER = Pattern.compile("\\[(?:PHONE|ID_CARD|BANK_CARD)]");

  /** A stored id as a pattern of the ids it was desensitized from: each placeholder stands for a digit run. */
  private static Pattern placeholdersFor(String storedId) {
    StringBuilder regex = new StringBuilder();
    Matcher m = PLACEHOLDER.matcher(storedId);
    int last = 0;
    while (m.find()) {
      regex.append(Pattern.quote(storedId.substring(last, m.start()))).append("[0-9Xx]+");
      last = m.end();
    }
    return Pattern.compile(regex.append(Pattern.quote(storedId.substring(last))).toString());
  }

  private Event completion(State draft, Instant at, Instant now) {
    return new TrajectoryCompleted("completed", at, now, draft.agentId(), draft.modelVersion(),
        Scoring.reward(draft, settings.weights()), Scoring.quality(draft), draft.counts(), Scoring.outcome(draft),
        responseIds(draft));
  }

  /** Stored with the tagged events: the feed need not read and deserialize the session again. */
  private static List<String> responseIds(State draft) {
    List<String> ids = new ArrayList<>();
    for (MessageRecorded m : draft.messages()) {
      if (m.role() == Role.assistant && m.msgId() != null) ids.add(m.msgId());
    }
    return List.copyOf(ids);
  }

  /** A cut-fields marker as stored: null when empty, so events of uncut text stay as they were. */
  private static Map<String, Integer> cutFields(Map<String, Integer> truncated) {
    return truncated == null || truncated.isEmpty() ? null : Collections.unmodifiableMap(new java.util.TreeMap<>(truncated));
  }

  /**
   * A blank msgId ({@code ""}, spaces) is none: clients fill the field whether or not they have an id
   * (trial t77). It was stored as sent, so every such answer of a session shared the id "", and
   * feedback with {@code "msgId": ""} rated them, or was a 404 "not the msgId of a response" where
   * there was none (trial t100). The input's derived id still hashes what was sent, so a retry of an
   * input stored by an earlier build stays a duplicate.
   */
  static boolean noMsgId(String msgId) {
    return msgId == null || msgId.isBlank();
  }

  /** Builds the event, desensitizing every free-text field before it can reach the journal. */
  private Event toEvent(SessionInput input, String eventId, Instant at, Instant now, String agentId,
      String responseId) {
    Desensitizer d = desensitizer;
    if (input instanceof SessionInput.Start s) {
      return new SessionStarted(eventId, at, now, agentId, d.apply(s.agentVersion()), d.apply(s.modelVersion()),
          s.metadata() == null ? Map.of() : d.apply(s.metadata()));
    } else if (input instanceof SessionInput.Message m) {
      InferenceCall call = m.inference();
      if (call != null && call.error() != null) {
        call = new InferenceCall(call.modelVersion(), call.servedModel(), call.firstTokenMs(), call.promptTokens(),
            call.completionTokens(), call.finishReason(), call.aborted(), d.apply(call.error()), call.fallbackFrom(),
            call.tokenIds(), call.logprobs());
      }
      return new MessageRecorded(eventId, at, now, Role.parse(m.role()), d.apply(m.content()),
          noMsgId(m.msgId()) ? null : d.applyToId(m.msgId()),
          m.latencyMs(), call, cutFields(m.truncated()));
    } else if (input instanceof SessionInput.ToolCall t) {
      boolean awaiting = Boolean.TRUE.equals(t.awaitingResult());
      return new ToolCallRecorded(eventId, at, now, d.applyToId(t.callId()), d.apply(t.toolName()), d.apply(t.input()),
          awaiting ? null : d.apply(t.output()), awaiting || t.success() == null || t.success(), t.latencyMs(),
          cutFields(t.truncated()), awaiting ? Boolean.TRUE : null);
    } else if (input instanceof SessionInput.ToolResult r) {
      return new ToolResultRecorded(eventId, at, now, r.callEventId(), d.apply(r.output()),
          r.success() == null || r.success(), r.latencyMs(), cutFields(r.truncated()));
    } else if (input instanceof SessionInput.Reasoning r) {
      return new ReasoningStepRecorded(eventId, at, now, r.index() == null ? -1 : r.index(), d.apply(r.thought()),
          d.apply(r.action()), d.apply(r.observation()));
    } else if (input instanceof SessionInput.Feedback f) {
      FeedbackKind kind = FeedbackKind.parse(f.kind());
      String feedbackId = f.feedbackId() != null ? f.feedbackId() : eventId;
      return new FeedbackRecorded(eventId, at, now, feedbackId, kind, kind == FeedbackKind.RATING ? f.value() : null,
          d.apply(f.source()), responseId);
    } else if (input instanceof SessionInput.Result r) {
      return new TaskResultRecorded(eventId, at, now, TaskStatus.parse(r.status()), d.apply(r.detail()));
    }
    throw new IllegalArgumentException("unknown input " + input.type());
  }
}
