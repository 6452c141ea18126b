package io.otl.http.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.otl.wire.JsonLimits;
import java.util.List;
import java.util.Set;

/**
 * A chat completions request as the agent sent it (its bytes, and parsed), checked against the parts of OpenAI's schema
 * the gateway relies on. Anything it does not know (sampling knobs, vendor extensions) passes
 * through to the upstream unchanged; what it refuses is refused before anything is forwarded or
 * stored.
 */
record ChatRequest(byte[] raw, ObjectNode body, ArrayNode messages, boolean stream, JsonNode tools,
    String metadataSessionId) {

  // ordered: the error lists them the same way every time
  private static final Set<String> ROLES = java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(
      java.util.List.of("system", "developer", "user", "assistant", "tool", "function")));

  static ChatRequest parse(byte[] bytes) {
    if (bytes.length == 0) throw OpenAiError.invalid(null, "the request body is empty; a JSON object is expected");
    JsonNode root;
    try {
      // Strict as the API's own bodies (docs/http-edge.md): what the gateway records is what it
      // parsed, so a second object or a key sent twice would be stored unlike what the model read.
      root = io.otl.wire.StrictDocument.read(bytes);
    } catch (java.io.IOException e) {
      throw OpenAiError.invalid(null, "the request body is not valid JSON: " + io.otl.wire.JsonParseProblem.describe(e));
    }
    if (root == null || !root.isObject()) throw OpenAiError.invalid(null, "the request body must be a JSON object");
    ObjectNode body = (ObjectNode) root;
    refuseUnstorable(body);
    JsonNode model = body.get("model");
    if (model == null || !model.isTextual() || model.asText().isBlank()) {
      throw OpenAiError.invalid("model", "model is required: a non-empty string (the agent's logical model, "
          + "e.g. \"default\")");
    }
    JsonNode messages = body.get("messages");
    if (messages == null || messages.isNull()) {
      throw OpenAiError.invalid("messages", "messages is required: a non-empty array of chat messages");
    }
    if (!messages.isArray() || messages.isEmpty()) {
      throw OpenAiError.invalid("messages", "messages must be a non-empty array of chat messages, not "
          + (messages.isArray() ? "an empty array" : "a JSON " + messages.getNodeType().name().toLowerCase(java.util.Locale.ROOT)));
    }
    for (int i = 0; i < messages.size(); i++) checkMessage(messages.get(i), "messages[" + i + "]");
    boolean stream = bool(body, "stream");
    bool(body, "logprobs");
    JsonNode n = body.get("n");
    if (n != null && !n.isNull() && (!n.canConvertToInt() || !n.isIntegralNumber() || n.asInt() < 1 || n.asInt() > 128)) {
      throw OpenAiError.invalid("n", "n must be an integer from 1 to 128");
    }
    number(body, "temperature", 0, 2);
    number(body, "top_p", 0, 1);
    // max_completion_tokens is OpenAI's name since max_tokens was deprecated (the SDKs' maxCompletionTokens):
    // checked alike, or a 0 or -1 went to the model server unchecked (the simulator answered it; trial t65).
    // Beyond a long, asLong() wraps: -9223372036854775809 read as Long.MAX_VALUE and passed (trial t147).
    for (String field : List.of("max_tokens", "max_completion_tokens")) {
      JsonNode maxTokens = body.get(field);
      if (maxTokens != null && !maxTokens.isNull()
          && (!maxTokens.isIntegralNumber() || !maxTokens.canConvertToLong() || maxTokens.asLong() < 1)) {
        throw OpenAiError.invalid(field, field + " must be a positive integer");
      }
    }
    JsonNode tools = body.get("tools");
    if (tools != null && !tools.isNull()) checkTools(tools);
    JsonNode choice = body.get("tool_choice");
    if (choice != null && !choice.isNull()) {
      boolean ok = choice.isTextual() ? Set.of("none", "auto", "required").contains(choice.asText())
          : choice.isObject() && (choice.path("function").path("name").isTextual()
              || "custom".equals(choice.path("type").asText()) && choice.path("custom").path("name").isTextual()
              || "allowed_tools".equals(choice.path("type").asText()) && allowedTools(choice.path("allowed_tools")));
      if (!ok) {
        throw OpenAiError.invalid("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\", "
            + "{\"type\":\"function\",\"function\":{\"name\":…}}, {\"type\":\"custom\",\"custom\":{\"name\":…}} or "
            + "{\"type\":\"allowed_tools\",\"allowed_tools\":{\"mode\":\"auto\"|\"required\",\"tools\":[…]}}");
      }
      checkChoiceHasTools(choice, tools);
    }
    JsonNode streamOptions = body.get("stream_options");
    if (streamOptions != null && !streamOptions.isNull() && !streamOptions.isObject()) {
      throw OpenAiError.invalid("stream_options", "stream_options must be an object");
    }
    JsonNode includeUsage = streamOptions == null ? null : streamOptions.get("include_usage");
    if (includeUsage != null && !includeUsage.isNull() && !includeUsage.isBoolean()) {
      throw OpenAiError.invalid("stream_options.include_usage", "stream_options.include_usage must be a boolean");
    }
    if (streamOptions != null && streamOptions.isObject() && !stream) {
      // As OpenAI and vLLM refuse it: the simulator (v0 on the embedded default) took it, and an agent
      // tried against it met the 400 only in production.
      throw OpenAiError.invalid("stream_options", "stream_options is only allowed when stream is true");
    }
    JsonNode tops = body.get("top_logprobs");
    // Read exactly: asLong() wraps 2^64 to 0 and cuts 0.5 to 0, which then passed without logprobs (review t150).
    java.math.BigDecimal top = tops != null && tops.isNumber() ? tops.decimalValue() : null;
    if (top != null && top.stripTrailingZeros().scale() > 0) {
      throw OpenAiError.invalid("top_logprobs", "top_logprobs must be an integer");
    }
    if (top != null && top.compareTo(java.math.BigDecimal.ONE.negate()) < 0) {
      throw OpenAiError.invalid("top_logprobs", "top_logprobs must be -1 or more");
    }
    if (top != null && top.signum() != 0 && !body.path("logprobs").asBoolean(false)) {
      // As OpenAI and vLLM refuse it: the simulator answered it without logprobs, and the turn was stored.
      throw OpenAiError.invalid("top_logprobs", "top_logprobs is only allowed when logprobs is true");
    }
    String sessionId = null;
    JsonNode metadata = body.get("metadata");
    if (metadata != null && !metadata.isNull()) {
      if (!metadata.isObject()) throw OpenAiError.invalid("metadata", "metadata must be an object of strings");
      var fields = metadata.fields();
      while (fields.hasNext()) {
        var f = fields.next();
        if (!f.getValue().isTextual()) {
          throw OpenAiError.invalid("metadata." + io.otl.wire.JsonLimits.shownKey(f.getKey()), "metadata values must be strings");
        }
      }
      JsonNode s = metadata.get("session_id");
      if (s != null) sessionId = s.asText();
    }
    return new ChatRequest(bytes, body, (ArrayNode) messages, stream,
        tools == null || tools.isNull() ? legacyFunctions(body.get("functions")) : tools, sessionId);
  }

  /**
   * NUL characters, lone surrogates and numbers past a double are refused before anything is
   * forwarded, as on the events API: stored, they went into the SFT export as sent (a {@code \u0000}
   * in a training file). Nesting keeps Jackson's own limit here: tool schemas may be deep.
   */
  private static void refuseUnstorable(ObjectNode body) {
    var fields = body.fields();
    while (fields.hasNext()) {
      var f = fields.next();
      JsonLimits.Problem key = JsonLimits.problem(TextNode.valueOf(f.getKey()), "a key of the body", Integer.MAX_VALUE);
      if (key != null) throw OpenAiError.invalid(null, key.message());
      String name = JsonLimits.shownKey(f.getKey());
      JsonLimits.Problem p = JsonLimits.problem(f.getValue(), name, Integer.MAX_VALUE);
      if (p != null) throw OpenAiError.invalid(name, p.message());
    }
  }

  private static void checkMessage(JsonNode m, String where) {
    if (!m.isObject()) throw OpenAiError.invalid(where, where + " must be an object with role and content");
    JsonNode role = m.get("role");
    if (role == null || !role.isTextual() || !ROLES.contains(role.asText())) {
      throw OpenAiError.invalid(where + ".role", where + ".role must be one of " + ROLES);
    }
    // The calls first: an assistant turn whose tool_calls is malformed ("x", []) and has no content was told
    // that content is required unless it has tool_calls, which it had sent (trial-gw).
    JsonNode calls = m.get("tool_calls");
    if (calls != null && !calls.isNull()) {
      if (!calls.isArray() || calls.isEmpty()) {
        throw OpenAiError.invalid(where + ".tool_calls", "tool_calls must be a non-empty array (leave it out when "
            + "there are no calls)");
      }
      for (int i = 0; i < calls.size(); i++) {
        JsonNode c = calls.get(i);
        if (!c.path("id").isTextual() || callName(c) == null) {
          throw OpenAiError.invalid(where + ".tool_calls[" + i + "]",
              "a tool call needs id and function.name (custom.name for a custom tool's call)");
        }
      }
    }
    // The legacy functions API's call as a tool call is checked: it needs its name (without one it was stored as a
    // call of a tool "unknown"; OpenAI refuses it), and "x" was told content is required unless it had a function_call.
    JsonNode functionCall = m.get("function_call");
    if (functionCall != null && !functionCall.isNull()
        && (!functionCall.isObject() || !functionCall.path("name").isTextual())) {
      throw OpenAiError.invalid(where + ".function_call", "function_call must be an object with name and arguments "
          + "(leave it out when there is no call)");
    }
    JsonNode content = m.get("content");
    // An empty tool_calls array is refused as OpenAI refuses it ("too short"): it would store an empty turn.
    // What an assistant turn may say instead of content, as OpenAI takes it back: its calls, a refusal (the
    // SDKs hand a refused answer back with content null), or an audio answer by its id.
    boolean saysSomethingElse = !m.path("tool_calls").isEmpty() || m.path("function_call").isObject()
        || m.path("refusal").isTextual() || m.path("audio").path("id").isTextual();
    if (content == null || content.isNull()) {
      if (!"assistant".equals(role.asText()) || !saysSomethingElse) {
        throw OpenAiError.invalid(where + ".content", where + ".content is required (a string or an array of "
            + "content parts); only an assistant message with tool_calls, function_call, refusal or audio may omit it");
      }
    } else if (content.isArray()) {
      for (int i = 0; i < content.size(); i++) {
        JsonNode part = content.get(i);
        if (!part.isObject() || !part.path("type").isTextual()) {
          throw OpenAiError.invalid(where + ".content[" + i + "]", "a content part must be an object with a type");
        }
      }
    } else if (!content.isTextual()) {
      throw OpenAiError.invalid(where + ".content", where + ".content must be a string or an array of content parts");
    }
    if ("tool".equals(role.asText()) && !m.path("tool_call_id").isTextual()) {
      throw OpenAiError.invalid(where + ".tool_call_id", "a tool message needs tool_call_id (a string)");
    }
  }

  /**
   * A tool choice other than {@code "none"} needs the tools it chooses from, and a named one a tool
   * of that name: vLLM and OpenAI refuse it with a 400, which reached the agent as the gateway's 502
   * after it was forwarded (and a lenient model server answered as if no tool were asked for).
   */
  private static void checkChoiceHasTools(JsonNode choice, JsonNode tools) {
    if (choice.isTextual() && choice.asText().equals("none")) return;
    // "auto" over an empty list is vLLM's "no tool", as an agent with no tools registered sends it.
    boolean auto = choice.isTextual() && choice.asText().equals("auto");
    boolean offered = tools != null && !tools.isNull() && (auto || !tools.isEmpty());
    String mode = choice.isTextual() ? "\"" + choice.asText() + "\"" : choice.path("type").asText() + " choice";
    boolean allowedList = choice.isObject() && "allowed_tools".equals(choice.path("type").asText());
    if (!offered && !allowedList) {
      throw OpenAiError.invalid("tool_choice", "tool_choice " + mode + " needs tools, and the request offers none:"
          + " send tools, or leave tool_choice out");
    }
    if (choice.isObject() && !allowedList) {
      String type = choice.path("type").asText("function");
      String name = "custom".equals(type) ? choice.path("custom").path("name").asText()
          : choice.path("function").path("name").asText();
      for (JsonNode t : tools) {
        if (name.equals(t.path(t.path("type").asText()).path("name").asText())) return;
      }
      throw OpenAiError.invalid("tool_choice", "tool_choice names the tool " + io.otl.wire.JsonLimits.shownKey(name)
          + ", which is not among the request's tools");
    }
  }

  private static void checkTools(JsonNode tools) {
    if (!tools.isArray()) throw OpenAiError.invalid("tools", "tools must be an array of function or custom tools");
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      // OpenAI's two tool types: a function, and a custom tool (free-text input, optionally a grammar)
      String type = t.path("type").asText();
      JsonNode name = t.path(type).path("name");
      if (!t.isObject() || !Set.of("function", "custom").contains(type) || !name.isTextual() || name.asText().isBlank()) {
        throw OpenAiError.invalid("tools[" + i + "]",
            "tools[" + i + "] must be {\"type\":\"function\",\"function\":{\"name\":…,\"parameters\":{…}}} or "
                + "{\"type\":\"custom\",\"custom\":{\"name\":…}}");
      }
      // OpenAI and vLLM refuse a schema that is not an object; a lenient server (the simulator) took it, and the
      // session stored it as the tool's schema, which the SFT export hands to chat templates as it is.
      JsonNode parameters = t.path(type).get("parameters");
      if ("function".equals(type) && parameters != null && !parameters.isNull() && !parameters.isObject()) {
        String where = "tools[" + i + "].function.parameters";
        throw OpenAiError.invalid(where, where + " must be a JSON Schema object (e.g. {\"type\":\"object\","
            + "\"properties\":{…}}), not a JSON " + parameters.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
      }
    }
  }

  /**
   * The legacy {@code functions} as the function tools they are, for the session's tool schemas (the
   * export's tool list); null when there are none. What is forwarded is the body as sent.
   */
  private static JsonNode legacyFunctions(JsonNode functions) {
    if (functions == null || !functions.isArray()) return null;
    ArrayNode tools = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
    for (JsonNode f : functions) {
      if (f.path("name").isTextual()) tools.addObject().put("type", "function").set("function", f);
    }
    return tools.isEmpty() ? null : tools;
  }

  /** {@code tool_choice.allowed_tools}: a mode and the tools the model may pick from. */
  private static boolean allowedTools(JsonNode allowed) {
    return Set.of("auto", "required").contains(allowed.path("mode").asText()) && allowed.path("tools").isArray();
  }

  /**
   * The tool a call calls: {@code function.name}, or {@code custom.name} for a call of a custom tool
   * (OpenAI's {@code {"type":"custom","custom":{"name","input"}}}); null when it names none.
   */
  static String callName(JsonNode call) {
    JsonNode name = "custom".equals(call.path("type").asText()) ? call.path("custom").path("name")
        : call.path("function").path("name");
    return name.isTextual() ? name.asText() : null;
  }

  /** What a call passes its tool: a function's {@code arguments}, a custom tool's {@code input} text. */
  static JsonNode callInput(JsonNode call) {
    return "custom".equals(call.path("type").asText()) ? call.path("custom").get("input")
        : call.path("function").get("arguments");
  }

  private static boolean bool(ObjectNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) return false;
    if (!v.isBoolean()) throw OpenAiError.invalid(field, field + " must be a boolean");
    return v.asBoolean();
  }

  private static void number(ObjectNode body, String field, double min, double max) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) return;
    if (!v.isNumber() || v.asDouble() < min || v.asDouble() > max) {
      throw OpenAiError.invalid(field, field + " must be a number from " + min + " to " + max);
    }
  }
}
