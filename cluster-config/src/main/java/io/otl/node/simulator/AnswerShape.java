package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;

/**
 * What a request asks of the answer's form, as a model server honours it: {@code response_format}
 * (JSON text, or JSON matching the given schema) and a token limit ({@code max_completion_tokens},
 * else {@code max_tokens}; cut there, finish reason {@code length}). The simulator ignored both: on
 * the embedded default an agent using structured outputs (the Python client's {@code parse}) failed
 * to read the answer, and one testing its handling of a cut answer never got one (trial t79).
 */
final class AnswerShape {
  /** The simulator's token: about four characters, as its usage counts them. */
  static final int CHARS_PER_TOKEN = 4;
  private static final int MAX_SCHEMA_DEPTH = 32;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private AnswerShape() {}

  /** Whether the request asks for JSON ({@code json_object} or {@code json_schema}). */
  static boolean asksForJson(JsonNode request) {
    String type = request.path("response_format").path("type").asText("text");
    return type.equals("json_object") || type.equals("json_schema");
  }

  /** The answer's text in the requested form: {@code text} itself when none is asked for. */
  static String formatted(JsonNode request, String text) {
    JsonNode format = request.path("response_format");
    return switch (format.path("type").asText("text")) {
      case "json_object" -> MAPPER.createObjectNode().put("answer", text).toString();
      case "json_schema" -> {
        JsonNode schema = format.path("json_schema").path("schema");
        yield schema.isObject() ? valueOf(schema, schema, text, 0).toString()
            : MAPPER.createObjectNode().put("answer", text).toString();
      }
      default -> text;
    };
  }

  /** The request's token limit, or -1 when it sets none. */
  static int tokenLimit(JsonNode request) {
    JsonNode limit = request.path("max_completion_tokens");
    if (!limit.canConvertToInt()) limit = request.path("max_tokens");
    return limit.isIntegralNumber() && limit.canConvertToInt() && limit.asInt() > 0 ? limit.asInt() : -1;
  }

  /** {@code text} cut to {@code limit} tokens; the same text when it fits (or no limit is set). */
  static String cut(String text, int limit) {
    if (limit < 0 || text.length() <= (long) limit * CHARS_PER_TOKEN) return text;
    int end = limit * CHARS_PER_TOKEN;
    if (Character.isHighSurrogate(text.charAt(end - 1))) end--;
    return text.substring(0, end);
  }

  /**
   * A value of one tool parameter's schema ({@code root}: the tool's {@code parameters}, for its {@code $ref}s),
   * the user's text in its strings: an object parameter gets an object (AgentScope's structured output,
   * {@code generate_response}'s {@code response}, refused the user's text in its place: trial t123).
   */
  static JsonNode parameterValue(JsonNode schema, JsonNode root, String text) {
    return valueOf(schema, root, text, 0);
  }

  /**
   * A value the schema accepts, the answer's text in its strings: an object has every property (strict
   * schemas require them all), an array is empty, a number 0, an enum or const its first value; a
   * {@code $ref} into the schema is followed, a union takes its first branch.
   */
  private static JsonNode valueOf(JsonNode schema, JsonNode root, String text, int depth) {
    if (depth > MAX_SCHEMA_DEPTH) return MAPPER.nullNode();
    if (schema.path("$ref").isTextual()) return valueOf(resolve(root, schema.get("$ref").asText()), root, text, depth + 1);
    if (schema.has("const")) return schema.get("const");
    if (schema.path("enum").isArray() && !schema.get("enum").isEmpty()) return schema.get("enum").get(0);
    for (String union : new String[] {"anyOf", "oneOf", "allOf"}) {
      if (schema.path(union).isArray() && !schema.get(union).isEmpty()) {
        return valueOf(schema.get(union).get(0), root, text, depth + 1);
      }
    }
    JsonNode type = schema.path("type");
    String t = type.isArray() && !type.isEmpty() ? type.get(0).asText() : type.asText(schema.has("properties") ? "object" : "string");
    return switch (t) {
      case "object" -> {
        ObjectNode o = MAPPER.createObjectNode();
        Iterator<Map.Entry<String, JsonNode>> it = schema.path("properties").fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> p = it.next();
          o.set(p.getKey(), valueOf(p.getValue(), root, text, depth + 1));
        }
        yield o;
      }
      case "array" -> MAPPER.createArrayNode();
      case "integer", "number" -> MAPPER.getNodeFactory().numberNode(0);
      case "boolean" -> MAPPER.getNodeFactory().booleanNode(false);
      case "null" -> MAPPER.nullNode();
      default -> MAPPER.getNodeFactory().textNode(text);
    };
  }

  /** A local reference ({@code #/$defs/Name}); an empty schema (a string) for anything else. */
  private static JsonNode resolve(JsonNode root, String ref) {
    if (!ref.startsWith("#")) return MAPPER.createObjectNode();
    JsonNode target = root.at(ref.substring(1));
    return target.isMissingNode() ? MAPPER.createObjectNode() : target;
  }
}
