package io.otl.http.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the gateway keeps of an answer: choice 0's text, tool calls and finish reason, the response
 * id, usage, and token ids / logprobs. Built from a whole response or, chunk by chunk, from a
 * server-sent event stream; one instance per call, used by one stream stage at a time.
 */
final class Completion {
  record ToolCall(String id, String name, String arguments) {}

  private final boolean captureTokens;
  private final StringBuilder content = new StringBuilder();
  /** vLLM's reasoning parser output: {@code reasoning_content}, or {@code reasoning} in newer releases. */
  private final StringBuilder reasoning = new StringBuilder();
  /** OpenAI's refusal ({@code message.refusal}, {@code delta.refusal}): what the model said instead of content. */
  private final StringBuilder refusal = new StringBuilder();
  private final Map<Integer, String[]> toolCalls = new TreeMap<>();
  /** The legacy functions API's {@code function_call}: its name and arguments text; null when none. */
  private String[] functionCall;
  private final List<Integer> tokenIds = new ArrayList<>();
  private final List<Double> logprobs = new ArrayList<>();
  /**
   * Bytes of a line not yet ended, kept as bytes: a chunk may end inside a character of several bytes
   * (Chinese, an emoji), and decoded chunk by chunk both halves became U+FFFD in the recorded answer.
   */
  private byte[] pending = new byte[0];
  private int pendingLength;
  private String id;
  private String finishReason;
  /**
   * The choices a stream has started and those it has finished: with {@code n} > 1 the choices'
   * chunks interleave (OpenAI, vLLM), so choice 0's finish reason is not the end of the answer.
   */
  private final Set<Integer> choicesStarted = new HashSet<>();
  private final Set<Integer> choicesFinished = new HashSet<>();
  private Integer promptTokens;
  private Integer completionTokens;
  private boolean done;
  /**
   * The error event the upstream ended its stream with ({@code data: {"error":…}}), described by its type and
   * code; null when it sent none.
   */
  private String upstreamError;
  /** The last two bytes fed, to end a cut event before an event of the gateway's own follows. */
  private int lastTwo;
  private boolean fed;
  private long firstTokenNanos;

  Completion(boolean captureTokens) {
    this.captureTokens = captureTokens;
  }

  /** A non-streaming response body. */
  static Completion ofResponse(JsonNode body, boolean captureTokens) {
    Completion c = new Completion(captureTokens);
    c.id = text(body.get("id"));
    c.usage(body.get("usage"));
    for (JsonNode choice : body.path("choices")) {
      if (choice.path("index").asInt(0) != 0) continue;
      JsonNode message = choice.path("message");
      if (message.path("content").isTextual()) c.content.append(message.path("content").asText());
      if (message.path("refusal").isTextual()) c.refusal.append(message.path("refusal").asText());
      c.reasoning.append(reasoningOf(message));
      int i = 0;
      for (JsonNode call : message.path("tool_calls")) {
        c.toolCalls.put(i++, new String[] {text(call.get("id")), ChatRequest.callName(call),
            argumentsText(ChatRequest.callInput(call))});
      }
      JsonNode fn = message.path("function_call");
      if (fn.isObject()) c.functionCall = new String[] {text(fn.get("name")), argumentsText(fn.get("arguments"))};
      c.finishReason = text(choice.get("finish_reason"));
      c.tokens(choice.path("logprobs"));
    }
    c.done = true;
    return c;
  }

  /**
   * Why a non-streamed 200 body is no answer, or null when it is one (it has a {@code choices} array). A
   * server may answer 200 with an error object instead: vLLM's {@code {"object":"error",…}} for some
   * failures, a proxy's {@code {"error":{…}}}. Recorded as an empty answer before, such a call was
   * exported as training text and counted against nothing (trial t87).
   */
  static String notAnAnswer(JsonNode body) {
    if (body == null || !body.isObject()) return "the model server answered 200 with no completion object";
    if (body.path("choices").isArray()) return null;
    if (body.path("error").isObject()) return describeError("the model server answered 200 with an error object", body.get("error"));
    if ("error".equals(body.path("object").asText())) {
      return describeError("the model server answered 200 with an error object", body);
    }
    if (body.hasNonNull("error")) return "the model server answered 200 with an error";
    return "the model server answered 200 without choices";
  }

  /**
   * The longest line kept while it is cut across chunks: past it the line is not recorded (the client
   * still gets its bytes). A server sending megabytes without a newline made every chunk copy and scan
   * all of them again, and grew the buffer without bound.
   */
  static final int MAX_LINE_BYTES = 16 << 20;
  /** The line being cut across chunks passed {@link #MAX_LINE_BYTES}: its bytes are dropped up to its end. */
  private boolean overlong;

  /** Feeds raw SSE bytes; lines, and characters of several bytes, may be split across chunks. */
  void feed(byte[] bytes, long nowNanos) {
    for (byte b : bytes) lastTwo = (lastTwo << 8 | (b & 0xff)) & 0xffff;
    fed |= bytes.length > 0;
    int from = 0;
    if (pendingLength > 0 || overlong) {
      // The line begun in earlier chunks ends at this chunk's first newline (the bytes before it held none).
      int nl = indexOfNewline(bytes, 0, bytes.length);
      int upTo = nl >= 0 ? nl : bytes.length;
      if (!overlong && pendingLength + upTo > MAX_LINE_BYTES) {
        overlong = true;
        pendingLength = 0;
      }
      if (!overlong) append(bytes, 0, upTo);
      if (nl < 0) return;
      if (!overlong) line(pending, 0, pendingLength, nowNanos);
      overlong = false;
      pendingLength = 0;
      from = nl + 1;
    }
    for (int nl = indexOfNewline(bytes, from, bytes.length); nl >= 0; nl = indexOfNewline(bytes, from, bytes.length)) {
      line(bytes, from, nl, nowNanos);
      from = nl + 1;
    }
    if (bytes.length - from > MAX_LINE_BYTES) {
      overlong = true;
    } else {
      append(bytes, from, bytes.length);
    }
  }

  /** Appends to the line being cut across chunks, the buffer growing by doubling. */
  private void append(byte[] bytes, int from, int to) {
    int n = to - from;
    if (pendingLength + n > pending.length) {
      pending = java.util.Arrays.copyOf(pending, Math.max(pendingLength + n, 2 * pending.length));
    }
    System.arraycopy(bytes, from, pending, pendingLength, n);
    pendingLength += n;
  }

  private static int indexOfNewline(byte[] buf, int from, int to) {
    for (int i = from; i < to; i++) if (buf[i] == '\n') return i;
    return -1;
  }

  private static final byte[] DATA = "data:".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

  /** One line of the stream, {@code buf[from, to)}: a {@code data:} line's JSON is a chunk of the answer. */
  private void line(byte[] buf, int from, int to, long nowNanos) {
    // Trimmed as String.trim does (bytes <= ' '); a byte of a multi-byte character is never one of them.
    while (from < to && (buf[from] & 0xff) <= ' ') from++;
    while (to > from && (buf[to - 1] & 0xff) <= ' ') to--;
    if (!startsWith(buf, from, to, DATA)) return;
    from += DATA.length;
    while (from < to && (buf[from] & 0xff) <= ' ') from++;
    if (to - from == DONE.length && startsWith(buf, from, to, DONE)) {
      done = true;
      return;
    }
    JsonNode parsed;
    try {
      parsed = Json.MAPPER.readTree(buf, from, to - from);
    } catch (java.io.IOException e) {
      try { // bytes that are not UTF-8 read as the decoder replaces them, as the client's SDK would
        parsed = Json.MAPPER.readTree(new String(buf, from, to - from, StandardCharsets.UTF_8));
      } catch (java.io.IOException notJson) {
        return; // not ours to judge: the client gets the bytes as they came; we just cannot record this chunk
      }
    }
    if (parsed != null) chunk(parsed, nowNanos);
  }

  private static boolean startsWith(byte[] buf, int from, int to, byte[] prefix) {
    if (to - from < prefix.length) return false;
    for (int i = 0; i < prefix.length; i++) if (buf[from + i] != prefix[i]) return false;
    return true;
  }

  private void chunk(JsonNode c, long nowNanos) {
    if (c.hasNonNull("error") && upstreamError == null) {
      // The server's own mid-stream failure: vLLM sends it (then [DONE]) when its engine fails mid-answer,
      // OpenAI's servers without [DONE]. Not a chunk of the answer.
      upstreamError = describeError("the model server ended its stream with an error event", c.get("error"));
      return;
    }
    if (id == null) id = text(c.get("id"));
    usage(c.get("usage"));
    for (JsonNode choice : c.path("choices")) {
      int index = choice.path("index").asInt(0);
      choicesStarted.add(index);
      if (choice.hasNonNull("finish_reason")) choicesFinished.add(index);
      if (index != 0) continue;
      JsonNode delta = choice.path("delta");
      String thought = reasoningOf(delta);
      if (!thought.isEmpty()) {
        // A reasoning model thinks before it answers: its first thought is its first token (TTFT).
        if (firstTokenNanos == 0) firstTokenNanos = nowNanos;
        reasoning.append(thought);
      }
      if (delta.path("content").isTextual() && !delta.path("content").asText().isEmpty()) {
        if (firstTokenNanos == 0) firstTokenNanos = nowNanos;
        content.append(delta.path("content").asText());
      }
      if (delta.path("refusal").isTextual() && !delta.path("refusal").asText().isEmpty()) {
        if (firstTokenNanos == 0) firstTokenNanos = nowNanos;
        refusal.append(delta.path("refusal").asText());
      }
      for (JsonNode call : delta.path("tool_calls")) {
        if (firstTokenNanos == 0) firstTokenNanos = nowNanos;
        String[] acc = toolCalls.computeIfAbsent(call.path("index").asInt(toolCalls.size()),
            k -> new String[] {null, null, ""});
        if (call.hasNonNull("id")) acc[0] = call.get("id").asText();
        if (call.path("function").hasNonNull("name")) acc[1] = call.path("function").get("name").asText();
        if (call.path("function").hasNonNull("arguments")) acc[2] += call.path("function").get("arguments").asText();
      }
      JsonNode fn = delta.path("function_call");
      if (fn.isObject()) {
        if (firstTokenNanos == 0) firstTokenNanos = nowNanos;
        if (functionCall == null) functionCall = new String[] {null, ""};
        if (fn.hasNonNull("name")) functionCall[0] = fn.get("name").asText();
        if (fn.hasNonNull("arguments")) functionCall[1] += fn.get("arguments").asText();
      }
      if (choice.hasNonNull("finish_reason")) finishReason = choice.get("finish_reason").asText();
      tokens(choice.path("logprobs"));
    }
  }

  /**
   * An upstream error (event or body) as the session may store it: its type and code, not its message (a server's
   * message may quote the request), each shown only when it is a short name.
   */
  private static String describeError(String what, JsonNode error) {
    StringBuilder b = new StringBuilder(what);
    String type = shortName(error.path("type"));
    String code = shortName(error.path("code"));
    if (type != null || code != null) {
      b.append(" (");
      if (type != null) b.append("type ").append(type);
      if (type != null && code != null) b.append(", ");
      if (code != null) b.append("code ").append(code);
      b.append(')');
    }
    return b.toString();
  }

  private static String shortName(JsonNode n) {
    if (n == null || !(n.isTextual() || n.isIntegralNumber())) return null;
    String v = n.asText();
    return v.matches("[A-Za-z0-9._-]{1,64}") ? v : null;
  }

  /** A message's or delta's reasoning text under either of vLLM's names; empty when it has none. */
  private static String reasoningOf(JsonNode m) {
    JsonNode r = m.path("reasoning_content");
    if (!r.isTextual()) r = m.path("reasoning");
    return r.isTextual() ? r.asText() : "";
  }

  private void usage(JsonNode usage) {
    if (usage == null || !usage.isObject()) return;
    if (usage.path("prompt_tokens").isInt()) promptTokens = usage.get("prompt_tokens").asInt();
    if (usage.path("completion_tokens").isInt()) completionTokens = usage.get("completion_tokens").asInt();
  }

  /** vLLM gives ids as "token_id:N" with return_tokens_as_token_ids; token strings are never stored. */
  private void tokens(JsonNode logprobs) {
    if (!captureTokens) return;
    for (JsonNode t : logprobs.path("content")) {
      if (t.path("logprob").isNumber()) this.logprobs.add(t.get("logprob").asDouble());
      String token = t.path("token").asText("");
      if (token.startsWith("token_id:")) {
        try {
          tokenIds.add(Integer.parseInt(token.substring(9)));
        } catch (NumberFormatException ignored) {
          // not an id: nothing to keep
        }
      }
    }
  }

  private static String argumentsText(JsonNode args) {
    if (args == null || args.isNull()) return "";
    return args.isTextual() ? args.asText() : args.toString();
  }

  private static String text(JsonNode n) {
    return n == null || n.isNull() ? null : n.asText();
  }

  /**
   * What must precede an event appended to the bytes fed so far: nothing at an event boundary, else
   * the line ends that close the event the upstream left cut, so the appended one stands alone.
   */
  String separatorBeforeNextEvent() {
    if (!fed || lastTwo == ('\n' << 8 | '\n')) return "";
    return (lastTwo & 0xff) == '\n' ? "\n" : "\n\n";
  }

  /**
   * The stream ended as OpenAI ends one ([DONE], or, when a server omits [DONE], a finish reason for
   * every choice it started: a stream cut after choice 0 finished but before choice 1 did is not a
   * whole answer).
   */
  boolean finished() {
    return done || finishReason != null && choicesFinished.containsAll(choicesStarted);
  }

  String id() {
    return id;
  }

  /** The error event the upstream's stream carried (its type and code), or null when it carried none. */
  String upstreamError() {
    return upstreamError;
  }

  /**
   * The answer's text: its content, or, when it has none, its refusal. A refusal is the model's turn
   * as the agent saw it (and resends it: {@link TurnRecorder#messageText}); recorded as empty, the turn was
   * lost from the conversation and the export showed the next user message right after the previous.
   */
  String content() {
    return content.length() == 0 ? refusal.toString() : content.toString();
  }

  /** The model's reasoning before its answer (empty when the upstream gave none). */
  String reasoning() {
    return reasoning.toString();
  }

  /**
   * The answer's tool calls; a call the server sent without an {@code id} has "", the id the next request's
   * resent history gives it (review t129: a null id failed the whole turn's recording).
   */
  List<ToolCall> toolCalls() {
    return toolCalls.values().stream().map(a -> new ToolCall(a[0] == null ? "" : a[0], a[1], a[2])).toList();
  }

  /** The legacy {@code function_call} of the answer (no id: its answer names it), or null. */
  ToolCall functionCall() {
    return functionCall == null ? null : new ToolCall(null, functionCall[0], functionCall[1]);
  }

  String finishReason() {
    return finishReason;
  }

  Integer promptTokens() {
    return promptTokens;
  }

  Integer completionTokens() {
    return completionTokens;
  }

  List<Integer> tokenIds() {
    return tokenIds.isEmpty() ? null : List.copyOf(tokenIds);
  }

  List<Double> logprobs() {
    return logprobs.isEmpty() ? null : List.copyOf(logprobs);
  }

  /** When the first reasoning, content or tool-call token arrived (0: none yet). */
  long firstTokenNanos() {
    return firstTokenNanos;
  }
}
