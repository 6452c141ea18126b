package io.otl.http.otlp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.wire.JsonLimits;
import io.otl.wire.StrictDocument;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The input and output messages of a GenAI chat span, in the two shapes instrumentations emit:
 * the current attributes {@code gen_ai.input.messages} / {@code gen_ai.output.messages} (JSON
 * arrays of {@code {role, parts[]}}, also found on a {@code gen_ai.client.inference.operation.details}
 * event), and the older per-message events ({@code gen_ai.system.message}, {@code gen_ai.user.message},
 * {@code gen_ai.assistant.message}, {@code gen_ai.tool.message}, {@code gen_ai.choice}, their body
 * in {@code content} or as JSON in {@code gen_ai.event.content}), the events of semantic conventions
 * 1.27 and before ({@code gen_ai.content.prompt} / {@code gen_ai.content.completion} carrying
 * {@code gen_ai.prompt} / {@code gen_ai.completion}, JSON arrays of messages), and
 * the indexed attributes of OpenLLMetry ({@code gen_ai.prompt.N.*}, {@code gen_ai.completion.N.*}) and
 * OpenInference ({@code llm.input_messages.N.message.*}, {@code llm.output_messages.N.message.*}).
 */
final class GenAiMessages {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * content null: the message has no text (e.g. an assistant turn that only calls tools); reasoning:
   * the text of its {@code reasoning} parts, a step of the trajectory rather than part of the answer;
   * toolResult: the {@code tool_call_response} parts of a message whose role is not {@code tool}, a
   * tool message of their own; callsTools: it calls tools ({@code tool_call} parts, {@code tool_calls});
   * finishReason: the message's own {@code finish_reason} (an output message's, or its choice event's).
   */
  record Msg(String role, String content, String reasoning, String toolResult, boolean callsTools,
      String finishReason) {
    Msg(String role, String content) {
      this(role, content, null, null, false, null);
    }

    Msg(String role, String content, String reasoning, String toolResult) {
      this(role, content, reasoning, toolResult, false, null);
    }

    /** The same message, saying it calls tools and why the model stopped (when it says). */
    Msg calling(boolean calls, String reason) {
      return new Msg(role, content, reasoning, toolResult, callsTools || calls, finishReason != null ? finishReason : reason);
    }
  }

  record Conversation(List<Msg> input, List<Msg> output) {}

  private GenAiMessages() {}

  /** {@link #of(OtlpSpan, boolean)} without AgentScope's {@code agentscope.function.input}. */
  static Conversation of(OtlpSpan span) {
    return of(span, false);
  }

  /**
   * @param agentScopePrompt a chat span: without {@code gen_ai.input.messages}, the prompt is read from
   *     {@code agentscope.function.input} when that holds a chat API (OpenAI-format) message list
   * @throws IllegalArgumentException when a messages attribute is not the JSON the conventions describe
   */
  static Conversation of(OtlpSpan span, boolean agentScopePrompt) {
    List<Msg> input = new ArrayList<>();
    List<Msg> output = new ArrayList<>();
    Object in = span.attributes().get("gen_ai.input.messages");
    Object out = span.attributes().get("gen_ai.output.messages");
    for (OtlpSpan.Event e : span.events()) {
      if (in == null) in = e.attributes().get("gen_ai.input.messages");
      if (out == null) out = e.attributes().get("gen_ai.output.messages");
    }
    List<Msg> prompt = in == null && agentScopePrompt ? agentScopePrompt(span) : null;
    if (in != null || out != null || prompt != null) {
      if (in != null) parseList(in, "gen_ai.input.messages", input);
      if (prompt != null) input.addAll(prompt);
      if (out != null) parseList(out, "gen_ai.output.messages", output);
      Msg system = systemInstructions(span);
      // The conventions carry the system prompt beside the history, not in it: without this the
      // trajectory of such an agent (and its SFT rows) had no system prompt at all.
      if (system != null && (input.isEmpty() || !"system".equals(input.get(0).role()))) input.add(0, system);
      return new Conversation(input, output);
    }
    for (OtlpSpan.Event e : span.events()) {
      switch (e.name()) {
        case "gen_ai.system.message" -> input.add(fromEvent("system", e.attributes()));
        case "gen_ai.user.message" -> input.add(fromEvent("user", e.attributes()));
        case "gen_ai.assistant.message" -> input.add(fromEvent("assistant", e.attributes()));
        case "gen_ai.tool.message" -> input.add(fromEvent("tool", e.attributes()));
        case "gen_ai.choice" -> output.add(choice(e.attributes()));
        default -> { }
      }
    }
    if (input.isEmpty() && output.isEmpty()) {
      // Semantic conventions up to 1.27 (Semantic Kernel, Spring AI and others still emit them): the whole
      // prompt and completion as JSON on two events. Unread, such a chat span stored no message and
      // the exporter was told all was taken.
      for (OtlpSpan.Event e : span.events()) {
        switch (e.name()) {
          case "gen_ai.content.prompt" -> promptOrCompletion(e.attributes().get("gen_ai.prompt"), "gen_ai.prompt", input);
          case "gen_ai.content.completion" ->
              promptOrCompletion(e.attributes().get("gen_ai.completion"), "gen_ai.completion", output);
          default -> { }
        }
      }
    }
    if (input.isEmpty() && output.isEmpty()) {
      indexed(span.attributes(), "gen_ai.prompt.", "", input);
      indexed(span.attributes(), "gen_ai.completion.", "", output);
    }
    if (input.isEmpty() && output.isEmpty()) {
      indexed(span.attributes(), "llm.input_messages.", "message.", input);
      indexed(span.attributes(), "llm.output_messages.", "message.", output);
    }
    return new Conversation(input, output);
  }

  /** The content part types of the chat API's (OpenAI's) messages. */
  private static final java.util.Set<String> OPENAI_PARTS = java.util.Set.of("text", "image_url", "input_audio", "file",
      "refusal");
  private static final java.util.Set<String> OPENAI_ROLES = java.util.Set.of("system", "developer", "user", "assistant",
      "tool");

  /**
   * AgentScope Python's tracing: its chat spans carry no {@code gen_ai.input.messages}; the prompt is in
   * {@code agentscope.function.input}, {@code {"args": [messages, …], "kwargs": {…}}}, whose first argument is the
   * formatter's message list in the model provider's format. Read when it is a chat API (OpenAI-format) list: each
   * message an object with a known role and a {@code content} that is a string, a list of the chat API's content
   * parts, or absent on an assistant message that calls tools. Any other shape (Anthropic's, Gemini's,
   * DashScope's content blocks), invalid JSON or a text the API would refuse: null, the span is read as before.
   */
  private static List<Msg> agentScopePrompt(OtlpSpan span) {
    if (!(span.attributes().get("agentscope.function.input") instanceof String s)) return null;
    JsonNode root;
    try {
      root = StrictDocument.read(s);
    } catch (IOException e) {
      return null;
    }
    JsonNode args = root == null ? null : root.get("args");
    if (args == null || !args.isArray() || args.isEmpty() || !args.get(0).isArray() || args.get(0).isEmpty()) return null;
    JsonNode list = args.get(0);
    if (JsonLimits.problem(list, "agentscope.function.input", JsonLimits.DEFAULT_MAX_DEPTH) != null) return null;
    List<Msg> prompt = new ArrayList<>();
    for (JsonNode m : list) {
      if (!openAiMessage(m)) return null;
      Msg msg = message(m, m.get("role").textValue());
      if (io.otl.core.StrictValues.textProblem(msg.content()) != null) return null;
      prompt.add(msg);
    }
    return prompt;
  }

  /** A chat API message: a known role, content a string or the API's content parts (absent: it calls tools). */
  private static boolean openAiMessage(JsonNode m) {
    if (!m.isObject() || !m.path("role").isTextual() || !OPENAI_ROLES.contains(m.get("role").textValue())
        || m.has("parts")) {
      return false;
    }
    JsonNode content = m.get("content");
    if (content == null || content.isNull()) {
      return "assistant".equals(m.get("role").textValue())
          && (m.path("tool_calls").isArray() || m.path("function_call").isObject());
    }
    if (content.isTextual()) return true;
    if (!content.isArray()) return false;
    for (JsonNode part : content) {
      if (!part.isObject() || !part.path("type").isTextual() || !OPENAI_PARTS.contains(part.get("type").textValue())) {
        return false;
      }
      if ("text".equals(part.get("type").textValue()) && !part.path("text").isTextual()) return false;
    }
    return true;
  }

  /**
   * {@code gen_ai.system_instructions} (span attribute, or on the inference details event): a JSON
   * array of parts as a message's {@code parts}, or plain text; null when absent or without text.
   */
  private static Msg systemInstructions(OtlpSpan span) {
    Object value = span.attributes().get("gen_ai.system_instructions");
    for (OtlpSpan.Event e : span.events()) {
      if (value == null) value = e.attributes().get("gen_ai.system_instructions");
    }
    if (value == null) return null;
    JsonNode parts;
    try {
      // strict, as the messages: a part's key sent twice kept only its last text
      parts = value instanceof String s ? StrictDocument.read(s) : MAPPER.valueToTree(value);
    } catch (IOException e) {
      parts = null;
    }
    if (parts == null || !(parts.isArray() || parts.isObject())) {
      String text = String.valueOf(value);
      return text.isBlank() ? null : new Msg("system", text);
    }
    Msg m = message(MAPPER.createObjectNode().set("parts", parts.isArray() ? parts
        : MAPPER.createArrayNode().add(parts)), "system");
    return m.content() == null ? null : m;
  }

  /**
   * Flattened messages: OpenLLMetry's {@code gen_ai.prompt.0.role} / {@code gen_ai.prompt.0.content}
   * and OpenInference's {@code llm.input_messages.0.message.role} / {@code ….message.content}.
   */
  private static void indexed(Map<String, Object> attrs, String prefix, String infix, List<Msg> into) {
    boolean output = prefix.contains("completion") || prefix.contains("output");
    for (int i = 0; attrs.containsKey(prefix + i + "." + infix + "role")
        || attrs.containsKey(prefix + i + "." + infix + "content"); i++) {
      Object role = attrs.get(prefix + i + "." + infix + "role");
      Object content = attrs.get(prefix + i + "." + infix + "content");
      String calls = prefix + i + "." + infix + "tool_calls.";
      boolean callsTools = attrs.keySet().stream().anyMatch(k -> k.startsWith(calls));
      Object reason = attrs.get(prefix + i + "." + infix + "finish_reason");
      into.add(new Msg(role == null ? (output ? "assistant" : "user") : String.valueOf(role),
          content == null ? null : String.valueOf(content)).calling(callsTools, reason instanceof String r ? r : null));
    }
  }

  /** {@code gen_ai.prompt} / {@code gen_ai.completion} of a 1.27 event: a JSON array of messages. */
  private static void promptOrCompletion(Object value, String key, List<Msg> into) {
    if (value == null) throw new IllegalArgumentException("a " + key.replace("gen_ai.", "gen_ai.content.")
        + " event without its " + key + " attribute");
    parseList(value, key, into);
  }

  private static void parseList(Object value, String key, List<Msg> into) {
    JsonNode array;
    try {
      // strict: a message key sent twice, or a second array after the first, would lose turns
      array = value instanceof String s ? StrictDocument.read(s) : MAPPER.valueToTree(value);
    } catch (IOException e) {
      throw new IllegalArgumentException(key + " is not valid JSON (" + io.otl.wire.JsonParseProblem.describe(e) + ")");
    }
    if (array == null || !array.isArray()) throw new IllegalArgumentException(key + " must be a JSON array of messages");
    // What the events API's strict JSON refuses (a NUL, a lone surrogate, NaN, nesting past the limit) refuses the
    // span, naming the attribute: the texts were stored with U+FFFD in place of a NUL or half an emoji, the
    // gateway's rule for an answer that cannot be sent again, while the exporter was told all was taken (t137).
    JsonLimits.Problem p = JsonLimits.problem(array, key, JsonLimits.DEFAULT_MAX_DEPTH);
    if (p != null) throw new IllegalArgumentException(p.message());
    for (JsonNode m : array) {
      if (!m.isObject()) throw new IllegalArgumentException(key + " must hold message objects");
      into.add(message(m, m.path("role").asText("")));
    }
  }

  /** {@code {role, parts:[{type:text, content}, …]}} or the simpler {@code {role, content}}. */
  private static Msg message(JsonNode m, String role) {
    // the conventions' finish_reason of an output message; tool calls as the chat APIs write them (tool_calls,
    // the legacy function_call) or as parts of type tool_call
    String reason = m.path("finish_reason").isTextual() ? m.get("finish_reason").textValue() : null;
    boolean calls = m.path("tool_calls").isArray() && !m.get("tool_calls").isEmpty() || m.path("function_call").isObject();
    return plainMessage(m, role).calling(calls, reason);
  }

  private static Msg plainMessage(JsonNode m, String role) {
    JsonNode content = m.get("content");
    if (content != null && content.isTextual()) return new Msg(role, content.textValue());
    // a tool's output as a JSON value (an event body's {"content":{…},"id"}): its JSON text, as a tool message holds it
    if (content != null && (content.isObject() || content.isNumber() || content.isBoolean())) {
      return new Msg(role, content.toString());
    }
    StringBuilder text = new StringBuilder();
    StringBuilder reasoning = new StringBuilder();
    // Gemini's and Anthropic's APIs answer a tool call in a user message; their instrumentations write it
    // {role: user, parts: [tool_call_response]}. Kept in the user's text, the tool's JSON was stored as
    // something the user said, and trained on as such.
    StringBuilder toolResult = new StringBuilder();
    boolean toolRole = "tool".equals(role);
    boolean callsTools = false;
    // parts of the current conventions, or the content parts of a chat API message ({type:text, text})
    JsonNode parts = content != null && content.isArray() ? content : m.path("parts");
    for (JsonNode part : parts) {
      String type = part.path("type").asText("");
      if (type.equals("tool_call")) callsTools = true;
      String piece = switch (type) {
        case "text" -> part.has("content") ? part.path("content").asText(null) : part.path("text").asText(null);
        case "reasoning" -> part.path("content").asText(null);
        // The JSON schema names the result "response"; the conventions' own example of gen_ai.input.messages,
        // and instrumentations written from it, name it "result". Read only as "response", such a tool
        // message was dropped unseen (trial t66).
        case "tool_call_response" -> render(part.hasNonNull("response") ? part.get("response") : part.get("result"));
        default -> null;
      };
      if (piece != null) {
        append(type.equals("reasoning") ? reasoning : type.equals("tool_call_response") && !toolRole ? toolResult : text,
            piece);
      }
    }
    return new Msg(role, text.length() == 0 ? null : text.toString(),
        reasoning.length() == 0 ? null : reasoning.toString(), toolResult.length() == 0 ? null : toolResult.toString(),
        callsTools, null);
  }

  private static void append(StringBuilder into, String piece) {
    if (into.length() > 0) into.append('\n');
    into.append(piece);
  }

  private static Msg fromEvent(String role, Map<String, Object> attrs) {
    Object content = attrs.get("content");
    if (content == null) {
      // The event's whole body as JSON (Azure AI Inference and Agents SDKs: {"role","content"}; a tool
      // message's {"content","id"}): stored as it came, the trajectory held the JSON text as the message.
      JsonNode body = eventBody(attrs);
      if (body != null) return message(body, body.path("role").asText(role));
      content = attrs.get("gen_ai.event.content");
    }
    return new Msg(role, content == null ? null : String.valueOf(content)).calling(attrs.get("tool_calls") != null, null);
  }

  /** {@code gen_ai.event.content} when it is a JSON object, else null (then it is the text itself). */
  private static JsonNode eventBody(Map<String, Object> attrs) {
    if (!(attrs.get("gen_ai.event.content") instanceof String s)) return null;
    try {
      JsonNode body = StrictDocument.read(s);
      return body != null && body.isObject() ? body : null;
    } catch (IOException e) {
      return null;
    }
  }

  private static Msg choice(Map<String, Object> attrs) {
    Object message = attrs.get("message");
    JsonNode body = message == null ? eventBody(attrs) : null;
    // a choice's body: {"message":{…},"finish_reason","index"}
    if (body != null) {
      JsonNode m = body.path("message").isObject() ? body.get("message") : body;
      return message(m, m.path("role").asText("assistant"))
          .calling(false, body.path("finish_reason").isTextual() ? body.get("finish_reason").textValue() : null);
    }
    if (message != null) {
      try {
        JsonNode m = message instanceof String s ? StrictDocument.read(s) : MAPPER.valueToTree(message);
        if (m != null && m.isObject()) {
          return message(m, m.path("role").asText("assistant"))
              .calling(false, attrs.get("finish_reason") instanceof String r ? r : null);
        }
      } catch (IOException e) {
        return new Msg("assistant", String.valueOf(message));
      }
    }
    return fromEvent("assistant", attrs);
  }

  private static String render(JsonNode n) {
    if (n == null || n.isNull()) return null;
    return n.isTextual() ? n.textValue() : n.toString();
  }
}
