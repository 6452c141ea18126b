package io.otl.persistence.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.SessionModel.Role;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The JSON Lines of design §6, one trajectory (or pair) per line. Pure and deterministic: the same
 * trajectory always gives the same bytes (field order fixed, no timestamps).
 *
 * <p><b>SFT.</b> {@code messages} follows the conversation in journal order, in the shape chat
 * templates read as they are (Trinity hands {@code messages} and {@code tools} unchanged to
 * {@code apply_chat_template}). Tool calls are rendered OpenAI style: a run of consecutive tool
 * calls becomes {@code tool_calls} on an assistant message (id = the call's callId, else
 * {@code call_<n>}; {@code function.arguments} = the input as a JSON object, a non-object input
 * wrapped as {@code {"input": …}}), followed by one {@code "role":"tool"} message per call with
 * {@code tool_call_id} and the output (a JSON string, or the text itself when the output is a plain
 * string). Consecutive assistant turns are one message: text recorded before a tool call carries
 * that call, and two assistant texts in a row are joined with a newline. Reasoning steps, feedback
 * and the task result are not part of the conversation. {@code tools} is a JSON array: the tool
 * definitions the agent sent the model, as the inference gateway stored them (session metadata
 * {@code tools}: descriptions, required keys, and the tools offered but not called, all of which
 * the chat template shows the model), then one
 * {@code {"type":"function","function":{"name","parameters"}}} per tool used that they do not
 * define, in order of first use, with a JSON Schema derived from the shapes of its inputs (keys of
 * all calls merged; empty without tools). A trajectory without an assistant message that says
 * something, or without a user message before the agent's last turn, is not exported.
 */
public final class JsonlFormats {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private JsonlFormats() {}

  /**
   * The SFT line, or empty when {@link #sftProblem} names a reason. It ends with the agent's last
   * turn (an assistant message with text or tool calls): Trinity-RFT's SFT reader trains on the last
   * message of {@code messages}, with the ones before it as the prompt ({@code SFTFormatter}: {@code
   * apply_chat_template(messages)} minus {@code apply_chat_template(messages[:-1],
   * add_generation_prompt=True)}). What followed that turn unanswered (a user's closing "thanks", the
   * result of a tool call the session ended on, an empty assistant message) would be learned as the
   * model's own words, so it is left out of the line.
   */
  public static Optional<String> sft(Trajectory t) {
    SftLine line = sftLine(t);
    return line.problem() == null ? Optional.of(write(line.line())) : Optional.empty();
  }

  /**
   * Why a trajectory gives no SFT line, as an {@link ExportExclusions} reason: {@code
   * no-assistant-answer} (no assistant message with text, nor a model's call it ends on), {@code no-user-message} (no user message
   * with text before the trained turn: its prompt would be empty, which {@code apply_chat_template}
   * refuses, failing the trainer's read of the whole file).
   */
  public static Optional<String> sftProblem(Trajectory t) {
    return Optional.ofNullable(sftLine(t).problem());
  }

  private record SftLine(ObjectNode line, String problem) {}

  private static SftLine sftLine(Trajectory t) {
    // A conversation that ends on the model's call, whose result never came, has that call for its answer
    // (AgentScope's structured output: the generate_response arguments are the answer; review t124).
    if (t.finalAnswer().isEmpty() && !t.endsOnACallWithoutResult()) {
      return new SftLine(null, ExportExclusions.NO_ANSWER);
    }
    int upTo = t.learnableUpTo();
    ObjectNode line = sftShape(t, upTo);
    ArrayNode messages = (ArrayNode) line.get("messages");
    while (!messages.isEmpty() && !isAgentTurn(messages.get(messages.size() - 1))) {
      messages.remove(messages.size() - 1);
    }
    for (int i = 0; i < messages.size() - 1; i++) {
      JsonNode m = messages.get(i);
      if ("user".equals(m.path("role").asText()) && !m.path("content").asText("").isBlank()) {
        return new SftLine(line, null);
      }
    }
    // Had the line run on, the turn it would have trained is one its user rated down.
    boolean cut = upTo < t.conversation().size();
    return new SftLine(null, cut ? ExportExclusions.RATED_DOWN_ANSWER : ExportExclusions.NO_PROMPT);
  }

  /** An assistant message that says something or calls a tool: a turn worth learning. */
  private static boolean isAgentTurn(JsonNode m) {
    return "assistant".equals(m.path("role").asText())
        && (!m.path("content").asText("").isBlank() || !m.path("tool_calls").isEmpty());
  }

  /**
   * {@code {"messages":[…],"tools":[…]}} of a trajectory as the SFT line renders it, whether or not
   * it has an answer: the body of an SFT line, and of a Kafka {@code trajectories} record (design
   * §7.2), which adds its own fields after these two.
   */
  public static ObjectNode sftShape(Trajectory t) {
    return sftShape(t, t.conversation().size());
  }

  /** The SFT rendering of the conversation's first {@code upTo} events (tools: all of the session's). */
  private static ObjectNode sftShape(Trajectory t, int upTo) {
    ArrayNode messages = F.arrayNode();
    List<ToolCallRecorded> pending = new ArrayList<>();
    int[] callCounter = {0};
    Set<JsonNode> matched = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Event> conversation = t.conversation().subList(0, upTo);
    int lastMessage = -1;
    for (int i = 0; i < conversation.size(); i++) {
      if (conversation.get(i) instanceof MessageRecorded) lastMessage = i;
    }
    for (int i = 0; i < conversation.size(); i++) {
      Event e = conversation.get(i);
      if (e instanceof ToolCallRecorded call) {
        // A call whose result never came is the answer only where the conversation ends on it (AgentScope's
        // structured output); before a later message it is a call the agent never ran (an answer lost on its
        // way, the request sent again got another call), which would train a phantom call (review t129).
        if (call.pending() && i < lastMessage) continue;
        pending.add(call);
      } else if (e instanceof MessageRecorded m) {
        flushToolCalls(messages, pending, callCounter);
        if (m.role() == Role.tool && answersACall(messages, m.content(), matched)) continue;
        ObjectNode last = lastAssistant(messages);
        if (m.role() == Role.assistant && last != null) {
          String before = last.path("content").asText("");
          String text = m.content() == null ? "" : m.content();
          last.put("content", before.isEmpty() ? text : text.isEmpty() ? before : before + "\n" + text);
          continue;
        }
        ObjectNode msg = messages.addObject();
        msg.put("role", m.role().name());
        msg.put("content", m.content());
      }
    }
    flushToolCalls(messages, pending, callCounter);
    ObjectNode line = F.objectNode();
    line.set("messages", messages);
    line.set("tools", toolDefinitions(t));
    return line;
  }

  /**
   * Whether a recorded tool message repeats the result of a call rendered just before it (the run of
   * tool messages since the last other message), and that call's message has not been matched yet.
   * OpenTelemetry records a result twice: the {@code execute_tool} span as the call's output, the next
   * chat span as a {@code tool} message of its input; a client of the API may record both too. The
   * call's message, which carries {@code tool_call_id}, stands for both. {@code matched} holds the
   * call messages whose repeat was dropped, so two calls with the same result each take one repeat.
   */
  private static boolean answersACall(ArrayNode messages, String content, Set<JsonNode> matched) {
    for (int i = messages.size() - 1; i >= 0 && "tool".equals(messages.get(i).path("role").asText()); i--) {
      JsonNode tool = messages.get(i);
      if (tool.has("tool_call_id") && !matched.contains(tool) && sameResult(tool.path("content").asText(), content)) {
        matched.add(tool);
        return true;
      }
    }
    return false;
  }

  /** The same text, or the same JSON value written differently ({@code {"a": 1}} and {@code {"a":1}}). */
  private static boolean sameResult(String a, String b) {
    if (b == null) return a.isEmpty();
    if (a.equals(b)) return true;
    try {
      JsonNode x = JSON.readTree(a);
      JsonNode y = JSON.readTree(b);
      return x != null && !x.isMissingNode() && x.equals(y);
    } catch (JsonProcessingException e) {
      return false;
    }
  }

  /** The last message when it is an assistant turn still open for more text or tool calls. */
  private static ObjectNode lastAssistant(ArrayNode messages) {
    if (messages.isEmpty()) return null;
    JsonNode last = messages.get(messages.size() - 1);
    return "assistant".equals(last.path("role").asText()) ? (ObjectNode) last : null;
  }

  /** Tool-call arguments as chat templates read them: a JSON object. */
  static ObjectNode arguments(JsonNode input) {
    if (input == null || input.isNull() || input.isMissingNode()) return F.objectNode();
    if (input.isObject()) return (ObjectNode) input.deepCopy();
    ObjectNode wrapped = F.objectNode();
    wrapped.set("input", input.deepCopy());
    return wrapped;
  }

  /**
   * An RL task: the prompt, the reward the recorded answer earned, that answer as {@code reference}
   * (the last one its user did not rate down, {@link Trajectory#referenceAnswer}; null when there
   * was none), the session's system prompt as {@code system} (null without one) and metadata. The
   * rendered Trinity config hands {@code reference} to the named reward function as the ground truth,
   * keeps {@code reward} with the task, and runs the rollouts under the tasks' system prompt.
   */
  public static Optional<String> rl(Trajectory t) {
    Optional<String> prompt = t.prompt();
    if (prompt.isEmpty()) return Optional.empty();
    ObjectNode line = F.objectNode();
    line.put("prompt", prompt.get());
    line.put("reward", t.reward());
    line.put("reference", t.referenceAnswer().orElse(null));
    line.put("system", t.systemPrompt().orElse(null));
    ObjectNode meta = line.putObject("metadata");
    meta.put("sessionId", t.sessionId());
    meta.put("agentId", t.state().agentId());
    meta.put("modelVersion", t.state().modelVersion());
    meta.put("taskId", TaskKey.of(t).orElse(null));
    if (t.state().qualityScore() == null) meta.putNull("qualityScore");
    else meta.put("qualityScore", t.state().qualityScore());
    return Optional.of(write(line));
  }

  /**
   * The DPO line of a task's chosen and rejected trajectories. {@code prompt}, {@code chosen} and
   * {@code rejected} are the texts of design §6 (the first user message, each side's final answer),
   * kept for readers of that shape; they are right only for one-turn sessions. A multi-turn agent's
   * final answer replies to the whole conversation before it (the system prompt, later user turns,
   * tool results), so a pair of just the first question and the last answers taught the model to
   * answer "I need a flight" with "Booked AF123". So the line also carries that conversation as
   * Trinity-RFT's DPO reader takes it ({@code prompt_type: messages}): {@code messages}, what both
   * sides share (the two sessions' messages up to where they first differ, cut back so that each
   * side goes on with an assistant turn), and {@code chosen_messages} / {@code rejected_messages},
   * what each session went on with up to its final answer. Sessions that share no user message
   * (a client {@code taskId} over differently worded questions) share the chosen one's opening up
   * to its first user message, and each side goes on from its own. Its {@code metadata} names the two
   * sessions ({@code chosenSessionId}, {@code rejectedSessionId}), the agent and the task they were paired by.
   */
  public static String dpo(Trajectory chosen, Trajectory rejected) {
    List<JsonNode> c = answered(chosen);
    List<JsonNode> r = answered(rejected);
    int shared = 0;
    while (shared < c.size() - 1 && shared < r.size() - 1 && sameTurn(c.get(shared), r.get(shared))) shared++;
    while (shared > 0 && !(isRole(c.get(shared), "assistant") && isRole(r.get(shared), "assistant"))) shared--;
    int chosenFrom = shared;
    int rejectedFrom = shared;
    if (!asksSomething(c.subList(0, shared))) {
      chosenFrom = firstUserTurn(c) + 1;
      rejectedFrom = firstUserTurn(r) + 1;
    }
    ObjectNode line = F.objectNode();
    line.put("prompt", chosen.prompt().orElseThrow().strip());
    line.put("chosen", chosen.finalAnswer().orElseThrow());
    line.put("rejected", rejected.finalAnswer().orElseThrow());
    line.set("messages", F.arrayNode().addAll(c.subList(0, chosenFrom)));
    line.set("chosen_messages", F.arrayNode().addAll(c.subList(chosenFrom, c.size())));
    line.set("rejected_messages", F.arrayNode().addAll(r.subList(rejectedFrom, r.size())));
    // The ids of both sides, as an RL task's metadata names its session: a pair read from the file alone
    // told no one which sessions it compared. Ids only, kept as stored (AsWritten never rewrites
    // metadata: a line whose ids hold what the node's rules take is left out, pii-in-metadata).
    ObjectNode meta = line.putObject("metadata");
    meta.put("chosenSessionId", chosen.sessionId());
    meta.put("rejectedSessionId", rejected.sessionId());
    meta.put("agentId", chosen.state().agentId());
    meta.put("taskId", TaskKey.of(chosen).orElse(null));
    return write(line);
  }

  /** The SFT rendering of a trajectory, up to its last assistant message with text (its final answer). */
  private static List<JsonNode> answered(Trajectory t) {
    List<JsonNode> messages = new ArrayList<>();
    sftShape(t).get("messages").forEach(messages::add);
    while (!messages.isEmpty() && !(isRole(messages.get(messages.size() - 1), "assistant")
        && !messages.get(messages.size() - 1).path("content").asText("").isBlank())) {
      messages.remove(messages.size() - 1);
    }
    return messages;
  }

  /**
   * Whether two sessions' messages say the same: role, text compared as prompts are, tool calls by
   * name and arguments. Call ids are not compared: each session's calls have ids of their own.
   */
  private static boolean sameTurn(JsonNode a, JsonNode b) {
    return comparable(a).equals(comparable(b));
  }

  private static JsonNode comparable(JsonNode m) {
    ObjectNode copy = ((ObjectNode) m).deepCopy();
    copy.remove("tool_call_id");
    copy.put("content", normalisePrompt(m.path("content").asText("")));
    if (copy.get("tool_calls") instanceof ArrayNode calls) {
      for (JsonNode call : calls) ((ObjectNode) call).remove("id");
    }
    return copy;
  }

  private static boolean isRole(JsonNode m, String role) {
    return role.equals(m.path("role").asText());
  }

  private static boolean asksSomething(List<JsonNode> messages) {
    return firstUserTurn(messages) >= 0;
  }

  /** The index of the first user message with text, -1 without one. */
  private static int firstUserTurn(List<JsonNode> messages) {
    for (int i = 0; i < messages.size(); i++) {
      if (isRole(messages.get(i), "user") && !messages.get(i).path("content").asText("").isBlank()) return i;
    }
    return -1;
  }

  /** How prompts are compared for DPO pairs: NFKC, trimmed, whitespace runs collapsed, lower case. */
  public static String normalisePrompt(String prompt) {
    String n = Normalizer.normalize(prompt, Normalizer.Form.NFKC).strip().replaceAll("\\s+", " ");
    return n.toLowerCase(Locale.ROOT);
  }

  private static void flushToolCalls(ArrayNode messages, List<ToolCallRecorded> pending, int[] counter) {
    if (pending.isEmpty()) return;
    List<String> ids = new ArrayList<>();
    ObjectNode assistant = lastAssistant(messages);
    if (assistant == null) {
      assistant = messages.addObject();
      assistant.put("role", "assistant");
      assistant.put("content", "");
    }
    ArrayNode calls = assistant.has("tool_calls") ? (ArrayNode) assistant.get("tool_calls")
        : assistant.putArray("tool_calls");
    for (ToolCallRecorded c : pending) {
      String id = c.callId() != null && !c.callId().isEmpty() ? c.callId() : "call_" + counter[0];
      counter[0]++;
      ids.add(id);
      ObjectNode call = calls.addObject();
      call.put("id", id);
      call.put("type", "function");
      ObjectNode fn = call.putObject("function");
      fn.put("name", c.toolName());
      fn.set("arguments", arguments(c.input()));
    }
    for (int i = 0; i < pending.size(); i++) {
      // A call whose result never came back (AgentScope's structured output: the generate_response call's
      // arguments are the answer) has no tool message: the assistant turn ends on the call.
      if (pending.get(i).pending()) continue;
      JsonNode out = pending.get(i).output();
      ObjectNode tool = messages.addObject();
      tool.put("role", "tool");
      tool.put("tool_call_id", ids.get(i));
      tool.put("content", out == null || out.isNull() ? "" : out.isTextual() ? out.textValue() : write(out));
    }
    pending.clear();
  }

  /**
   * The tool definitions the agent declared (gateway sessions), then one derived definition per
   * tool used that they do not name, in order of first use.
   */
  static ArrayNode toolDefinitions(Trajectory t) {
    ArrayNode tools = declaredTools(t);
    java.util.Set<String> declared = new java.util.HashSet<>();
    for (JsonNode tool : tools) declared.add(tool.path("function").path("name").asText());
    Map<String, JsonNode> schemas = new LinkedHashMap<>();
    for (Event e : t.conversation()) {
      if (e instanceof ToolCallRecorded c && !declared.contains(c.toolName())) {
        JsonNode shape = schemaOf(arguments(c.input()));
        schemas.merge(c.toolName(), shape, JsonlFormats::mergeSchemas);
      }
    }
    schemas.forEach((name, schema) -> {
      ObjectNode tool = tools.addObject();
      tool.put("type", "function");
      ObjectNode fn = tool.putObject("function");
      fn.put("name", name);
      fn.set("parameters", schema);
    });
    return tools;
  }

  /**
   * The function tools of the session's metadata {@code tools} (the request's {@code tools} array,
   * stored desensitized by the gateway), in the order sent; an entry that is not a function tool
   * with a name is left out, and text that no longer parses gives none (the derived ones stand in).
   */
  static ArrayNode declaredTools(Trajectory t) {
    ArrayNode tools = F.arrayNode();
    Map<String, String> meta = t.state().metadata();
    String text = meta == null ? null : meta.get("tools");
    if (text == null) return tools;
    JsonNode parsed;
    try {
      parsed = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      return tools;
    }
    if (parsed == null || !parsed.isArray()) return tools;
    for (JsonNode tool : parsed) {
      if ("function".equals(tool.path("type").asText()) && tool.path("function").path("name").isTextual()) {
        tools.add(tool);
      }
    }
    return tools;
  }

  /** A JSON Schema describing the shape of one value. */
  static JsonNode schemaOf(JsonNode v) {
    ObjectNode s = F.objectNode();
    if (v.isObject()) {
      s.put("type", "object");
      ObjectNode props = s.putObject("properties");
      Iterator<Map.Entry<String, JsonNode>> it = v.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> f = it.next();
        props.set(f.getKey(), schemaOf(f.getValue()));
      }
    } else if (v.isArray()) {
      s.put("type", "array");
      if (!v.isEmpty()) s.set("items", schemaOf(v.get(0)));
    } else if (v.isTextual()) {
      s.put("type", "string");
    } else if (v.isIntegralNumber()) {
      s.put("type", "integer");
    } else if (v.isNumber()) {
      s.put("type", "number");
    } else if (v.isBoolean()) {
      s.put("type", "boolean");
    }
    return s;
  }

  /** Object schemas merge their properties (first seen wins per key); otherwise the first stays. */
  static JsonNode mergeSchemas(JsonNode a, JsonNode b) {
    if (!"object".equals(a.path("type").asText()) || !"object".equals(b.path("type").asText())) return a;
    ObjectNode merged = a.deepCopy();
    ObjectNode props = (ObjectNode) merged.get("properties");
    Iterator<Map.Entry<String, JsonNode>> it = b.get("properties").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> f = it.next();
      if (!props.has(f.getKey())) props.set(f.getKey(), f.getValue());
    }
    return merged;
  }

  static String write(JsonNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
