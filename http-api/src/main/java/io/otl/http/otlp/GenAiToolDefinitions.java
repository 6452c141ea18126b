package io.otl.http.otlp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.http.gateway.TextCut;
import io.otl.http.gateway.ToolSets;
import io.otl.wire.StrictDocument;
import java.io.IOException;
import java.time.Instant;

/**
 * A chat span's {@code gen_ai.tool.definitions} (the tools offered to the model) as the session's
 * metadata {@code tools}, in the OpenAI form the gateway and the AgentScope hook store and the SFT
 * export reads. Unread, an OpenTelemetry session's SFT line had only the tools derived from the calls
 * made (no description, no required fields, none of the tools offered but not called), where the same
 * conversation through the gateway had the agent's own schemas.
 */
final class GenAiToolDefinitions {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  static final String PREFIX = "otlp:tools:";

  private GenAiToolDefinitions() {}

  /**
   * The start that carries the span's function tools, its id a hash of them as stored (a set sent again
   * with every chat span is a duplicate; a changed set replaces the stored one, as agents resend the whole
   * list; {@link ToolSets}, as the gateway records them); null when the span has none.
   */
  static SessionInput start(OtlpSpan span, Desensitizer d, TextCut cut, Instant at) {
    Object value = span.attributes().get("gen_ai.tool.definitions");
    for (OtlpSpan.Event e : span.events()) {
      if (value == null) value = e.attributes().get("gen_ai.tool.definitions");
    }
    if (value == null) return null;
    ArrayNode tools = openAiForm(value);
    if (tools.isEmpty()) return null;
    String text = tools.toString();
    return ToolSets.start(ToolSets.id(PREFIX, d, text), text, cut, at);
  }

  /**
   * The conventions' entries ({@code {"type":"function","name","description","parameters"}}) nested as
   * OpenAI's ({@code {"type":"function","function":{…}}}); entries already nested are kept; anything
   * else (another tool type, no name, text that is not JSON) is left out.
   */
  static ArrayNode openAiForm(Object value) {
    ArrayNode out = MAPPER.createArrayNode();
    JsonNode list;
    try {
      // strict: a schema's key sent twice would be stored unlike what the model was offered
      list = value instanceof String s ? StrictDocument.read(s) : MAPPER.valueToTree(value);
    } catch (IOException | IllegalArgumentException e) {
      return out;
    }
    if (list == null || !list.isArray()) return out;
    for (JsonNode t : list) {
      if (!t.isObject() || t.has("type") && !"function".equals(t.path("type").asText())) continue;
      JsonNode fn = t.path("function").isObject() ? t.get("function") : t;
      if (!fn.path("name").isTextual() || fn.path("name").asText().isBlank()) continue;
      ObjectNode nested = MAPPER.createObjectNode();
      nested.put("type", "function");
      ObjectNode f = nested.putObject("function");
      f.put("name", fn.get("name").asText());
      if (fn.path("description").isTextual()) f.put("description", fn.get("description").asText());
      if (fn.path("parameters").isObject()) f.set("parameters", fn.get("parameters"));
      out.add(nested);
    }
    return out;
  }
}
