package io.otl.http.otlp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import io.otl.core.Ids;
import io.otl.core.Sha256;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.PiiRules;
import io.otl.core.session.SessionInput;
import io.otl.http.Json;
import io.otl.http.gateway.TextCut;
import io.otl.wire.JsonLimits;
import io.otl.wire.StrictDocument;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Spans of the OpenTelemetry GenAI semantic conventions → session inputs (design §7.6).
 *
 * <p>Session: {@code gen_ai.conversation.id} (else {@code session.id}) of the span or of its nearest
 * ancestor in the same request. Agent: {@code gen_ai.agent.id}, else {@code gen_ai.agent.name}, of any
 * span of the session, else the resource's {@code service.name} (the agent of a new session only: a
 * recorded session keeps its own), with characters ids may not hold replaced by '-'. Ids: a tool call or step uses its
 * span id; a message uses its position in the conversation plus a hash of role and content, because
 * each chat span re-sends the whole history, so turn two's copy of turn one's messages must map to
 * the ids turn one stored. Either way a re-sent batch stores nothing twice. The positions mapped here
 * are the span's own; {@link SessionBatch#aligned} moves them to where the session's conversation has
 * them (an agent that sends only a window of its conversation).
 */
final class GenAiMapper {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Set<String> CHAT = Set.of("chat", "text_completion", "generate_content");
  private static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");
  static final String START_ID = "otlp:start";

  /**
   * What one session receives from a request, and how many spans it came from. {@code agentFromResource}:
   * the agent is only the resource's {@code service.name}, which names the agent of a new session but
   * must not contradict the agent a session was recorded under.
   */
  record SessionBatch(String sessionId, String agentId, boolean agentFromResource, List<SpanInputs> bySpan) {
    /** How many spans gave the session inputs. */
    int spans() {
      return bySpan.size();
    }

    /**
     * Whether a chat span gave inputs, or an agent span messages: only their ids (and whether an agent span's
     * messages are stored at all) depend on what the session holds.
     */
    boolean hasChat() {
      return bySpan.stream().anyMatch(s -> s.chat() || s.agent() != null);
    }

    /** The session's start, then every span's inputs at the spans' own positions, each id once. */
    List<SessionInput> inputs() {
      return merged(null);
    }

    /**
     * The inputs with each chat span's messages at the positions the session's conversation gives them
     * ({@link ConversationAlignment}), the spans placed in the order they started, each against what the
     * session holds and what the spans before it add: {@link #inputs()} when the session holds nothing
     * that contradicts the spans' own positions (a whole history sent on each span).
     *
     * @param stored the event ids the session holds
     */
    List<SessionInput> aligned(Set<String> stored) {
      if (!hasChat()) return inputs();
      List<SessionInput> batch = new ArrayList<>(merged(stored));
      batch.set(0, inputs().get(0)); // the start, timed by the same inputs whatever their ids
      return List.copyOf(batch);
    }

    /** @param stored the event ids the session holds, to place chat spans against (null: the spans' own positions) */
    private List<SessionInput> merged(Set<String> stored) {
      ConversationAlignment.Held held = stored == null ? null : new ConversationAlignment.Held(stored);
      Map<String, SessionInput> merged = new LinkedHashMap<>();
      for (SpanInputs span : bySpan) {
        boolean place = held != null && span.chat();
        for (SessionInput in : place ? ConversationAlignment.align(span.inputs(), held) : span.inputs()) {
          merge(merged, in);
          if (held != null) held.add(in.eventId());
        }
      }
      List<SessionInput> ordered = new ArrayList<>(merged.values());
      if (bySpan.stream().anyMatch(s -> s.agent() != null)) {
        // An agent span's messages are placed after every chat span of the request (an agent span starts before
        // the chat spans it contains, and would otherwise be placed before the conversation that holds them).
        Set<String> known = new HashSet<>(merged.keySet());
        if (stored != null) known.addAll(stored);
        ConversationAlignment.Held agentHeld = held != null ? held : new ConversationAlignment.Held(merged.keySet());
        for (SpanInputs span : bySpan) {
          if (span.agent() != null) span.agent().placeInto(ordered, agentHeld, known);
        }
      }
      List<SessionInput> batch = new ArrayList<>();
      batch.add(start(ordered));
      batch.addAll(ordered);
      return List.copyOf(batch);
    }
  }

  /**
   * What one span gave a session, in the order the spans started; {@code chat}: a chat span's; {@code agent}: an
   * invoke_agent span's messages (null: none), stored only where the conversation does not hold them already.
   */
  record SpanInputs(List<SessionInput> inputs, boolean chat, AgentMessages agent) {
    SpanInputs(List<SessionInput> inputs, boolean chat) {
      this(inputs, chat, null);
    }
  }

  /**
   * The messages of an {@code invoke_agent} span ({@code gen_ai.input.messages}, {@code gen_ai.system_instructions},
   * {@code gen_ai.output.messages}), mapped as a chat span's are, the input and the output each at positions from 0.
   * AgentScope Python's tracing puts the user's message only there; instrumentations that send the whole history
   * on every chat span carry the same messages on their chat spans too. So each window is placed against the
   * conversation the session holds and the request adds ({@link ConversationAlignment}, as a chat span's window
   * is): a message found there is that message and is not stored again; the others are stored under the span's
   * id ({@code otlp:<spanId>:in<k>}, {@code :out<k>}), so a resent span stores nothing twice and they take no
   * position a chat span's message will hold. The input goes right after the span's step; the output after the
   * inputs of spans that began before the agent span ended.
   *
   * @param spanEventId the span's own event id: its step's, which the messages follow
   * @param end when the span ended (the output's time)
   * @param unknownRoles how many of its messages have a role the node does not know (the first one's)
   */
  record AgentMessages(String spanEventId, Instant end, List<SessionInput> input, List<SessionInput> output,
      int unknownRoles, String firstUnknownRole) {
    void placeInto(List<SessionInput> ordered, ConversationAlignment.Held held, Set<String> known) {
      List<SessionInput> in = fresh(ConversationAlignment.align(input, held), "in", known);
      List<SessionInput> out = fresh(ConversationAlignment.align(output, held), "out", known);
      int step = -1;
      for (int i = 0; i < ordered.size() && step < 0; i++) if (ordered.get(i).eventId().equals(spanEventId)) step = i;
      int after = step < 0 ? ordered.size() : step + 1;
      ordered.addAll(after, in);
      int outAt = after + in.size();
      while (outAt < ordered.size() && !(end != null && ordered.get(outAt).at() != null
          && ordered.get(outAt).at().isAfter(end))) {
        outAt++;
      }
      ordered.addAll(outAt, out);
    }

    /** The window's messages the conversation does not hold, under the span's ids. */
    private List<SessionInput> fresh(List<SessionInput> aligned, String kind, Set<String> known) {
      List<SessionInput> out = new ArrayList<>();
      for (int k = 0; k < aligned.size(); k++) {
        SessionInput a = aligned.get(k);
        if (known.contains(a.eventId()) || a.formerId() != null && known.contains(a.formerId())) continue;
        String id = opaque(spanEventId + ":" + kind, String.valueOf(k));
        if (!known.add(id)) continue;
        if (a instanceof SessionInput.Message m) {
          out.add(new SessionInput.Message(id, m.at(), m.role(), m.content(), m.msgId(), m.latencyMs(), m.inference(),
              m.truncated(), null));
        } else if (a instanceof SessionInput.Reasoning r) {
          out.add(new SessionInput.Reasoning(id, r.at(), r.index(), r.thought(), r.action(), r.observation(), null));
        }
      }
      return out;
    }
  }

  /**
   * {@code unread}: why spans that looked like GenAI spans were ignored (ids and field names, never texts);
   * {@code ignoredMessages}: messages of mapped or ignored chat spans that were not stored (a role the node
   * does not know), and {@code unreadMessages} why.
   */
  record Plan(List<SessionBatch> sessions, int ignored, int refused, List<String> problems, List<String> unread,
      int ignoredMessages, List<String> unreadMessages) {}

  /** A chat span's inputs, and how many of its messages have a role the node does not know (the first one's). */
  private record ChatInputs(List<SessionInput> inputs, int unknownRoles, String firstUnknownRole) {}

  private GenAiMapper() {}

  /** {@link #map(List, Desensitizer, TextCut)} with every built-in rule and no text cut. */
  static Plan map(List<OtlpSpan> spans) {
    return map(spans, Desensitizer.builtInScanner(), null);
  }

  /**
   * @param desensitizer the sessions' own: message and step ids hash the text as it will be stored
   * @param cut fits texts into the sessions' {@code data-collector.max-text-length} (null: nothing is cut).
   *     Each chat span re-sends the whole history, so one text over the limit, refused, took every later
   *     span of its session with it: a fetched web page as a tool result lost the rest of the conversation.
   */
  static Plan map(List<OtlpSpan> spans, Desensitizer desensitizer, TextCut cut) {
    Map<String, OtlpSpan> byId = new HashMap<>();
    for (OtlpSpan s : spans) byId.put(s.traceId() + "/" + s.spanId(), s);
    List<OtlpSpan> sorted = new ArrayList<>(spans);
    sorted.sort(Comparator.comparingLong(OtlpSpan::startNanos));

    int ignored = 0;
    int refused = 0;
    List<String> problems = new ArrayList<>();
    List<String> unread = new ArrayList<>();
    int ignoredMessages = 0;
    List<String> unreadMessages = new ArrayList<>();
    Map<String, List<SpanInputs>> bySpan = new LinkedHashMap<>();
    Map<String, String[]> agents = new HashMap<>();
    for (OtlpSpan span : sorted) {
      String op = operation(span);
      if (op == null || !(CHAT.contains(op) || op.equals("execute_tool") || op.equals("invoke_agent"))) {
        ignored++;
        continue;
      }
      String sessionId = inherited(span, byId, "gen_ai.conversation.id", "session.id");
      // The span id is the events' id: without one, every such span of a session was "a duplicate" of
      // the first and dropped while the exporter was told all were taken.
      String problem = !validId(span.spanId())
          ? "a " + op + " span without a spanId (8 bytes, not all zero): its events would have no id"
          // The OTLP specification calls an absent or all-zero traceId invalid; a span with one was stored.
          : !validId(span.traceId())
          ? "span " + span.spanId() + " (" + op + ") has no traceId (16 bytes, not all zero, as OTLP requires)"
          : sessionId == null
          ? "span " + span.spanId() + " (" + op + ") has no gen_ai.conversation.id (or session.id), nor has any ancestor in the request"
          : idProblem(span, op, inheritedKey(span, byId, "gen_ai.conversation.id", "session.id"), sessionId);
      List<SessionInput> produced = null;
      ChatInputs chat = null;
      AgentMessages agent = null;
      if (problem == null) {
        try {
          chat = CHAT.contains(op) ? chat(span, op, desensitizer, cut) : null;
          produced = chat != null ? chat.inputs() : op.equals("execute_tool") ? List.of(tool(span, cut))
              : List.of(agentStep(span));
          for (SessionInput in : produced) refuseUnstorable(in);
          if (op.equals("invoke_agent")) {
            agent = agentMessages(span, desensitizer, cut);
            if (agent != null) {
              for (SessionInput in : agent.input()) refuseUnstorable(in);
              for (SessionInput in : agent.output()) refuseUnstorable(in);
            }
          }
        } catch (IllegalArgumentException e) {
          problem = "span " + span.spanId() + ": " + e.getMessage();
        }
      }
      if (problem != null) {
        refused++;
        if (problems.size() < 5) problems.add(problem);
        continue;
      }
      ChatInputs messages = chat != null ? chat : agent == null ? null
          : new ChatInputs(List.of(), agent.unknownRoles(), agent.firstUnknownRole());
      if (messages != null && messages.unknownRoles() > 0) {
        // Dropped without a word, a Gemini-style "model" turn or a message without a role left the
        // trajectory short while the exporter was told all was taken (design §7.6: ignored and counted).
        ignoredMessages += messages.unknownRoles();
        if (unreadMessages.size() < 5) {
          unreadMessages.add("span " + span.spanId() + " (" + op + ") has " + messages.unknownRoles() + " message"
              + (messages.unknownRoles() == 1 ? "" : "s") + " with a role the node does not know ("
              + messages.firstUnknownRole()
              + "): not stored; the roles are system, user, assistant and tool (developer is read as system)");
        }
      }
      if (produced.isEmpty() && chat != null && chat.unknownRoles() > 0) {
        ignored++;
        if (unread.size() < 5) {
          unread.add("span " + span.spanId() + " (" + op + ") has only messages with a role the node does not know");
        }
        continue;
      }
      if (produced.isEmpty()) {
        // A chat span without any message: content capture is off, or the instrumentation sends the
        // messages as OTLP log records (OpenTelemetry's openai-java library does), which this node does
        // not read. Counted as mapped, it stored nothing, and the agent's trajectory had no message
        // while the node's log and the exporter's answer said all was well.
        ignored++;
        if (unread.size() < 5) {
          unread.add("span " + span.spanId() + " (" + op + ") carries no messages (no gen_ai.input.messages, "
              + "gen_ai.output.messages or message events): turn on the instrumentation's content capture; one that "
              + "writes the messages as log records needs them copied onto the span (docs/connect-opentelemetry.md)");
        }
        continue;
      }
      bySpan.computeIfAbsent(sessionId, k -> new ArrayList<>())
          .add(new SpanInputs(List.copyOf(produced), chat != null, agent));
      noteAgent(agents.computeIfAbsent(sessionId, k -> new String[3]), span, byId);
    }
    List<SessionBatch> sessions = new ArrayList<>();
    for (var e : bySpan.entrySet()) {
      Agent agent = agent(agents.get(e.getKey()));
      if (agent.problem() != null) {
        refused += e.getValue().size();
        if (problems.size() < 5) problems.add("session " + e.getKey() + ": " + agent.problem());
        continue;
      }
      sessions.add(new SessionBatch(e.getKey(), agent.id(), agent.fromResource(), List.copyOf(e.getValue())));
    }
    return new Plan(sessions, ignored, refused, problems, List.copyOf(unread), ignoredMessages,
        List.copyOf(unreadMessages));
  }

  /** An OTLP trace or span id as the decoders give it (hex, of the right length or empty): present, not all zero. */
  private static boolean validId(String hex) {
    return !hex.isEmpty() && !hex.chars().allMatch(c -> c == '0');
  }

  /**
   * What the API's strict JSON refuses at its edge (docs/http-edge.md), a span's attributes could still
   * carry: a NUL or lone surrogate in a text or a key, a double that is NaN or infinite
   * ({@code doubleValue: "NaN"}, {@code 1e999} in a JSON string), nesting past the limit. The session
   * stored them, and exports broke on them later; now the span is refused.
   */
  private static void refuseUnstorable(SessionInput input) {
    JsonLimits.Problem p = JsonLimits.problem(Json.MAPPER.valueToTree(input), "event", JsonLimits.DEFAULT_MAX_DEPTH);
    if (p != null) throw new IllegalArgumentException(p.message());
  }

  /**
   * {@code gen_ai.operation.name}; for spans without it, OpenLLMetry's {@code llm.request.type}
   * (chat, completion) or OpenInference's {@code openinference.span.kind} (LLM, TOOL, AGENT).
   */
  private static String operation(OtlpSpan span) {
    String op = span.text("gen_ai.operation.name");
    if (op != null) return op;
    String legacy = span.text("llm.request.type");
    if ("chat".equals(legacy) || "completion".equals(legacy)) return "chat";
    String kind = span.text("openinference.span.kind");
    if (kind == null) return null;
    return switch (kind) {
      case "LLM" -> "chat";
      case "TOOL" -> "execute_tool";
      case "AGENT" -> "invoke_agent";
      default -> null;
    };
  }

  /** The first of {@code keys} the span has. */
  private static Object first(OtlpSpan span, String... keys) {
    for (String k : keys) {
      Object v = span.attributes().get(k);
      if (v != null) return v;
    }
    return null;
  }

  /** The first value of one of {@code keys} on the span, then on its ancestors within the request. */
  private static String inherited(OtlpSpan span, Map<String, OtlpSpan> byId, String... keys) {
    Map.Entry<String, String> found = firstSet(span, byId, keys);
    return found == null ? null : found.getValue();
  }

  /** The key of the first of {@code keys} set on the span or its nearest ancestor with one, or null. */
  private static String inheritedKey(OtlpSpan span, Map<String, OtlpSpan> byId, String... keys) {
    Map.Entry<String, String> found = firstSet(span, byId, keys);
    return found == null ? null : found.getKey();
  }

  /** The first of {@code keys} set (not empty) on the span, then on its ancestors within the request: key and value. */
  private static Map.Entry<String, String> firstSet(OtlpSpan span, Map<String, OtlpSpan> byId, String... keys) {
    OtlpSpan s = span;
    for (int depth = 0; s != null && depth < 64; depth++) {
      for (String k : keys) {
        String v = s.text(k);
        if (v != null && !v.isEmpty()) return Map.entry(k, v);
      }
      s = s.parentSpanId().isEmpty() ? null : byId.get(s.traceId() + "/" + s.parentSpanId());
    }
    return null;
  }

  /**
   * Why the session id a span names is no valid id, naming the span and the attribute that gave it, as every
   * other refusal does (it named neither: in a batch of hundreds no one could tell which span); the value is
   * not repeated, it may hold personal data.
   */
  private static String idProblem(OtlpSpan span, String op, String key, String sessionId) {
    String problem = Ids.problem(key, sessionId, Ids.MAX_SESSION_ID);
    return problem == null ? null : "span " + span.spanId() + " (" + op + "): " + problem;
  }

  private static void noteAgent(String[] agent, OtlpSpan span, Map<String, OtlpSpan> byId) {
    if (agent[0] == null) agent[0] = inherited(span, byId, "gen_ai.agent.id");
    if (agent[1] == null) agent[1] = inherited(span, byId, "gen_ai.agent.name", "agent.name");
    if (agent[2] == null && span.resource().get("service.name") instanceof String svc && !svc.isEmpty()) agent[2] = svc;
  }

  /** A session's agent id (null: none given) and whether only service.name gave it, or why its spans are refused. */
  private record Agent(String id, boolean fromResource, String problem) {}

  private static final String[] AGENT_SOURCES = {"gen_ai.agent.id", "gen_ai.agent.name (or agent.name)", "the resource's service.name"};

  /**
   * The first of agent id, agent name, service name that makes a valid agent id once the characters
   * ids may not hold are replaced by '-' (agent names such as "Weather Agent" have spaces). One that
   * holds personal data refuses the session, as a session id would be: its id, made of the name,
   * would be journaled with the e-mail or phone number barely changed. So does one over 64 characters,
   * as the API refuses such an agentId, rather than being cut (trial t61).
   */
  private static Agent agent(String[] candidates) {
    for (int i = 0; i < candidates.length; i++) {
      if (candidates[i] == null) continue;
      String pii = Ids.namePii(candidates[i]);
      if (pii != null) {
        return new Agent(null, false, AGENT_SOURCES[i] + " looks like " + pii + "; name the agent with an opaque id");
      }
      int length = Ids.idOfName(candidates[i]).length();
      if (length > Ids.MAX_AGENT_ID) {
        // Cut at 64, two long names that begin alike became one agent, and the id matched no name the user wrote.
        return new Agent(null, false, AGENT_SOURCES[i] + " is " + length + " characters long; an agent id holds at"
            + " most " + Ids.MAX_AGENT_ID + ": name the agent with a shorter id (gen_ai.agent.id)");
      }
      String id = Ids.agentIdFromName(candidates[i]);
      if (id != null) return new Agent(id, i == 2, null);
    }
    return new Agent(null, false, null);
  }

  /**
   * The session's start, saying where it came from ({@code metadata.source}, as the gateway's and the
   * AgentScope hook's sessions say theirs). Sent with every request under one id, so only the first
   * is stored. Timed at the earliest span of the request, where the session would start without it.
   */
  private static SessionInput start(java.util.Collection<SessionInput> inputs) {
    Instant earliest = null;
    for (SessionInput in : inputs) {
      if (in.at() != null && (earliest == null || in.at().isBefore(earliest))) earliest = in.at();
    }
    return new SessionInput.Start(START_ID, earliest, null, null, Map.of("source", "otel"));
  }

  /** Keeps the first copy of an id, but takes a later copy's msgId/latency/inference (the output copy of a message). */
  private static void merge(Map<String, SessionInput> into, SessionInput in) {
    SessionInput old = into.get(in.eventId());
    if (old == null || (old instanceof SessionInput.Message m && m.msgId() == null && m.inference() == null
        && in instanceof SessionInput.Message n && (n.msgId() != null || n.inference() != null))) {
      into.put(in.eventId(), in);
    }
  }

  private static ChatInputs chat(OtlpSpan span, String op, Desensitizer d, TextCut cut) {
    GenAiMessages.Conversation c = GenAiMessages.of(span, true);
    List<SessionInput> out = new ArrayList<>();
    Instant start = instant(span.startNanos());
    Instant end = instant(span.endNanos());
    List<String> unknown = new ArrayList<>();
    for (int i = 0; i < c.input().size(); i++) addMessage(out, i, c.input().get(i), start, null, null, null, d, cut, unknown);
    String responseId = span.text("gen_ai.response.id");
    // An empty id names no response: stored as "", feedback could never name it, and it read as one.
    String msgId = responseId == null || responseId.isBlank() ? null : responseId;
    String failure = failed(span) ? errorText(span, d, cut) : null;
    boolean inferenceGiven = false;
    for (int j = 0; j < c.output().size(); j++) {
      GenAiMessages.Msg m = c.output().get(j);
      // The call's figures go with its first answer only: usage counts every choice of the call, and on each
      // answer it would be counted once per choice (the session's tokens, the model calls of its outcome).
      // So does its failure: a failed span's partial answer (a stream cut mid-way) was stored as a clean
      // answer, and the canary counted the call a success.
      InferenceCall call = inferenceGiven || !"assistant".equals(role(m)) ? null
          : withError(inference(span, m, j, d), failure);
      inferenceGiven |= "assistant".equals(role(m));
      addMessage(out, c.input().size() + j, m, end, msgId, span.durationMs(), call, d, cut, unknown);
    }
    if (failure != null && !inferenceGiven) out.add(failedCall(span, failure, end, d));
    // The tools offered go with a span that stored something: alone they are not a turn (content capture off).
    SessionInput tools = out.isEmpty() ? null : GenAiToolDefinitions.start(span, d, cut, start);
    if (tools != null) out.add(0, tools);
    return new ChatInputs(out, unknown.size(), unknown.isEmpty() ? null : unknown.get(0));
  }

  /** The session's role of a message: the chat APIs' {@code developer} is a system prompt. */
  private static String role(GenAiMessages.Msg m) {
    return "developer".equals(m.role()) ? "system" : m.role();
  }

  /** The span ended in an error: status ERROR, or an {@code error.type} (the conventions' mark of a failed operation). */
  private static boolean failed(OtlpSpan span) {
    String type = span.text("error.type");
    return span.statusCode() == OtlpSpan.STATUS_ERROR || type != null && !type.isBlank();
  }

  /** The longest error text stored: a summary of why the call failed, never a whole upstream body. */
  static final int MAX_ERROR_LENGTH = 512;

  /**
   * A chat span that failed without an answer, as the gateway records a failed call: an empty assistant
   * message whose {@code inference} has the {@code error} (desensitized, cut at {@value #MAX_ERROR_LENGTH}
   * characters and at max-text-length) and the served model and usage when the span has them. Stored as a
   * step "failed: …", it was no model call: the session's outcome counted the version's successful calls and
   * none of its failures, so a version whose calls failed passed the canary's upstream-error guardrail.
   * Its id is the span's (the step's id before): a retried export, also across the upgrade, is a duplicate.
   */
  private static SessionInput failedCall(OtlpSpan span, String error, Instant at, Desensitizer d) {
    InferenceCall usage = inference(span, null, 0, d);
    InferenceCall call = new InferenceCall(null, usage == null ? null : usage.servedModel(), null,
        usage == null ? null : usage.promptTokens(), usage == null ? null : usage.completionTokens(), null, null, error,
        null, null, null);
    return new SessionInput.Message(spanEventId(span), at, "assistant", "", null, span.durationMs(), call);
  }

  /** Why a failed span's call failed, as stored: desensitized, cut at {@value #MAX_ERROR_LENGTH} and at max-text-length. */
  private static String errorText(OtlpSpan span, Desensitizer d, TextCut cut) {
    String error = new TextCut(d, MAX_ERROR_LENGTH).text(d.apply(error(span))).value();
    return cut == null ? error : cut.text(error).value();
  }

  /**
   * The answer's call marked failed, as the gateway marks a stream that broke after its first tokens: the
   * partial content stays, {@code inference.error} says the call failed. Unchanged without an error.
   */
  private static InferenceCall withError(InferenceCall call, String error) {
    if (error == null) return call;
    if (call == null) return new InferenceCall(null, null, null, null, null, null, null, error, null, null, null);
    return new InferenceCall(call.modelVersion(), call.servedModel(), call.firstTokenMs(), call.promptTokens(),
        call.completionTokens(), call.finishReason(), call.aborted(), error, call.fallbackFrom(), call.tokenIds(),
        call.logprobs());
  }

  /**
   * What the span says of the model call that gave the answer, as the gateway records it
   * ({@link InferenceCall}): {@code gen_ai.response.model} (else {@code gen_ai.request.model}) as the served
   * model, {@code gen_ai.usage.input_tokens} / {@code output_tokens} as prompt / completion tokens (or the
   * older {@code prompt_tokens} / {@code completion_tokens}, OpenInference's {@code llm.token_count.*}), the
   * message's own {@code finish_reason}, else the {@code position}th of {@code gen_ai.response.finish_reasons}
   * (none without a message {@code m}).
   * A value of the wrong type (a token count as a string or a double, reasons as one string), out of range
   * or not a short name is left out, never the span refused. Null when the span says none of it.
   */
  private static InferenceCall inference(OtlpSpan span, GenAiMessages.Msg m, int position, Desensitizer d) {
    String model = name(first(span, "gen_ai.response.model", "llm.model_name"));
    if (model == null) model = name(span.attributes().get("gen_ai.request.model"));
    // the current names, then OpenLLMetry's (conventions up to 1.26) and OpenInference's
    Integer prompt = count(first(span, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"));
    Integer completion = count(first(span, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
        "llm.token_count.completion"));
    String reason = m == null ? null : name(m.finishReason());
    if (reason == null && m != null && span.attributes().get("gen_ai.response.finish_reasons") instanceof List<?> reasons
        && position < reasons.size()) {
      reason = name(reasons.get(position));
    }
    if (model == null && prompt == null && completion == null && reason == null) return null;
    // desensitized as every stored text is (the session desensitizes only an inference's error)
    return new InferenceCall(null, model == null ? null : d.apply(model), null, prompt, completion,
        reason == null ? null : d.apply(reason), null, null, null, null, null);
  }

  /** A token count: an integer attribute from 0 to Integer.MAX_VALUE, else null. */
  private static Integer count(Object value) {
    return value instanceof Long n && n >= 0 && n <= Integer.MAX_VALUE ? (int) n.longValue() : null;
  }

  /** A model name or finish reason: a string of 1 to 256 printable characters, else null. */
  private static String name(Object value) {
    if (!(value instanceof String s) || s.isBlank() || s.length() > 256) return null;
    return s.codePoints().allMatch(cp -> !Character.isISOControl(cp) && Character.getType(cp) != Character.SURROGATE
        && Character.isDefined(cp)) ? s : null;
  }

  /**
   * Ids hash the text as the session stores it. Hashed as sent, "op +44 20 7946 0958" was journaled as
   * "op [PHONE]" under an id that gave the number back to anyone hashing the candidates. A text with
   * personal data names its former id, so a conversation re-sent across the upgrade is not stored twice.
   */
  private static void addMessage(List<SessionInput> out, int position, GenAiMessages.Msg m, Instant at, String msgId,
      Long latencyMs, InferenceCall call, Desensitizer d, TextCut cut, List<String> unknownRoles) {
    String role = role(m);
    if (m.toolResult() != null) {
      // a tool's answer sent in a user message (Gemini, Anthropic): a tool message, before the message's own text;
      // at the same position under another role, so its id differs from the text's
      addMessage(out, position, new GenAiMessages.Msg("tool", m.toolResult()), at, null, null, null, d, cut,
          unknownRoles);
    }
    if (!ROLES.contains(role)) {
      // its tool result, if any, is stored above; its own words are not
      if (m.toolResult() == null || m.content() != null) unknownRoles.add(quotedRole(role));
      return;
    }
    // Any other shape (message events, indexed attributes, gen_ai.system_instructions) refuses the span for what
    // the API refuses in a text, as gen_ai.*.messages do (GenAiMessages): cut, it became U+FFFD.
    unstorableText(m.content(), position, role);
    unstorableText(m.reasoning(), position, role);
    if (m.reasoning() != null && "assistant".equals(role)) {
      // the model's thinking before its answer: a step, so exports and the reward never take it for the answer
      String prefix = "otlp:r" + position + ":";
      String[] ids = ids(prefix, m.reasoning(), d);
      // cut without a marker (a step has no field for one); the id is the whole text's, as for a message
      String thought = cut == null ? m.reasoning() : cut.text(m.reasoning()).value();
      out.add(new SessionInput.Reasoning(ids[0], at, null, thought, null, null, ids[1]));
    }
    // An answer without text (it only calls tools) is stored with an empty content, as the gateway stores one:
    // skipped, its gen_ai.response.id named no response, and feedback on it was a 404 forever. Its tool calls
    // come from the execute_tool spans; the next span's copy of it is the same message (same position and text).
    String content = m.content() == null && "assistant".equals(role) ? "" : m.content();
    if (content == null) return;
    // The id hashes the whole text, so the next span's copy of a cut message is the same message.
    String[] ids = ids("otlp:m" + position + ":", role + "\n" + content, d);
    TextCut.Text text = cut == null ? new TextCut.Text(content, null) : cut.text(content);
    out.add(new SessionInput.Message(ids[0], at, role, text.value(), "assistant".equals(role) ? msgId : null,
        "assistant".equals(role) ? latencyMs : null, "assistant".equals(role) ? call : null,
        text.originalLength() == null ? null : Map.of("content", text.originalLength()), ids[1]));
  }

  private static void unstorableText(String text, int position, String role) {
    String problem = io.otl.core.StrictValues.textProblem(text);
    if (problem != null) {
      throw new IllegalArgumentException("the text of message " + position + " (" + role + ") " + problem);
    }
  }

  /**
   * An unknown role as the answer and the log name it: quoted when it is a short name ("model"), else
   * only described. It is the client's text, which never goes back unredacted.
   */
  private static String quotedRole(String role) {
    if (role.isEmpty()) return "an empty role";
    return role.matches("[A-Za-z_-]{1,32}") ? "role \"" + role + "\"" : "a role that is not a name";
  }

  /** {id of the text as stored, id of the text as sent when they differ (else null)}. */
  private static String[] ids(String prefix, String text, Desensitizer d) {
    String stored = d.apply(text);
    String id = opaque(prefix, Sha256.hex(stored, 8));
    return new String[] {id, stored.equals(text) ? null : opaque(prefix, Sha256.hex(text, 8))};
  }

  /** A span's own event id: its span id, or a digest of it when the span id reads as personal data. */
  private static String spanEventId(OtlpSpan span) {
    String id = "otlp:" + span.spanId();
    return PiiRules.looksLike(id) == null ? id : "otlp:" + letters(Sha256.hex("span:" + span.spanId(), 8));
  }

  /**
   * {@code prefix + hex}, or with the hex's digits as letters when the id reads as personal data. Ids
   * are checked for it as every id is, and 16 hex digits hold a phone-shaped run of digits about once in
   * 2000 (otlp:m0:ba16821815823cd2): the session then refused all its spans in that request, and a
   * message's id, which every later chat span re-sends, refused the rest of the conversation too. Only
   * such ids change, so no id stored before is another one now.
   */
  static String opaque(String prefix, String hex) {
    String id = prefix + hex;
    return PiiRules.looksLike(id) == null ? id : prefix + letters(hex);
  }

  /** Hex with its digits 0-9 as the letters g-p: the same value, and no digit run to read as a number. */
  private static String letters(String hex) {
    StringBuilder b = new StringBuilder(hex.length());
    for (int i = 0; i < hex.length(); i++) {
      char c = hex.charAt(i);
      b.append(c >= '0' && c <= '9' ? (char) ('g' + (c - '0')) : c);
    }
    return b.toString();
  }

  private static SessionInput tool(OtlpSpan span, TextCut cut) {
    Object nameValue = first(span, "gen_ai.tool.name", "tool.name");
    String name = nameValue == null ? null : String.valueOf(nameValue);
    if (name == null || name.isBlank()) throw new IllegalArgumentException("execute_tool without gen_ai.tool.name");
    boolean failed = failed(span);
    JsonNode output = json(first(span, "gen_ai.tool.call.result", "output.value"));
    if (output == null && failed) output = MAPPER.createObjectNode().put("error", error(span));
    JsonNode input = json(first(span, "gen_ai.tool.call.arguments", "input.value"));
    Map<String, Integer> truncated = new LinkedHashMap<>();
    if (cut != null) {
      TextCut.Json in = cut.json(input);
      TextCut.Json out = cut.json(output);
      input = in.value();
      output = out.value();
      if (in.originalLength() != null) truncated.put("input", in.originalLength());
      if (out.originalLength() != null) truncated.put("output", out.originalLength());
    }
    return new SessionInput.ToolCall(spanEventId(span), instant(span.startNanos()),
        span.text("gen_ai.tool.call.id"), name, input, output, !failed, span.durationMs(),
        truncated.isEmpty() ? null : truncated);
  }

  /**
   * An agent span's messages, each as {@link #chat} maps a chat span's input ({@link #addMessage}): the input at
   * positions from 0, the output at positions from 0 as well (the agent's reply is where a chat span's output
   * is, wherever that is). No model call: the span names no response and its usage is the whole run's. Null
   * when the span carries none and has no message with a role the node does not know.
   */
  private static AgentMessages agentMessages(OtlpSpan span, Desensitizer d, TextCut cut) {
    GenAiMessages.Conversation c = GenAiMessages.of(span);
    if (c.input().isEmpty() && c.output().isEmpty()) return null;
    List<String> unknown = new ArrayList<>();
    List<SessionInput> input = new ArrayList<>();
    List<SessionInput> output = new ArrayList<>();
    Instant start = instant(span.startNanos());
    Instant end = instant(span.endNanos());
    for (int i = 0; i < c.input().size(); i++) addMessage(input, i, c.input().get(i), start, null, null, null, d, cut, unknown);
    for (int j = 0; j < c.output().size(); j++) addMessage(output, j, c.output().get(j), end, null, null, null, d, cut, unknown);
    return new AgentMessages(spanEventId(span), end, List.copyOf(input), List.copyOf(output), unknown.size(),
        unknown.isEmpty() ? null : unknown.get(0));
  }

  /**
   * An agent invocation is a step of the trajectory: which agent ran, and whether it failed. Timed at
   * the span's start, where the invocation sits among the spans it contains: timed at its end, a
   * session's first step came after its first messages and the session "started" after them.
   */
  private static SessionInput agentStep(OtlpSpan span) {
    Object agentValue = first(span, "gen_ai.agent.name", "agent.name");
    String agent = agentValue == null ? null : String.valueOf(agentValue);
    return new SessionInput.Reasoning(spanEventId(span), instant(span.startNanos()), null, null,
        "invoke_agent" + (agent == null ? "" : " " + agent),
        failed(span) ? "failed: " + error(span) : "done");
  }

  private static String error(OtlpSpan span) {
    String type = span.text("error.type");
    String msg = span.statusMessage();
    if (type != null && msg != null && !msg.isEmpty()) return type + ": " + msg;
    return type != null ? type : msg == null || msg.isEmpty() ? "error" : msg;
  }

  /**
   * A JSON-looking string attribute becomes JSON when it is strict JSON (docs/http-edge.md); anything
   * else is kept as text, as the gateway keeps a model's arguments. Read leniently, {@code {"a":1,"a":2}}
   * was stored as {@code {"a":2}} and {@code {"a":1} {"b":2}} as {@code {"a":1}}: what the tool was
   * given was lost without a word.
   */
  private static JsonNode json(Object value) {
    if (value == null) return null;
    if (value instanceof String s) {
      String t = s.trim();
      if (t.startsWith("{") || t.startsWith("[")) {
        try {
          return StrictDocument.read(t);
        } catch (java.io.IOException e) {
          return TextNode.valueOf(s);
        }
      }
      return TextNode.valueOf(s);
    }
    return MAPPER.valueToTree(value);
  }

  private static Instant instant(long nanos) {
    return nanos <= 0 ? null : Instant.ofEpochSecond(nanos / 1_000_000_000L, nanos % 1_000_000_000L);
  }
}
