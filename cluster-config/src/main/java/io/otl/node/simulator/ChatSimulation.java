package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The chat completions face of the simulator, in OpenAI's and vLLM's shapes: non-streaming and
 * {@code stream: true} (server-sent events), tool calls, {@code n}, {@code logprobs}, the request's
 * {@code model} echoed. Answers are deterministic (only the response id varies), so tests can
 * assert on them.
 *
 * <p>Every call stays one Trinity experience: the response id comes from {@link ProxySimulation},
 * which records it as a msg_id a later {@code POST /feedback} may reward.
 *
 * <p>Tool calls: when the request offers {@code tools} (and {@code tool_choice} is not {@code
 * none}), the simulator calls the first tool (or the named one; of an {@code allowed_tools} choice, the
 * first it lists) if the last message is the user's asking for a tool (the word "tool", or the tool's
 * name), or whatever the last message is when {@code tool_choice} forces it ({@code required}, a named tool). Request fields {@code simulator_chunk_delay_ms} (between stream chunks) and {@code
 * simulator_delay_ms} (before the response) slow it down, so tests can disconnect mid-stream or
 * hit a timeout; a real server ignores such fields.
 */
final class ChatSimulation {

  private final ObjectMapper mapper;
  private final ProxySimulation proxy;
  private final ModelServerSimulation models;

  ChatSimulation(ObjectMapper mapper, ProxySimulation proxy, ModelServerSimulation models) {
    this.mapper = mapper;
    this.proxy = proxy;
    this.models = models;
  }

  /** A request the simulator refuses, with vLLM's status, error type and text. */
  record Refusal(int status, String type, String message, String param) {
    Refusal(String message, String param) {
      this(400, "BadRequestError", message, param);
    }
  }

  /**
   * vLLM's check of {@code top_logprobs} (its request model's): -1 or more, and other than 0 only with
   * {@code logprobs: true}, as OpenAI requires too. The model face answered it without any logprobs.
   */
  private static Optional<Refusal> topLogprobsRefusal(JsonNode request) {
    JsonNode tops = request.path("top_logprobs");
    if (!tops.isNumber()) return Optional.empty();
    // exactly: asLong() wraps 2^64 to 0 and cuts 0.5 to 0 (review t150); 1e400 reads as infinity (review t152)
    if (tops.isFloatingPointNumber() && !Double.isFinite(tops.doubleValue())) {
      return Optional.of(new Refusal("`top_logprobs` should be a valid integer.", "top_logprobs"));
    }
    java.math.BigDecimal top = tops.decimalValue();
    if (top.stripTrailingZeros().scale() > 0) {
      return Optional.of(new Refusal("`top_logprobs` should be a valid integer.", "top_logprobs"));
    }
    if (top.compareTo(java.math.BigDecimal.ONE.negate()) < 0) {
      return Optional.of(new Refusal("`top_logprobs` must be a positive value or -1.", "top_logprobs"));
    }
    if (top.signum() != 0 && !request.path("logprobs").asBoolean(false)) {
      return Optional.of(new Refusal("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs"));
    }
    return Optional.empty();
  }

  /** The answer, ready to be sent whole or as chunks. */
  record Answer(ObjectNode completion, boolean stream, boolean includeUsage, Duration chunkDelay, Duration delay) {}

  /** Validates like vLLM's request model; returns the answer or why the request is refused. */
  Object answer(JsonNode request) {
    JsonNode messages = request.path("messages");
    if (!messages.isArray() || messages.isEmpty()) {
      return new Refusal("'messages' must be a non-empty list of chat messages", "messages");
    }
    JsonNode nNode = request.path("n");
    int n = nNode.isMissingNode() || nNode.isNull() ? 1 : nNode.asInt(0);
    if (!nNode.isMissingNode() && !nNode.isNull() && (!nNode.isIntegralNumber() || n < 1 || n > 16)) {
      return new Refusal("n must be an integer from 1 to 16", "n");
    }
    JsonNode toolChoice = request.path("tool_choice");
    if (!toolChoice.isMissingNode() && !toolChoice.isNull() && !"none".equals(toolChoice.asText())
        && (request.path("tools").isMissingNode() || request.path("tools").isNull())) {
      return new Refusal("When using `tool_choice`, `tools` must be set.", "tool_choice");
    }
    JsonNode streamOptions = request.path("stream_options");
    if (streamOptions.isObject() && !request.path("stream").asBoolean(false)) {
      return new Refusal("Stream options can only be defined when `stream=True`.", "stream_options");
    }
    Optional<Refusal> tops = topLogprobsRefusal(request);
    if (tops.isPresent()) return tops.get();
    String requested = request.path("model").asText("");
    if (models.wasUnloaded(requested)) {
      // vLLM's answer for a model it does not serve: what an agent meets after a restart of vLLM.
      return new Refusal(404, "NotFoundError", "The model `" + requested + "` does not exist.", "model");
    }
    Optional<ObjectNode> base = proxy.chatCompletion(request);
    if (base.isEmpty()) return new Refusal("'messages' must be a non-empty list of chat messages", "messages");
    ObjectNode completion = base.get();
    ObjectNode first = (ObjectNode) completion.path("choices").get(0);
    String content = first.path("message").path("content").asText();
    String responseId = completion.path("id").asText();
    Optional<ObjectNode> toolCall = toolCall(request);
    // A worse adapter (its quality set through /simulator/models/<name>/quality) fails some tasks, and is slower.
    String model = request.path("model").asText("");
    if (models.isLoadedAdapter(model)) {
      // "model version N" is the Trinity proxy's counter: a trained version's answer read "model version 0"
      // beside the v1 the gateway recorded for it. The adapter's name says who answered.
      content = ProxySimulation.replyFrom("LoRA adapter " + model, content);
    }
    ModelServerSimulation.Quality quality = models.qualityOf(model);
    models.served(model);
    if (models.failsTask(model, messages.toString())) {
      content = ModelServerSimulation.FAILED_ANSWER;
      toolCall = Optional.empty();
    }
    boolean logprobs = request.path("logprobs").asBoolean(false);
    boolean structured = AnswerShape.asksForJson(request);
    int tokenLimit = AnswerShape.tokenLimit(request);
    int shapedTokens = 0;
    ArrayNode choices = completion.putArray("choices");
    for (int i = 0; i < n; i++) {
      String whole = AnswerShape.formatted(request, n == 1 ? content : content + " (choice " + i + ")");
      String text = AnswerShape.cut(whole, tokenLimit);
      shapedTokens += Math.max(1, text.length() / AnswerShape.CHARS_PER_TOKEN);
      ObjectNode choice = choices.addObject();
      choice.put("index", i);
      ObjectNode message = choice.putObject("message").put("role", "assistant");
      if (toolCall.isPresent()) {
        message.putNull("content");
        // Each choice's call has an id of its own, as OpenAI and vLLM give them: an agent answers a
        // call by its id, so two choices sharing one would make their tool results ambiguous.
        ObjectNode call = mapper.createObjectNode().put("id", callId(responseId, i));
        call.setAll(toolCall.get().deepCopy());
        message.putArray("tool_calls").add(call);
        choice.putNull("logprobs");
        choice.put("finish_reason", "tool_calls");
      } else {
        message.put("content", text);
        if (logprobs) {
          choice.set("logprobs", logprobs(text, request.path("top_logprobs").asInt(0)));
        } else {
          choice.putNull("logprobs");
        }
        choice.put("finish_reason", text.length() < whole.length() ? "length" : "stop");
      }
    }
    boolean shaped = toolCall.isEmpty() && (structured || tokenLimit > 0);
    int completionTokens = shaped ? shapedTokens : completion.path("usage").path("completion_tokens").asInt() * n;
    int promptTokens = completion.path("usage").path("prompt_tokens").asInt();
    ((ObjectNode) completion.path("usage")).put("completion_tokens", completionTokens)
        .put("total_tokens", promptTokens + completionTokens);
    boolean stream = request.path("stream").asBoolean(false);
    boolean includeUsage = request.path("stream_options").path("include_usage").asBoolean(false);
    long chunkDelay = Math.max(0, Math.min(5_000, request.path("simulator_chunk_delay_ms").asLong(0)));
    long delay = Math.max(0, Math.min(60_000, request.path("simulator_delay_ms").asLong(0)))
        + quality.addedLatencyMs();
    return new Answer(completion, stream, includeUsage, Duration.ofMillis(chunkDelay), Duration.ofMillis(delay));
  }

  /**
   * The answer as OpenAI streams it: one {@code data:} event per chunk, then {@code [DONE]}. With
   * {@code n} > 1 the choices' chunks take turns, as OpenAI's and vLLM's do (they generate the choices
   * together): choice 0 streamed whole before choice 1 began, the Java SDK's {@code
   * ChatCompletionAccumulator} took choice 0's finish for the end of the answer and threw on choice
   * 1's first chunk (trial t65).
   */
  List<String> sseEvents(Answer answer) {
    ObjectNode c = answer.completion();
    List<List<String>> perChoice = new ArrayList<>();
    for (JsonNode choice : c.path("choices")) perChoice.add(choiceEvents(c, choice));
    List<String> events = new ArrayList<>();
    while (perChoice.stream().anyMatch(e -> !e.isEmpty())) {
      for (List<String> e : perChoice) {
        if (!e.isEmpty()) events.add(e.remove(0));
      }
    }
    if (answer.includeUsage()) {
      ObjectNode usage = header(c);
      usage.putArray("choices");
      usage.set("usage", c.path("usage").deepCopy());
      events.add(write(usage));
    }
    events.add("[DONE]");
    return events;
  }

  /** One choice's chunks: its role, its content word by word (or its tool calls), its finish reason. */
  private List<String> choiceEvents(ObjectNode c, JsonNode choice) {
    List<String> events = new ArrayList<>();
    int index = choice.path("index").asInt();
    JsonNode message = choice.path("message");
    events.add(chunk(c, index, mapper.createObjectNode().put("role", "assistant").put("content", ""), null, null));
    if (message.hasNonNull("tool_calls")) {
      ArrayNode calls = mapper.createArrayNode();
      for (JsonNode call : message.path("tool_calls")) {
        ObjectNode delta = calls.addObject().put("index", calls.size() - 1);
        // A custom tool's call streams in its own shape, as the message holds it
        String type = call.path("type").asText("function");
        delta.put("id", call.path("id").asText()).put("type", type);
        delta.set(type, call.path(type).deepCopy());
      }
      ObjectNode delta = mapper.createObjectNode();
      delta.set("tool_calls", calls);
      events.add(chunk(c, index, delta, null, null));
    } else {
      JsonNode lp = choice.path("logprobs").path("content");
      String[] words = message.path("content").asText().split("(?<= )");
      for (int w = 0; w < words.length; w++) {
        ObjectNode logprobs = null;
        if (lp.isArray() && w < lp.size()) {
          logprobs = mapper.createObjectNode();
          logprobs.putArray("content").add(lp.get(w).deepCopy());
        }
        events.add(chunk(c, index, mapper.createObjectNode().put("content", words[w]), logprobs, null));
      }
    }
    events.add(chunk(c, index, mapper.createObjectNode(), null, choice.path("finish_reason").asText()));
    return events;
  }

  private String chunk(ObjectNode c, int index, ObjectNode delta, ObjectNode logprobs, String finishReason) {
    ObjectNode chunk = header(c);
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", index);
    choice.set("delta", delta);
    if (logprobs == null) choice.putNull("logprobs"); else choice.set("logprobs", logprobs);
    if (finishReason == null) choice.putNull("finish_reason"); else choice.put("finish_reason", finishReason);
    return write(chunk);
  }

  private ObjectNode header(ObjectNode c) {
    ObjectNode chunk = mapper.createObjectNode();
    chunk.put("id", c.path("id").asText());
    chunk.put("object", "chat.completion.chunk");
    chunk.put("created", c.path("created").asLong());
    chunk.put("model", c.path("model").asText());
    return chunk;
  }

  private String write(JsonNode node) {
    try {
      return mapper.writeValueAsString(node);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * vLLM's shape with {@code return_tokens_as_token_ids}: the token as "token_id:N", and {@code top_logprobs}
   * alternatives per token, the sampled token first, as a model server lists them (the list was always
   * empty, whatever the request asked).
   */
  private ObjectNode logprobs(String text, int top) {
    ObjectNode lp = mapper.createObjectNode();
    ArrayNode content = lp.putArray("content");
    for (String word : text.split("(?<= )")) {
      int id = Math.floorMod(word.hashCode(), 50_000);
      double logprob = -((id % 1000) / 1000.0);
      ObjectNode t = content.addObject();
      t.put("token", "token_id:" + id);
      t.put("logprob", logprob);
      t.putNull("bytes");
      ArrayNode alternatives = t.putArray("top_logprobs");
      for (int k = 0; k < Math.min(top, 20); k++) {
        alternatives.addObject().put("token", "token_id:" + (id + k) % 50_000).put("logprob", logprob - k)
            .putNull("bytes");
      }
    }
    return lp;
  }

  /** The conversation's last user message (its text feeds a call's arguments); missing when it has none. */
  private static JsonNode lastUserMessage(JsonNode messages) {
    for (int i = messages.size() - 1; i >= 0; i--) {
      if ("user".equals(messages.get(i).path("role").asText())) return messages.get(i);
    }
    return MissingNode.getInstance();
  }

  /** A tool call's id, unique per call: the response's own unique part and the choice's index. */
  private static String callId(String responseId, int choice) {
    return "call_" + responseId.substring(responseId.indexOf('-') + 1) + "_" + choice;
  }

  /**
   * The call the model makes, without its id (one per choice, {@link #callId}); empty for none. A
   * custom tool's call is OpenAI's {@code {"type":"custom","custom":{"name","input"}}}, the user's text as
   * its input; an {@code allowed_tools} choice limits the tools called to those it lists (its mode
   * {@code required} forces a call). Before, a custom tool was called as a function named "" and
   * {@code allowed_tools} was not read: the first tool was called, allowed or not (trial t79).
   */
  private Optional<ObjectNode> toolCall(JsonNode request) {
    JsonNode tools = request.path("tools");
    JsonNode messages = request.path("messages");
    if (!tools.isArray() || tools.isEmpty()) return Optional.empty();
    JsonNode choice = request.path("tool_choice");
    if ("none".equals(choice.asText())) return Optional.empty();
    boolean allowedList = "allowed_tools".equals(choice.path("type").asText());
    List<JsonNode> callable = new ArrayList<>();
    for (JsonNode t : tools) {
      if (!allowedList || listed(choice.path("allowed_tools").path("tools"), t)) callable.add(t);
    }
    if (callable.isEmpty()) return Optional.empty();
    JsonNode tool = callable.get(0);
    String forced = choice.path("function").path("name").asText(choice.path("custom").path("name").asText(""));
    if (!forced.isEmpty()) {
      for (JsonNode t : tools) if (forced.equals(toolName(t))) tool = t;
    }
    String name = toolName(tool);
    JsonNode last = messages.get(messages.size() - 1);
    boolean userSpokeLast = "user".equals(last.path("role").asText());
    String userText = ProxySimulation.text(lastUserMessage(messages).path("content"));
    String ask = userText.toLowerCase(Locale.ROOT);
    // Only the user's own words are read as a request for a tool: after a tool's result the model answers,
    // else an agent that calls whatever tool the model asks for would loop.
    boolean asked = userSpokeLast
        && (ask.contains("tool") || (!name.isEmpty() && ask.contains(name.toLowerCase(Locale.ROOT))));
    // A forced choice binds whatever came last, as OpenAI and vLLM force it: an agent that demands a tool
    // after a tool result (a final-answer tool, structured output's generate_response) got text instead.
    boolean required = "required".equals(choice.asText())
        || allowedList && "required".equals(choice.path("allowed_tools").path("mode").asText());
    if (!asked && forced.isEmpty() && !required) return Optional.empty();
    ObjectNode call = mapper.createObjectNode();
    if ("custom".equals(tool.path("type").asText())) {
      call.put("type", "custom");
      call.putObject("custom").put("name", name).put("input", userText);
      return Optional.of(call);
    }
    ObjectNode args = mapper.createObjectNode();
    JsonNode parameters = tool.path("function").path("parameters");
    JsonNode props = parameters.path("properties");
    props.fieldNames().forEachRemaining(p -> {
      JsonNode schema = props.path(p);
      if (schema.has("enum") || schema.has("const")) {
        // One of its values, as a strict tool's call holds (a Literal or an enum inline): the user's text
        // there failed the openai Python client's parse() of the call (trial t140).
        args.set(p, AnswerShape.parameterValue(schema, parameters, userText));
        return;
      }
      String type = schema.path("type").asText(schema.has("properties") ? "object" : "string");
      boolean plain = !schema.has("$ref") && !schema.has("anyOf") && !schema.has("oneOf") && !schema.has("allOf");
      switch (type) {
        case "integer", "number" -> args.put(p, 1);
        case "boolean" -> args.put(p, true);
        case "string" -> {
          if (plain) args.put(p, userText);
          else args.set(p, AnswerShape.parameterValue(schema, parameters, userText));
        }
        // An object or array parameter (or one by $ref, a union) gets a value of its schema, not the text.
        default -> args.set(p, AnswerShape.parameterValue(schema, parameters, userText));
      }
    });
    call.put("type", "function");
    call.putObject("function").put("name", name).put("arguments", write(args));
    return Optional.of(call);
  }

  /** A tool's name: {@code function.name}, or {@code custom.name} for a custom tool. */
  private static String toolName(JsonNode tool) {
    return tool.path(tool.path("type").asText("function")).path("name").asText("");
  }

  /** Whether {@code allowed} (an {@code allowed_tools.tools} list) names {@code tool}, by type and name. */
  private static boolean listed(JsonNode allowed, JsonNode tool) {
    for (JsonNode a : allowed) {
      if (a.path("type").asText().equals(tool.path("type").asText()) && toolName(a).equals(toolName(tool))) return true;
    }
    return false;
  }
}
