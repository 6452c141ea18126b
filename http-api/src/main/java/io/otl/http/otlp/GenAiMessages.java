package io.otl.http.otlp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * {@code gen_ai.assistant.message}, {@code gen_ai.tool.message}, {@code gen_ai.choice}), and
 * the indexed attributes of OpenLLMetry ({@code gen_ai.prompt.N.*}, {@code gen_ai.completion.N.*}) and
 * OpenInference ({@code llm.input_messages.N.message.*}, {@code llm.output_messages.N.message.*}).
 */
final class GenAiMessages {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * content null: the message has no text (e.g. an assistant turn that only calls tools); reasoning:
   * the text of its {@code reasoning} parts, a step of the trajectory rather than part of the answer.
   */
  record Msg(String role, String content, String reasoning) {
    Msg(String role, String content) {
      this(role, content, null);
    }
  }

  record Conversation(List<Msg> input, List<Msg> output) {}

  private GenAiMessages() {}

  /** @throws IllegalArgumentException when a messages attribute is not the JSON the conventions describe */
  static Conversation of(OtlpSpan span) {
    List<Msg> input = new ArrayList<>();
    List<Msg> output = new ArrayList<>();
    Object in = span.attributes().get("gen_ai.input.messages");
    Object out = span.attributes().get("gen_ai.output.messages");
    for (OtlpSpan.Event e : span.events()) {
      if (in == null) in = e.attributes().get("gen_ai.input.messages");
      if (out == null) out = e.attributes().get("gen_ai.output.messages");
    }
    if (in != null || out != null) {
      if (in != null) parseList(in, "gen_ai.input.messages", input);
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
      indexed(span.attributes(), "gen_ai.prompt.", "", input);
      indexed(span.attributes(), "gen_ai.completion.", "", output);
    }
    if (input.isEmpty() && output.isEmpty()) {
      indexed(span.attributes(), "llm.input_messages.", "message.", input);
      indexed(span.attributes(), "llm.output_messages.", "message.", output);
    }
    return new Conversation(input, output);
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
      parts = value instanceof String s ? MAPPER.readTree(s) : MAPPER.valueToTree(value);
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
      into.add(new Msg(role == null ? (output ? "assistant" : "user") : String.valueOf(role),
          content == null ? null : String.valueOf(content)));
    }
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
    for (JsonNode m : array) {
      if (!m.isObject()) throw new IllegalArgumentException(key + " must hold message objects");
      into.add(message(m, m.path("role").asText("")));
    }
  }

  /** {@code {role, parts:[{type:text, content}, …]}} or the simpler {@code {role, content}}. */
  private static Msg message(JsonNode m, String role) {
    JsonNode content = m.get("content");
    if (content != null && content.isTextual()) return new Msg(role, content.textValue());
    StringBuilder text = new StringBuilder();
    StringBuilder reasoning = new StringBuilder();
    for (JsonNode part : m.path("parts")) {
      String type = part.path("type").asText("");
      String piece = switch (type) {
        case "text", "reasoning" -> part.path("content").asText(null);
        case "tool_call_response" -> render(part.get("response"));
        default -> null;
      };
      if (piece != null) append(type.equals("reasoning") ? reasoning : text, piece);
    }
    return new Msg(role, text.length() == 0 ? null : text.toString(),
        reasoning.length() == 0 ? null : reasoning.toString());
  }

  private static void append(StringBuilder into, String piece) {
    if (into.length() > 0) into.append('\n');
    into.append(piece);
  }

  private static Msg fromEvent(String role, Map<String, Object> attrs) {
    Object content = attrs.get("content");
    if (content == null) content = attrs.get("gen_ai.event.content");
    return new Msg(role, content == null ? null : String.valueOf(content));
  }

  private static Msg choice(Map<String, Object> attrs) {
    Object message = attrs.get("message");
    if (message != null) {
      try {
        JsonNode m = message instanceof String s ? MAPPER.readTree(s) : MAPPER.valueToTree(message);
        if (m != null && m.isObject()) return message(m, m.path("role").asText("assistant"));
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
