package io.otl.http.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.otl.core.Sha256;
import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.GatewayMessageIds;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionInput;
import io.otl.http.Json;
import io.otl.wire.JsonLimits;
import io.otl.wire.StrictDocument;
import java.util.ArrayList;
import java.util.HashMap;
import io.otl.core.RetryOnTimeout;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one gateway call into session events, sent through the same entity command as the HTTP
 * events API (so the session desensitizes before persisting, and deduplicates).
 *
 * <p>Requests resend the conversation. Each message's event id derives from what it says (see
 * {@link #messageId}), so history the session already holds comes back as duplicates and only
 * the new suffix is persisted: the system prompt once, each answer once (under the id the next
 * request will give it). Each tool set the session has not had yet goes into its metadata (the
 * latest replaces the earlier: agents resend the whole list). A model's tool call is stored with
 * the answer that made it, awaiting its result; the tool message of a later request attaches the
 * result to that call ({@link SessionInput.ToolResult}).
 */
final class TurnRecorder {
  private static final Logger log = LoggerFactory.getLogger(TurnRecorder.class);
  static final String START_ID = "gw:start";
  static final String TOOLS_PREFIX = "gw:tools:";

  private final DataCollector collector;
  private final Desensitizer desensitizer;
  private final RederivedIds rederivedIds;
  private final TextCut cut;

  /**
   * @param desensitizer the sessions' own, so that ids derive only from text as it will be stored
   * @param maxTextLength the sessions' {@code data-collector.max-text-length}: longer texts are
   *     stored cut, with a marker, instead of the session refusing the whole turn
   */
  TurnRecorder(DataCollector collector, Desensitizer desensitizer, int maxTextLength) {
    this.collector = collector;
    this.desensitizer = desensitizer;
    this.rederivedIds = new RederivedIds(desensitizer);
    this.cut = new TextCut(desensitizer, maxTextLength);
  }

  /** The call's outcome: an answer (possibly partial) or a failure. */
  record Outcome(Completion answer, boolean aborted, String error, long firstTokenMs, long totalMs) {}

  /**
   * @param routedVersion the version the session is routed to (the session's modelVersion)
   * @param routedServedModel the model name of {@code routedVersion}: the session's {@code servedModel}
   * @param version the version that answered (the stable, after a fallback)
   * @param servedModel the model name of {@code version}: the answer's {@code inference.servedModel}
   */
  List<SessionInput> inputs(Set<String> known, String lastMessage, ChatRequest request,
      String routedVersion, String routedServedModel, String version, String servedModel, String fallbackFrom,
      Outcome outcome, Instant requestAt, Instant answerAt) {
    return inputs(desensitizer, cut, known, lastMessage, request, routedVersion, routedServedModel, version,
        servedModel, fallbackFrom, outcome, requestAt, answerAt);
  }

  /**
   * Sends the inputs through the session's own command (it desensitizes, deduplicates, persists),
   * again when the session does not answer in time, up to {@value #TIMEOUT_RETRIES} times
   * {@value #TIMEOUT_RETRY_PAUSE_MS} ms apart. The agent already has its answer: a session whose
   * node was killed answers nowhere until its shard has moved (several seconds, more than the ask
   * timeout), and the last turns of a conversation that ended in that window were lost, since no
   * later request resent them. A write that did land is dropped by the session as duplicates.
   */
  CompletionStage<AgentSession.RecordReply> submit(String sessionId, String agentId, List<SessionInput> inputs) {
    return submit(sessionId, agentId, inputs, null, null);
  }

  /**
   * As {@link #submit(String, String, List)}, named {@code writer} and, the first time, stored only after
   * the gateway write {@code after} ({@link AgentSession.Record}). A resend is unconditional: the first
   * one may have landed, and the session's last write is then this one; numbered again against the
   * session, its answer was stored a second time.
   */
  CompletionStage<AgentSession.RecordReply> submit(String sessionId, String agentId, List<SessionInput> inputs,
      String writer, String after) {
    java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
    return RetryOnTimeout.call(() -> collector.submit(sessionId, agentId, inputs, writer,
            first.getAndSet(false) ? after : null), TIMEOUT_RETRIES,
        TIMEOUT_RETRY_PAUSE_MS, retry -> {
          if (retry == 1) log.info("gateway: session {} did not answer the recording in time; sending it again",
              io.otl.core.Ids.shown(sessionId));
        });
  }

  /**
   * The session as stored and its last gateway write ({@link AgentSession.Outdated}), for numbering a turn
   * when this gateway does not know what it holds ({@link TurnRecording}): a write of nothing after a write
   * no session has, so the session stores nothing and answers with itself. An unknown session stays in
   * memory for the recording that follows.
   */
  CompletionStage<AgentSession.RecordReply> asStored(String sessionId, String agentId) {
    return collector.submit(sessionId, agentId, List.of(), null, NO_WRITE);
  }

  /**
   * The session as stored, for a session that does not answer {@link #asStored} (a node of an earlier
   * build, in a rolling upgrade); an unknown session stays in memory for the recording that follows.
   */
  CompletionStage<java.util.Optional<AgentSession.State>> storedIn(String sessionId) {
    return collector.lookup(sessionId);
  }

  /** A write name no gateway gives ({@link TurnRecording}'s are {@code gw-<hex>:<n>}). */
  private static final String NO_WRITE = "?";

  /** The stored messages' ids as today's desensitizer would give them ({@link RederivedIds}). */
  Map<String, String> rederived(AgentSession.State state) {
    return rederivedIds.of(state.messages());
  }

  /** Answers covered: about 6 ask timeouts (5 s by default) and pauses, beyond a fail-over's ~10 s. */
  static final int TIMEOUT_RETRIES = 6;
  static final long TIMEOUT_RETRY_PAUSE_MS = 500;

  static List<SessionInput> inputs(Desensitizer d, TextCut cut, Set<String> known, ChatRequest request,
      String routedVersion, String version, String servedModel, String fallbackFrom, Outcome outcome) {
    return inputs(d, cut, known, null, request, routedVersion, servedModel, version, servedModel, fallbackFrom, outcome,
        null, null);
  }

  /**
   * @param lastMessage the id of the last message recorded in the session by this gateway, null if
   *     unknown (see {@link #alignedCounts})
   * @param requestAt when the request arrived: the time of what it brings (the start, the tool schemas, the
   *     messages and tool results the session does not have yet); null: the session's time of recording
   * @param answerAt when the answer ended: the time of the answer and its reasoning (they were stamped with
   *     the recording's time, after the answer, and the question with it: the trajectory showed both at one
   *     instant); null: the session's time of recording
   */
  static List<SessionInput> inputs(Desensitizer d, TextCut cut, Set<String> known, String lastMessage,
      ChatRequest request, String routedVersion, String routedServedModel, String version, String servedModel,
      String fallbackFrom, Outcome outcome, Instant requestAt, Instant answerAt) {
    List<SessionInput> in = new ArrayList<>();
    if (!known.contains(START_ID)) {
      Map<String, String> meta = new LinkedHashMap<>();
      meta.put("source", "gateway");
      // The routed version's name, beside the session's modelVersion (the routed version): a session whose
      // first call fell back recorded the stable's name here, so its metadata named v1 and v0's model at
      // once. What answered each turn is the turn's inference (version, servedModel, fallbackFrom).
      if (routedServedModel != null) meta.put("servedModel", routedServedModel);
      in.add(new SessionInput.Start(START_ID, requestAt, null, routedVersion, meta));
    }
    String tools = request.tools() == null ? null : request.tools().toString();
    // One id per tool set, not per session: an agent that adds a tool mid-conversation resends the whole
    // list, and a call of the new tool must find its schema in the session (the export's `tools`).
    String toolsId = tools == null ? null : toolsId(d, tools);
    if (toolsId != null && !known.contains(toolsId)) in.add(ToolSets.start(toolsId, tools, cut, requestAt));
    ArrayNode messages = request.messages();
    Completion answer = outcome.answer();
    Map<String, Integer> seen = alignedCounts(d, messages, known, lastMessage, answer == null ? null
        : messageHash(d, "assistant", answer.content(), answer.toolCalls().stream().map(Completion.ToolCall::id).toList()),
        answer == null ? List.of() : answer.toolCalls().stream().map(Completion.ToolCall::id).toList());
    // A model's tool calls are stored with the answer that made them (awaiting their result); a result the
    // request brings is attached to its call, keyed by the call's event id, which the call's place in the
    // history gives (not the result's): a retry, another node, a restart derive the same ids.
    Map<String, String> callEvents = new HashMap<>();
    String functionCallEvent = null;
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      String callEvent = "tool".equals(m.path("role").asText()) ? callEvents.get(m.path("tool_call_id").asText()) : null;
      if (callEvent != null) {
        toolResult(cut, requestAt, known, callEvent, m, in);
        continue;
      }
      if (functionCallEvent != null && "function".equals(m.path("role").asText())) {
        // The legacy functions API: the result of the function_call just before, which has no id of its own.
        toolResult(cut, requestAt, known, functionCallEvent, m, in);
        functionCallEvent = null;
        continue;
      }
      String content = messageText(m);
      String id = messageId(d, role(m), content, callIds(m.path("tool_calls")), seen);
      if (!known.contains(id)) in.add(message(cut, id, requestAt, role(m), content, null, null, null));
      functionCallEvent = null;
      if (!"assistant".equals(m.path("role").asText())) continue;
      for (JsonNode call : m.path("tool_calls")) {
        String callId = call.path("id").asText();
        String tcId = toolCallEventId(callId, seen.merge(CALL_KEY + callId, 1, Integer::sum) - 1);
        callEvents.put(callId, tcId);
        toolCall(cut, requestAt, known, tcId, callId, ChatRequest.callName(call), ChatRequest.callInput(call), in);
      }
      if (m.path("function_call").isObject()) {
        // No id of its own: the assistant message that made it names it (stable however often it is resent).
        JsonNode fn = m.get("function_call");
        functionCallEvent = toolCallEventId(id);
        toolCall(cut, requestAt, known, functionCallEvent, id, fn.path("name").asText(null), fn.get("arguments"), in);
      }
    }
    Completion a = outcome.answer();
    if (outcome.error() != null && (a == null || a.content().isEmpty() && a.toolCalls().isEmpty()
        && a.functionCall() == null)) {
      // A failed call: an id of its own, so that a retry of the turn is recorded too.
      String id = "gw:f:" + java.util.UUID.randomUUID();
      if (a != null) reasoning(cut, id, answerAt, a, in);
      in.add(new SessionInput.Message(id, answerAt, "assistant", "", null, outcome.totalMs(),
          new InferenceCall(version, servedModel, null, null, null, null, null, outcome.error(), fallbackFrom,
              null, null)));
      return in;
    }
    boolean whole = !outcome.aborted() && outcome.error() == null;
    String id = messageId(d, "assistant", a.content(),
        a.toolCalls().stream().map(Completion.ToolCall::id).toList(), seen) + (whole ? "" : ":partial");
    InferenceCall call = new InferenceCall(version, servedModel, outcome.firstTokenMs(), a.promptTokens(),
        a.completionTokens(), a.finishReason(), outcome.aborted() ? Boolean.TRUE : null, outcome.error(), fallbackFrom,
        a.tokenIds(), a.logprobs());
    reasoning(cut, id, answerAt, a, in);
    in.add(message(cut, id, answerAt, "assistant", a.content(), a.id(), outcome.totalMs(), call));
    // The answer's tool calls, awaiting their results (the next request's tool messages): a conversation that
    // ends on a call (AgentScope's structured output, whose generate_response arguments are the answer) keeps
    // it. Those of an answer that failed or was cut short are not: the agent did not get them whole.
    if (!whole) return in;
    for (Completion.ToolCall t : a.toolCalls()) {
      String tcId = toolCallEventId(t.id(), seen.merge(CALL_KEY + t.id(), 1, Integer::sum) - 1);
      toolCall(cut, answerAt, known, tcId, t.id(), t.name(), Json.MAPPER.getNodeFactory().textNode(t.arguments()), in);
    }
    if (a.functionCall() != null) {
      toolCall(cut, answerAt, known, toolCallEventId(id), id, a.functionCall().name(),
          Json.MAPPER.getNodeFactory().textNode(a.functionCall().arguments()), in);
    }
    return in;
  }

  /**
   * The model's reasoning ({@code reasoning_content} / {@code reasoning} of vLLM's reasoning parsers)
   * as a reasoning step placed before the answer it led to, under the answer's id with {@code :r}: a
   * resent answer is a duplicate, and so is its step. The forwarded answer keeps it unchanged.
   */
  private static void reasoning(TextCut cut, String answerId, Instant at, Completion a, List<SessionInput> in) {
    if (a.reasoning().isEmpty()) return;
    // Cut at the limit as message texts are (the agent has the whole text already).
    in.add(new SessionInput.Reasoning(answerId + ":r", at, null, cut.text(a.reasoning()).value(), null, null));
  }

  /** A message input, its content cut at the limit (and marked so) when it is longer. */
  private static SessionInput.Message message(TextCut cut, String id, Instant at, String role, String content,
      String msgId, Long latencyMs, InferenceCall call) {
    TextCut.Text text = cut.text(content);
    return new SessionInput.Message(id, at, role, text.value(), msgId, latencyMs, call,
        text.originalLength() == null ? null : Map.of("content", text.originalLength()));
  }

  /**
   * A message's event id: a hash of its role, its text as it will be stored (desensitized, so no
   * id can be traced back to PII) and its tool call ids, numbered when the same message occurs
   * again. The answer recorded now has the id it will have when the next request resends it, so
   * resent history is a duplicate wherever it sits (agents may trim or slide their context).
   */
  static String messageId(Desensitizer d, String role, String content, List<String> callIds,
      Map<String, Integer> seen) {
    String hash = messageHash(d, role, content, callIds);
    return numbered(hash, seen.merge(hash, 1, Integer::sum) - 1);
  }

  static String messageHash(Desensitizer d, String role, String content, List<String> callIds) {
    // White space around the text is not part of its identity: agents commonly strip() the answer
    // ("\n\nSure" → "Sure") before they resend it, and the stripped answer was stored again as an
    // edited one, so the conversation held the model's turn twice (and the SFT line joined both).
    return Sha256.hex(role + '\u0000' + d.apply(content).strip() + '\u0000' + String.join(",", callIds), 12);
  }

  /** The id of the {@code n}th occurrence (from 0) of the message whose hash is {@code hash}. */
  static String numbered(String hash, int n) {
    return GatewayMessageIds.numbered(hash, n);
  }

  /** A message's id (not a tool call's, a failed call's, a partial answer's or a reasoning step's). */
  static boolean isMessageId(String id) {
    return id.startsWith("gw:m:") && id.indexOf(':', "gw:m:".length()) < 0;
  }

  /** The last message id among {@code ids} (in the order stored), else {@code before}. */
  static String lastMessage(Iterable<String> ids, String before) {
    String last = before;
    for (String id : ids) {
      if (isMessageId(id)) last = id;
    }
    return last;
  }

  /**
   * A model's tool call as it made it, awaiting its result ({@link SessionInput.ToolCall#awaitingResult}), its
   * input cut at the text limit; nothing when the session has it. A session that has it (stored awaiting, or
   * whole by an earlier build) acknowledges it as a duplicate.
   */
  private static void toolCall(TextCut cut, Instant at, Set<String> known, String tcId, String callId, String name,
      JsonNode arguments, List<SessionInput> in) {
    if (known.contains(tcId)) return;
    TextCut.Json input = cut.json(arguments(arguments));
    in.add(new SessionInput.ToolCall(tcId, at, callId, name == null || name.isBlank() ? "unknown" : name, input.value(), null, null, null,
        input.originalLength() == null ? null : Map.of("input", input.originalLength()), Boolean.TRUE));
  }

  /**
   * A tool's result, attached to its call {@code tcId} ({@link SessionInput.ToolResult}), cut at the text limit;
   * nothing when the session has it. Its id derives from the call's, so a request sent again (an SDK's retry,
   * on this node or another) brings a duplicate.
   */
  private static void toolResult(TextCut cut, Instant at, Set<String> known, String tcId, JsonNode result,
      List<SessionInput> in) {
    String id = toolResultEventId(tcId);
    if (known.contains(id)) return;
    TextCut.Json output = cut.json(arguments(text(result.get("content"))));
    in.add(new SessionInput.ToolResult(id, at, tcId, output.value(), true, null,
        output.originalLength() == null ? null : Map.of("output", output.originalLength())));
  }

  /** The event id of the result of the tool call {@code tcId}. */
  static String toolResultEventId(String tcId) {
    return io.otl.core.session.AgentSession.ToolResultRecorded.eventIdOf(tcId);
  }

  /**
   * Where the occurrence numbers of the request's messages start. Numbered within the request alone,
   * a recurring message (a repeated "continue", an identical answer) took the numbers of the
   * occurrences an agent that slides its context window had dropped: the new one got an id the
   * session already had and was dropped as a duplicate, and the conversation lost its turns. So,
   * when the request resends the last message this gateway recorded ({@code lastMessage}), what
   * precedes it is history: each message's numbering starts after the occurrences stored but no
   * longer resent; so does that of a new message (after the last one recorded) or of the answer
   * ({@code answerHash}, null for none) whose earlier occurrences the window dropped altogether. Unknown, or not
   * where the numbering puts it (an edited history): from 0.
   */
  static Map<String, Integer> alignedCounts(Desensitizer d, ArrayNode messages, Set<String> known,
      String lastMessage) {
    return alignedCounts(d, messages, known, lastMessage, null);
  }

  static Map<String, Integer> alignedCounts(Desensitizer d, ArrayNode messages, Set<String> known,
      String lastMessage, String answerHash) {
    return alignedCounts(d, messages, known, lastMessage, answerHash, List.of());
  }

  /** @param answerCalls the call ids of the answer's tool calls, numbered after the request's */
  static Map<String, Integer> alignedCounts(Desensitizer d, ArrayNode messages, Set<String> known,
      String lastMessage, String answerHash, List<String> answerCalls) {
    Map<String, Integer> offsets = new HashMap<>();
    if (lastMessage == null || known.isEmpty()) return offsets;
    List<String> hashes = new ArrayList<>();
    List<List<String>> calls = new ArrayList<>();
    Set<String> callIdsSeen = new java.util.HashSet<>();
    boolean functionCalled = false;
    for (JsonNode m : messages) {
      // As the recording reads them: a tool result whose call the request carries is a tool call, not a
      // message, and so is a function result right after the function_call it answers.
      for (JsonNode call : m.path("tool_calls")) callIdsSeen.add(call.path("id").asText());
      boolean toolResult = "tool".equals(m.path("role").asText())
          && callIdsSeen.contains(m.path("tool_call_id").asText())
          || functionCalled && "function".equals(m.path("role").asText());
      hashes.add(toolResult ? null : messageHash(d, role(m), messageText(m), callIds(m.path("tool_calls"))));
      calls.add(!toolResult && "assistant".equals(m.path("role").asText()) ? callIds(m.path("tool_calls")) : List.of());
      functionCalled = !toolResult && "assistant".equals(m.path("role").asText()) && m.path("function_call").isObject();
    }
    int end = -1;
    for (int i = hashes.size() - 1; i >= 0 && end < 0; i--) {
      String h = hashes.get(i);
      if (h != null && (lastMessage.equals(numbered(h, 0)) || lastMessage.startsWith(numbered(h, 0) + "."))) end = i;
    }
    if (end < 0) return offsets;
    Map<String, Integer> resent = new HashMap<>();
    for (int i = 0; i <= end; i++) {
      if (hashes.get(i) != null) resent.merge(hashes.get(i), 1, Integer::sum);
    }
    for (Map.Entry<String, Integer> e : resent.entrySet()) {
      int stored = 0;
      while (known.contains(numbered(e.getKey(), stored))) stored++;
      if (stored > e.getValue()) offsets.put(e.getKey(), stored - e.getValue());
    }
    String endHash = hashes.get(end);
    int endNumber = offsets.getOrDefault(endHash, 0) + resent.get(endHash) - 1;
    if (!numbered(endHash, endNumber).equals(lastMessage)) return new HashMap<>();
    // A message after the last one recorded (the new question) or the answer, whose every earlier occurrence
    // the window dropped, is numbered after the stored ones too: numbered from 0 it took the first one's id,
    // and the question and its answer were dropped as duplicates (trial t110: "alpha", "beta", "gamma",
    // "alpha" with the last answer and the new question resent; the second "alpha" and its answer were lost).
    List<String> later = new ArrayList<>(hashes.subList(end + 1, hashes.size()));
    if (answerHash != null) later.add(answerHash);
    for (String h : later) {
      if (h == null || resent.containsKey(h) || offsets.containsKey(h)) continue;
      int stored = 0;
      while (known.contains(numbered(h, stored))) stored++;
      if (stored > 0) offsets.put(h, stored);
    }
    // Tool calls alike: a call id a model uses again (call_0 each turn) is a new call each time, numbered
    // after the calls of that id stored but no longer resent. Calls are numbered where the model made them (the
    // assistant messages' tool_calls, and the answer's), not where their results are: a result is attached to
    // its call, so a request sent again after its answer failed (an SDK's retry) brings nothing new (review
    // t116 had such a retry store each of its results a second time).
    Map<String, Integer> resentCalls = new HashMap<>();
    Set<String> callIds = new java.util.LinkedHashSet<>(answerCalls);
    for (int i = 0; i < calls.size(); i++) {
      for (String callId : calls.get(i)) {
        callIds.add(callId);
        if (i <= end) resentCalls.merge(callId, 1, Integer::sum);
      }
    }
    for (String callId : callIds) {
      int stored = 0;
      while (known.contains(toolCallEventId(callId, stored))) stored++;
      int gone = stored - resentCalls.getOrDefault(callId, 0);
      if (gone > 0) offsets.put(CALL_KEY + callId, gone);
    }
    return offsets;
  }

  /** {@code prefix + hex + suffix}, with the hex's digits as letters when the id reads as personal data. */
  static String opaque(String prefix, String hex, String suffix) {
    return GatewayMessageIds.opaque(prefix, hex, suffix);
  }

  private static List<String> callIds(JsonNode calls) {
    List<String> ids = new ArrayList<>();
    for (JsonNode c : calls) ids.add(c.path("id").asText());
    return ids;
  }

  /** OpenAI roles onto the session's four: developer is a system prompt, function a tool. */
  private static String role(JsonNode m) {
    return switch (m.path("role").asText()) {
      case "developer" -> "system";
      case "function" -> "tool";
      default -> m.path("role").asText();
    };
  }

  /**
   * A message's text: its content, or, without any, its refusal (an assistant turn resent as OpenAI
   * returned it, {@code "refusal":"I can't …"} and no content), as {@link Completion#content} records
   * the answer, so the resent turn is the recorded one.
   */
  static String messageText(JsonNode m) {
    String content = text(m.get("content"));
    return content.isEmpty() && m.path("refusal").isTextual() ? m.path("refusal").asText() : content;
  }

  /**
   * A string content, or the text parts of an array content (a refusal part as its text, other parts
   * as a placeholder).
   */
  static String text(JsonNode content) {
    if (content == null || content.isNull()) return "";
    if (content.isTextual()) return content.asText();
    StringBuilder b = new StringBuilder();
    for (JsonNode part : content) {
      if (b.length() > 0) b.append('\n');
      String type = part.path("type").asText();
      b.append("text".equals(type) ? part.path("text").asText()
          : "refusal".equals(type) && part.path("refusal").isTextual() ? part.path("refusal").asText()
          : "[" + type + "]");
    }
    return b.toString();
  }

  /**
   * Tool arguments (and a tool's answer) as JSON when they parse strictly into what the API itself
   * would store (docs/http-edge.md), else as the text the model sent. Read leniently, {@code {"a":1,"a":2}}
   * was stored as {@code {"a":2}}, {@code [1] junk} as {@code [1]}, and {@code 1e999} or a NUL in a key
   * reached the journal, which the events route refuses.
   */
  private static JsonNode arguments(JsonNode args) {
    if (args == null || args.isNull()) return null;
    if (args.isTextual()) return arguments(args.asText());
    return storable(args) ? args : Json.MAPPER.getNodeFactory().textNode(args.toString());
  }

  private static JsonNode arguments(String args) {
    try {
      JsonNode n = StrictDocument.read(args);
      return n != null && storable(n) ? n : Json.MAPPER.getNodeFactory().textNode(args);
    } catch (java.io.IOException e) {
      return Json.MAPPER.getNodeFactory().textNode(args);
    }
  }

  /** Within the limits of the events route, where an input sits at the event's second level. */
  private static boolean storable(JsonNode n) {
    return JsonLimits.problem(n, "input", JsonLimits.DEFAULT_MAX_DEPTH - 1) == null;
  }

  /** A tool set's event id: a hash of its text as stored (desensitized), so a resent set is a duplicate. */
  static String toolsId(Desensitizer d, String tools) {
    return ToolSets.id(TOOLS_PREFIX, d, tools);
  }

  /** Tool call ids may hold characters event ids may not. */
  static String toolCallEventId(String callId) {
    return toolCallEventId(callId, 0);
  }

  /**
   * The id of the {@code n}th call (from 0) with the call id {@code callId} in the session. Models may use
   * one call id again in later turns (a per-turn counter, {@code call_0}); each is a call of its own, and
   * was dropped as a duplicate of the first. The first keeps the id earlier builds gave it.
   */
  static String toolCallEventId(String callId, int n) {
    return opaque("gw:tc:", Sha256.hex(callId, 12), n == 0 ? "" : "." + n);
  }

  /** The key of a call id's occurrences in the counts of {@link #alignedCounts} (message hashes are hex). */
  private static final String CALL_KEY = "call\u0000";
}
