package io.otl.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import io.agentscope.core.ReActAgent;
import io.agentscope.core.agent.Agent;
import io.agentscope.core.agent.StructuredOutputCapableAgent;
import io.agentscope.core.hook.ErrorEvent;
import io.agentscope.core.hook.Hook;
import io.agentscope.core.hook.HookEvent;
import io.agentscope.core.hook.PostActingEvent;
import io.agentscope.core.hook.PostCallEvent;
import io.agentscope.core.hook.PostReasoningEvent;
import io.agentscope.core.hook.PreActingEvent;
import io.agentscope.core.hook.PreCallEvent;
import io.agentscope.core.hook.PreReasoningEvent;
import io.agentscope.core.message.ContentBlock;
import io.agentscope.core.message.Msg;
import io.agentscope.core.message.MsgRole;
import io.agentscope.core.message.TextBlock;
import io.agentscope.core.message.ToolResultBlock;
import io.agentscope.core.message.ToolUseBlock;
import io.agentscope.core.model.ToolSchema;
import io.otl.core.Ids;
import io.otl.core.Sha256;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The AgentScope hook that turns an agent's call into session events. It only reads the events it
 * is shown and hands batches to a non-blocking buffer: it never changes what the agent does, and
 * no failure here (nor of the node) reaches the agent.
 *
 * <p>Event ids derive from AgentScope's own ids (message ids, tool call ids), so a batch sent twice
 * is stored once.
 */
public final class OtlTrainingHook implements Hook, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(OtlTrainingHook.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  // Sessions whose start was sent: bounded, as a server may see sessions without end. Forgetting one
  // only resends its (idempotent) start event.
  private static final int REMEMBERED_SESSIONS = 10_000;

  private final AsyncSender sender;
  private final String agentId;
  private final String agentVersion;
  private final SessionIdProvider sessions;
  private final Set<String> started = Collections.newSetFromMap(Collections.synchronizedMap(
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > REMEMBERED_SESSIONS;
        }
      }));
  private final Map<String, String> agentOfSession = Collections.synchronizedMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
      return size() > REMEMBERED_SESSIONS;
    }
  });
  private final Map<String, Long> callStarted = new ConcurrentHashMap<>();
  private final Map<String, Long> toolStarted = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> steps = Collections.synchronizedMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, AtomicInteger> eldest) {
      return size() > REMEMBERED_SESSIONS;
    }
  });
  // The id of the system prompt, and of the tool list, last sent per session: each is sent when it
  // changes, not with every call or reasoning step (the node would take the resends as duplicates).
  private final Map<String, String> systemSent = remembered();
  private final Map<String, String> toolsSent = remembered();
  private final AtomicLong captureErrors = new AtomicLong();
  private final LongTexts cut;

  OtlTrainingHook(AsyncSender sender, String agentId, String agentVersion, SessionIdProvider sessions,
      int maxTextLength) {
    this.cut = new LongTexts(ID_TEXT, maxTextLength);
    this.sender = sender;
    this.agentId = agentId;
    this.agentVersion = agentVersion;
    this.sessions = sessions;
    sender.onUnavailable(this::sendOnceOnlyAgain);
  }

  /**
   * A batch the node could not take (down at the agent's start, busy, the buffer full) may have held
   * the session's start, system prompt or tool list, which are sent once: the node then stored the
   * later turns without them for good, and the session's SFT line had no prompt and no tools. Marked
   * unsent, they go with the session's next turn (their ids make a repeat harmless). A batch the
   * node refused (4xx) is not resent: the same events would be refused again.
   */
  private void sendOnceOnlyAgain(AsyncSender.Batch batch) {
    String session = batch.sessionId();
    for (SessionInput e : batch.events()) {
      String id = e.eventId();
      if (id == null) continue;
      if (id.equals("as-start")) started.remove(session);
      else if (id.startsWith("as-sys-")) systemSent.remove(session, id);
      else if (id.startsWith("as-tools-")) toolsSent.remove(session, id);
    }
  }

  /** After the agent's other hooks, so what is recorded is what they let through. */
  @Override
  public int priority() {
    return 1000;
  }

  @Override
  public <T extends HookEvent> Mono<T> onEvent(T event) {
    try {
      capture(event);
    } catch (RuntimeException e) {
      long n = captureErrors.incrementAndGet();
      if (Long.bitCount(n) == 1) log.warn("could not capture a {} event ({} so far): {}", event.getType(), n, e.toString());
    }
    return Mono.just(event);
  }

  private void capture(HookEvent event) {
    Agent agent = event.getAgent();
    String sessionId = sessions.sessionId(agent);
    // The time the agent did it: batches reach the node later (buffered, retried), and events sent
    // without a time were stamped with their batch's arrival, so a turn's steps and latencies blurred.
    Instant at = Instant.now();
    List<SessionInput> events = new ArrayList<>();
    List<SessionInput> schemas = List.of();
    if (event instanceof PreCallEvent pre) {
      callStarted.put(sessionId, System.nanoTime());
      SessionInput system = systemPrompt(agent, sessionId, at);
      if (system != null) events.add(system);
      for (Msg m : pre.getInputMessages()) {
        if (m.getRole() == MsgRole.USER || m.getRole() == MsgRole.SYSTEM) {
          events.add(new SessionInput.Message("as-msg-" + m.getId(), at, m.getRole().name().toLowerCase(Locale.ROOT),
              cut.text(m.getTextContent()), null, null));
        }
      }
    } else if (event instanceof PreReasoningEvent) {
      // The tool list goes to the model with each reasoning call: read there, it is the list the model was
      // offered (a tool group activated mid-call, structured output's own tool), in the gateway's form.
      SessionInput tools = toolSchemas(agent, sessionId, at);
      if (tools != null) schemas = List.of(tools);
    } else if (event instanceof PostReasoningEvent post) {
      Msg m = post.getReasoningMessage();
      List<ToolUseBlock> uses = m == null ? List.of() : m.getContentBlocks(ToolUseBlock.class);
      // A step without a tool call is the reply itself, recorded once at the end of the call.
      if (!uses.isEmpty()) {
        String thought = m.getTextContent();
        String action = uses.stream().map(u -> u.getName() + "(" + json(u.getInput()) + ")")
            .collect(Collectors.joining("; "));
        int index = steps.computeIfAbsent(sessionId, s -> new AtomicInteger()).getAndIncrement();
        events.add(new SessionInput.Reasoning("as-rsn-" + m.getId(), at, index,
            thought == null || thought.isBlank() ? null : cut.text(thought), cut.text(action), null));
      }
    } else if (event instanceof PreActingEvent pre) {
      toolStarted.put(pre.getToolUse().getId(), System.nanoTime());
    } else if (event instanceof PostActingEvent post) {
      ToolUseBlock use = post.getToolUse();
      Long began = toolStarted.remove(use.getId());
      String text = text(post.getToolResult());
      events.add(new SessionInput.ToolCall("as-tool-" + use.getId(), at, use.getId(), use.getName(),
          cut.json(MAPPER.valueToTree(use.getInput())), cut.json(output(text)), !text.startsWith("Error:"),
          millisSince(began)));
    } else if (event instanceof PostCallEvent post) {
      Msg reply = post.getFinalMessage();
      Long began = callStarted.remove(sessionId);
      if (reply != null) {
        events.add(new SessionInput.Message("as-msg-" + reply.getId(), at, "assistant",
            cut.text(reply.getTextContent()), reply.getId(), millisSince(began)));
      }
    } else if (event instanceof ErrorEvent error) {
      callStarted.remove(sessionId);
      // A step, not the session's result: a completed session refuses the conversation's next turns,
      // and whether a failed call ends the conversation is the application's call (complete(...)).
      // The class only: an exception's message may quote the user.
      int index = steps.computeIfAbsent(sessionId, s -> new AtomicInteger()).getAndIncrement();
      events.add(new SessionInput.Reasoning("as-error-" + UUID.randomUUID(), at, index, null, "error",
          error.getError().getClass().getSimpleName()));
    }
    if (events.isEmpty() && schemas.isEmpty()) return;
    String owner = agentId != null ? agentId : agentIdOf(agent.getName());
    agentOfSession.put(sessionId, owner);
    if (started.add(sessionId)) {
      events.add(0, new SessionInput.Start("as-start", at, agentVersion, null,
          Map.of("source", "agentscope", "agentName", String.valueOf(agent.getName()))));
    }
    if (!events.isEmpty()) sender.offer(new AsyncSender.Batch(sessionId, owner, events));
    // A batch of their own: schemas over the node's max-text-length are refused, and only they are lost.
    if (!schemas.isEmpty()) sender.offer(new AsyncSender.Batch(sessionId, owner, schemas));
  }

  /**
   * The agent's system prompt as the session's system message, once: a ReActAgent puts its {@code
   * sysPrompt} before its memory in every model call, not among the call's input messages, so the
   * trajectory lacked the prompt the model saw. Recorded before the call's user message, where the model
   * has it. The id derives from the (desensitized) text: a resend is a duplicate, a changed prompt is new.
   */
  private SessionInput systemPrompt(Agent agent, String sessionId, Instant at) {
    if (!(agent instanceof ReActAgent react)) return null;
    String prompt = react.getSysPrompt();
    // ReActAgent leaves a blank sysPrompt out of the model's messages.
    if (prompt == null || prompt.trim().isEmpty()) return null;
    String id = "as-sys-" + digest(prompt);
    if (id.equals(systemSent.put(sessionId, id))) return null;
    return new SessionInput.Message(id, at, "system", cut.text(prompt), null, null);
  }

  /**
   * The tools offered to the model, stored as the gateway stores a request's {@code tools}: the
   * session's metadata {@code tools}, the OpenAI array {@code [{"type":"function","function":{"name",
   * "description","parameters"}}]} as JSON text, which the SFT export reads back as its {@code tools}.
   */
  private SessionInput toolSchemas(Agent agent, String sessionId, Instant at) {
    if (!(agent instanceof StructuredOutputCapableAgent a) || a.getToolkit() == null) return null;
    List<ToolSchema> offered = a.getToolkit().getToolSchemas();
    if (offered == null || offered.isEmpty()) return null;
    com.fasterxml.jackson.databind.node.ArrayNode tools = MAPPER.createArrayNode();
    for (ToolSchema schema : offered) {
      com.fasterxml.jackson.databind.node.ObjectNode fn = tools.addObject().put("type", "function").putObject("function");
      fn.put("name", schema.getName());
      if (schema.getDescription() != null) fn.put("description", schema.getDescription());
      fn.set("parameters", schema.getParameters() == null ? MAPPER.createObjectNode()
          : MAPPER.valueToTree(schema.getParameters()));
      if (schema.getStrict() != null) fn.put("strict", schema.getStrict());
    }
    String text = json(tools);
    String id = "as-tools-" + digest(text);
    if (id.equals(toolsSent.put(sessionId, id))) return null;
    return new SessionInput.Start(id, at, null, null, Map.of("tools", text));
  }

  private static final Desensitizer ID_TEXT = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());

  /**
   * 24 letters from a SHA-256 of the text with personal data replaced (so an id gives none of it
   * back); letters only, so no id looks like a phone or ID number, which the node refuses in ids.
   */
  static String digest(String text) {
    byte[] h = Sha256.of(ID_TEXT.apply(text));
    StringBuilder id = new StringBuilder(24);
    for (int i = 0; i < 12; i++) {
      id.append((char) ('a' + ((h[i] >> 4) & 0xf))).append((char) ('a' + (h[i] & 0xf)));
    }
    return id.toString();
  }

  private static <V> Map<String, V> remembered() {
    return Collections.synchronizedMap(new LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > REMEMBERED_SESSIONS;
      }
    });
  }

  /**
   * The default agent id, from the agent's name as the OpenTelemetry door derives it: a name such as
   * "Weather Agent" is no valid id, and sent as it is every batch was refused (400) and dropped.
   * A name that yields no valid id is sent as it is, so the node's refusal names the problem.
   */
  static String agentIdOf(String name) {
    String id = Ids.agentIdFromName(name);
    return id != null ? id : String.valueOf(name);
  }

  // --- Feedback and outcome: the same buffer, so they never block or fail the caller either.

  /** Thumbs up/down on the agent's current session. */
  public void thumbs(Agent agent, boolean helpful) {
    thumbs(sessions.sessionId(agent), helpful);
  }

  public void thumbs(String sessionId, boolean helpful) {
    feedback(sessionId, helpful ? "THUMBS_UP" : "THUMBS_DOWN", null, UUID.randomUUID().toString());
  }

  /** A 1–5 rating of the agent's current session. */
  public void rate(Agent agent, int score) {
    rate(sessions.sessionId(agent), score);
  }

  public void rate(String sessionId, int score) {
    if (score < 1 || score > 5) throw new IllegalArgumentException("a rating is an integer from 1 to 5: " + score);
    feedback(sessionId, "RATING", (double) score, UUID.randomUUID().toString());
  }

  /**
   * Any feedback kind of DESIGN §3.1.1; the same {@code feedbackId} sent twice counts once (pass the
   * id of the user's click to make retries safe); a null {@code feedbackId} gets a new one.
   */
  public void feedback(String sessionId, String kind, Double value, String feedbackId) {
    feedback(sessionId, kind, value, feedbackId, null);
  }

  /**
   * Feedback on one answer of the session: {@code msgId} is the id the answer was recorded with. For an
   * agent whose model calls the node's inference gateway that is the reply's {@code Msg.getId()} (AgentScope's
   * OpenAI model names its reply after the completion's id, which the gateway records as the answer's msgId),
   * so a THUMBS_DOWN on it ends the session's SFT line before that answer (docs/datasets.md). A {@code msgId}
   * the session has no answer with is refused by the node (404) and counted in {@link #dropped()}; a null
   * one rates the whole session.
   */
  public void feedback(String sessionId, String kind, Double value, String feedbackId, String msgId) {
    // Without an id every feedback of a session had the event id "as-fb-null": all but the first were
    // taken for repeats and dropped. Each call without an id is now one feedback of its own.
    String id = feedbackId != null ? feedbackId : UUID.randomUUID().toString();
    enqueue(sessionId, new SessionInput.Feedback("as-fb-" + id, Instant.now(), kind, value, id, "agentscope", msgId));
  }

  /** The session's final result (SUCCESS or FAILURE); the session completes and stays open to feedback. */
  public void complete(Agent agent, boolean success, String detail) {
    complete(sessions.sessionId(agent), success, detail);
  }

  public void complete(String sessionId, boolean success, String detail) {
    enqueue(sessionId, new SessionInput.Result("as-result", Instant.now(), success ? "SUCCESS" : "FAILURE", detail));
  }

  private void enqueue(String sessionId, SessionInput event) {
    // A session this hook never saw and no agentId (a hook rebuilt after a restart, or built only to
    // rate): sent without one, the node takes the session's own agent; a session the node does not
    // hold is refused and counted in dropped(). It threw into the caller before trial t151.
    String owner = agentOfSession.getOrDefault(sessionId, agentId);
    sender.offer(new AsyncSender.Batch(sessionId, owner, List.of(event)));
  }

  // --- Counters, for the agent's own metrics.

  /** Events the node acknowledged and keeps (a resend of stored events counts too). */
  public long delivered() {
    return sender.delivered();
  }

  /**
   * Events the node acknowledged but did not store: their session is one its sampling drops
   * ({@code collect-mode = sampled}, answered {@code "sampled": false}). Not in {@link #delivered()}.
   */
  public long notSampled() {
    return sender.notSampled();
  }

  /** Events given up on: buffer full, node refused, or still failing after the retries. */
  public long dropped() {
    return sender.dropped();
  }

  /** Sends that failed (each retry counts). */
  public long failedAttempts() {
    return sender.failedAttempts();
  }

  /** Waits until everything captured so far was delivered or dropped; false if {@code max} passed first. */
  public boolean flush(Duration max) throws InterruptedException {
    return sender.flush(max);
  }

  /** Flushes (up to 10 s) and stops the sender thread; the hook records nothing after. */
  @Override
  public void close() {
    sender.close();
  }

  private static String text(ToolResultBlock result) {
    if (result == null || result.getOutput() == null) return "";
    StringBuilder out = new StringBuilder();
    for (ContentBlock b : result.getOutput()) {
      if (b instanceof TextBlock t && t.getText() != null) {
        if (out.length() > 0) out.append('\n');
        out.append(t.getText());
      }
    }
    return out.toString();
  }

  /**
   * A tool's JSON answer stays structured; anything else is kept as text. AgentScope's default
   * converter hands a tool's String return value over JSON-quoted, so one level of quoting is undone.
   */
  private static JsonNode output(String text) {
    JsonNode parsed = parse(text);
    if (parsed != null && parsed.isTextual()) {
      JsonNode inner = parse(parsed.asText());
      return inner != null && inner.isContainerNode() ? inner : parsed;
    }
    return parsed != null && parsed.isContainerNode() ? parsed : TextNode.valueOf(text);
  }

  private static JsonNode parse(String text) {
    String t = text.strip();
    if (!(t.startsWith("{") || t.startsWith("[") || t.startsWith("\""))) return null;
    try {
      return MAPPER.readTree(t);
    } catch (java.io.IOException notJson) {
      return null;
    }
  }

  private static String json(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (java.io.IOException e) {
      return String.valueOf(value);
    }
  }

  private static Long millisSince(Long nanoStart) {
    return nanoStart == null ? null : (System.nanoTime() - nanoStart) / 1_000_000;
  }
}
