package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.SessionInput;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The messages of an {@code invoke_agent} span. AgentScope Python's tracing ({@code tracing/_extractor.py}) puts
 * the user's message only there ({@code gen_ai.input.messages}, parts with a {@code name}) and the agent's reply in
 * its {@code gen_ai.output.messages}; its chat spans carry only their output, the prompt in
 * {@code agentscope.function.input} ({@code {"args": [messages], "kwargs": {}}}). Such sessions had neither the
 * user's messages nor the system prompt. Instrumentations that put the whole history on every chat span (the
 * OpenAI Java one) must store exactly what they stored before, whatever an agent span around them carries.
 */
class AgentSpanMessagesTest {
  private static final String TRACE = "5b8efff798038103d269b633813fc60c";
  private static final long T0 = 1_700_000_000_000_000_000L;

  private static OtlpSpan span(String id, String parent, long startMs, long endMs, Map<String, Object> attrs) {
    Map<String, Object> all = new HashMap<>(attrs);
    all.putIfAbsent("gen_ai.conversation.id", "as-run-1");
    return new OtlpSpan(TRACE, id, parent, "s", T0 + startMs * 1_000_000L, T0 + endMs * 1_000_000L, all, List.of(), 0,
        "", Map.of("service.name", "svc"));
  }

  private static String part(String text) {
    return "{\"type\":\"text\",\"content\":\"" + text + "\"}";
  }

  /** An invoke_agent span as _extractor.py writes it: the Msg passed to the agent, its reply. */
  private static OtlpSpan agentScopeAgent(String id, long startMs, long endMs, String user, String reply) {
    return span(id, "", startMs, endMs, Map.of("gen_ai.operation.name", "invoke_agent", "gen_ai.agent.id", "agent-7f3a",
        "gen_ai.agent.name", "Friday",
        "gen_ai.input.messages", "[{\"role\":\"user\",\"parts\":[" + part(user) + "],\"name\":\"user\",\"finish_reason\":\"stop\"}]",
        "gen_ai.output.messages", "[{\"role\":\"assistant\",\"parts\":[" + part(reply) + "],\"name\":\"Friday\","
            + "\"finish_reason\":\"stop\"}]",
        "agentscope.function.input", "{\"args\":[{\"id\":\"m1\",\"name\":\"user\",\"content\":\"" + user
            + "\",\"role\":\"user\"}],\"kwargs\":{}}"));
  }

  /** A chat span as _extractor.py writes it: only its output, the prompt in agentscope.function.input. */
  private static OtlpSpan agentScopeChat(String id, String parent, long startMs, long endMs, String prompt,
      String output) {
    return span(id, parent, startMs, endMs, Map.of("gen_ai.operation.name", "chat", "gen_ai.request.model", "qwen-max",
        "gen_ai.response.id", "resp-" + id, "gen_ai.output.messages", output,
        "agentscope.function.input", "{\"args\":[" + prompt + "],\"kwargs\":{\"tools\":[],\"tool_choice\":\"auto\"}}"));
  }

  private static OtlpSpan tool(String id, String parent, long startMs, long endMs) {
    return span(id, parent, startMs, endMs, Map.of("gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "add",
        "gen_ai.tool.call.id", "call-1", "gen_ai.tool.call.arguments", "{\"a\":2,\"b\":3}", "gen_ai.tool.call.result", "5"));
  }

  private static final String CALLS_ADD = "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call-1\","
      + "\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}],\"finish_reason\":\"stop\"}]";
  private static final String ANSWER = "[{\"role\":\"assistant\",\"parts\":[" + part("2+3 is 5.") + "],\"finish_reason\":\"stop\"}]";

  /** One AgentScope turn: the agent span, a chat span that calls the tool, the tool, the chat span that answers. */
  private static List<OtlpSpan> agentScopeTurn(String firstPrompt, String secondPrompt) {
    return List.of(agentScopeAgent("00000000000000a1", 0, 1000, "What is 2+3?", "2+3 is 5."),
        agentScopeChat("00000000000000c1", "00000000000000a1", 100, 400, firstPrompt, CALLS_ADD),
        tool("00000000000000f1", "00000000000000a1", 400, 500),
        agentScopeChat("00000000000000c2", "00000000000000a1", 500, 900, secondPrompt, ANSWER));
  }

  /** DashScope's formatter: content blocks without a type, not the chat API's format; not read. */
  private static final String DASHSCOPE_PROMPT = "[{\"role\":\"system\",\"content\":[{\"text\":\"You are Friday.\"}]},"
      + "{\"role\":\"user\",\"content\":[{\"text\":\"What is 2+3?\"}]}]";
  /** The OpenAI formatter's list: system prompt, the user's message, later the tool call and its result. */
  private static final String OPENAI_PROMPT_1 = "[{\"role\":\"system\",\"content\":\"You are Friday.\"},"
      + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is 2+3?\"}]}]";
  private static final String OPENAI_PROMPT_2 = "[{\"role\":\"system\",\"content\":\"You are Friday.\"},"
      + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is 2+3?\"}]},"
      + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call-1\",\"type\":\"function\","
      + "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]},"
      + "{\"role\":\"tool\",\"tool_call_id\":\"call-1\",\"name\":\"add\",\"content\":[{\"type\":\"text\",\"text\":\"5\"}]}]";

  /** What a session holds after each request in turn, as the node stores it (an id it holds is a duplicate). */
  private static List<SessionInput> stored(List<List<OtlpSpan>> requests) {
    Map<String, SessionInput> session = new java.util.LinkedHashMap<>();
    for (List<OtlpSpan> request : requests) {
      GenAiMapper.Plan plan = GenAiMapper.map(request);
      assertEquals(0, plan.refused(), plan.problems().toString());
      assertEquals(1, plan.sessions().size());
      for (SessionInput in : plan.sessions().get(0).aligned(Set.copyOf(session.keySet()))) {
        boolean former = in.formerId() != null && session.containsKey(in.formerId());
        if (!former) session.putIfAbsent(in.eventId(), in);
      }
    }
    return List.copyOf(session.values());
  }

  private static List<String> messages(List<SessionInput> inputs) {
    return inputs.stream().filter(SessionInput.Message.class::isInstance).map(SessionInput.Message.class::cast)
        .map(m -> m.role() + ": " + m.content()).toList();
  }

  @Test
  void agentScopeSessionsGetTheUsersMessageAndTheReplyOnce() {
    List<SessionInput> session = stored(List.of(agentScopeTurn(DASHSCOPE_PROMPT, DASHSCOPE_PROMPT)));
    assertEquals(List.of("user: What is 2+3?", "assistant: ", "assistant: 2+3 is 5."), messages(session),
        "the user's message from the agent span, the reply stored once (the last chat span's answer is the reply)");
    SessionInput.Message user = (SessionInput.Message) session.stream()
        .filter(i -> i instanceof SessionInput.Message m && m.role().equals("user")).findFirst().orElseThrow();
    assertEquals("otlp:00000000000000a1:in0", user.eventId(), "the agent span's id names its messages");
    int step = session.indexOf(session.stream().filter(i -> i.eventId().equals("otlp:00000000000000a1")).findFirst()
        .orElseThrow());
    assertEquals(user, session.get(step + 1), "the user's message right after the agent's step, before the answers");
  }

  /** The exporter sends the chat spans (ended first) in one batch, the agent span in the next. */
  @Test
  void agentScopeAcrossBatchesStoresTheSame() {
    List<OtlpSpan> turn = agentScopeTurn(DASHSCOPE_PROMPT, DASHSCOPE_PROMPT);
    List<SessionInput> session = stored(List.of(turn.subList(1, 4), turn.subList(0, 1)));
    assertEquals(List.of("assistant: ", "assistant: 2+3 is 5.", "user: What is 2+3?"), messages(session));
    // a resent batch stores nothing
    List<SessionInput> again = stored(List.of(turn.subList(1, 4), turn.subList(0, 1), turn.subList(0, 1), turn));
    assertEquals(ids(session), ids(again));
  }

  @Test
  void agentScopeOpenAiPromptGivesTheSystemPromptAndHistoryOnce() {
    List<OtlpSpan> turn = agentScopeTurn(OPENAI_PROMPT_1, OPENAI_PROMPT_2);
    List<String> expected = List.of("system: You are Friday.", "user: What is 2+3?", "assistant: ", "tool: 5",
        "assistant: 2+3 is 5.");
    assertEquals(expected, messages(stored(List.of(turn))));
    // chat spans in one batch, the agent span in the next: the agent's messages are the chat spans' own
    List<SessionInput> split = stored(List.of(turn.subList(1, 4), turn.subList(0, 1)));
    assertEquals(expected, messages(split));
    assertTrue(split.stream().noneMatch(i -> i.eventId().startsWith("otlp:00000000000000a1:")),
        "nothing stored under the agent span's id: " + ids(split));
    // a second turn: the agent span's message is the one its chat span holds at the second turn's place
    String prompt3 = OPENAI_PROMPT_2.substring(0, OPENAI_PROMPT_2.length() - 1)
        + ",{\"role\":\"assistant\",\"content\":\"2+3 is 5.\"},{\"role\":\"user\",\"content\":\"What is 2+3?\"}]";
    List<OtlpSpan> turn2 = List.of(agentScopeAgent("00000000000000a2", 2000, 3000, "What is 2+3?", "Still 5."),
        agentScopeChat("00000000000000c3", "00000000000000a2", 2100, 2900, prompt3,
            "[{\"role\":\"assistant\",\"parts\":[" + part("Still 5.") + "]}]"));
    List<String> twoTurns = new java.util.ArrayList<>(expected);
    twoTurns.addAll(List.of("user: What is 2+3?", "assistant: Still 5."));
    assertEquals(twoTurns, messages(stored(List.of(turn.subList(1, 4), turn.subList(0, 1), turn2.subList(1, 2),
        turn2.subList(0, 1)))));
    assertEquals(twoTurns, messages(stored(List.of(turn, turn2))));
  }

  /** A chat span's prompt in another provider's format, or not a message list, is left as it was. */
  @Test
  void otherPromptShapesAreNotRead() {
    for (String prompt : List.of(DASHSCOPE_PROMPT, "[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}]",
        "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":\"5\"}]}]",
        "{\"role\":\"user\",\"content\":\"hi\"}", "[]", "\"hi\"")) {
      OtlpSpan chat = agentScopeChat("00000000000000c1", "", 100, 400, prompt, ANSWER);
      assertEquals(List.of("assistant: 2+3 is 5."), messages(stored(List.of(List.of(chat)))), prompt);
    }
    OtlpSpan notJson = span("00000000000000c1", "", 100, 400, Map.of("gen_ai.operation.name", "chat",
        "gen_ai.output.messages", ANSWER, "agentscope.function.input", "{\"args\":[[{\"role\":\"user\""));
    assertEquals(List.of("assistant: 2+3 is 5."), messages(stored(List.of(List.of(notJson)))));
  }

  /** The OpenAI Java instrumentation's chat spans: the whole history on each, in gen_ai.input.messages. */
  private static List<OtlpSpan> fullHistoryTurn(boolean agentMessages) {
    String sys = "{\"role\":\"system\",\"parts\":[" + part("You are Friday.") + "]}";
    String user = "{\"role\":\"user\",\"parts\":[" + part("What is 2+3?") + "]}";
    String call = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call-1\",\"name\":\"add\","
        + "\"arguments\":{\"a\":2,\"b\":3}}]}";
    String result = "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call-1\",\"response\":\"5\"}]}";
    Map<String, Object> agent = new HashMap<>(Map.of("gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name",
        "weather-agent"));
    if (agentMessages) {
      agent.put("gen_ai.input.messages", "[" + user + "]");
      agent.put("gen_ai.output.messages", ANSWER);
      agent.put("gen_ai.system_instructions", "You are Friday.");
    }
    return List.of(span("00000000000000a1", "", 0, 1000, agent),
        span("00000000000000c1", "00000000000000a1", 100, 400, Map.of("gen_ai.operation.name", "chat",
            "gen_ai.response.id", "r1", "gen_ai.input.messages", "[" + sys + "," + user + "]",
            "gen_ai.output.messages", "[" + call + "]")),
        tool("00000000000000f1", "00000000000000a1", 400, 500),
        span("00000000000000c2", "00000000000000a1", 500, 900, Map.of("gen_ai.operation.name", "chat",
            "gen_ai.response.id", "r2", "gen_ai.input.messages", "[" + sys + "," + user + "," + call + "," + result + "]",
            "gen_ai.output.messages", ANSWER)));
  }

  @Test
  void fullHistoryChatSpansStoreTheSameWithMessagesOnTheAgentSpan() {
    List<SessionInput> before = stored(List.of(fullHistoryTurn(false)));
    assertEquals(List.of("system: You are Friday.", "user: What is 2+3?", "assistant: ", "tool: 5",
        "assistant: 2+3 is 5."), messages(before));
    assertEquals(before, stored(List.of(fullHistoryTurn(true))), "one batch");
    List<OtlpSpan> without = fullHistoryTurn(false);
    List<OtlpSpan> with = fullHistoryTurn(true);
    assertEquals(stored(List.of(without.subList(1, 4), without.subList(0, 1))),
        stored(List.of(with.subList(1, 4), with.subList(0, 1))), "the agent span in a later batch");
    // a second turn: its agent span's user message is the one the chat spans hold at the second turn's place
    assertEquals(ids(before), ids(stored(List.of(with, with.subList(0, 1)))), "resent");
  }

  /** Two turns with the same words: the second turn's message is its own, never taken for the first's. */
  @Test
  void aRepeatedUserMessageInALaterTurnIsStored() {
    List<OtlpSpan> first = List.of(agentScopeAgent("00000000000000a1", 0, 1000, "continue", "ok"),
        agentScopeChat("00000000000000c1", "00000000000000a1", 100, 900, DASHSCOPE_PROMPT,
            "[{\"role\":\"assistant\",\"parts\":[" + part("ok") + "]}]"));
    List<OtlpSpan> second = List.of(agentScopeAgent("00000000000000a2", 2000, 3000, "continue", "done"),
        agentScopeChat("00000000000000c2", "00000000000000a2", 2100, 2900, DASHSCOPE_PROMPT,
            "[{\"role\":\"assistant\",\"parts\":[" + part("done") + "]}]"));
    assertEquals(List.of("user: continue", "assistant: ok", "user: continue", "assistant: done"),
        messages(stored(List.of(first, second))));
  }

  /** Read as a chat span's messages are: a role the node does not know is counted, invalid JSON refuses the span. */
  @Test
  void anAgentSpansMessagesAreCheckedAsAChatSpans() {
    OtlpSpan model = span("00000000000000a1", "", 0, 1000, Map.of("gen_ai.operation.name", "invoke_agent",
        "gen_ai.agent.name", "Friday", "gen_ai.input.messages", "[{\"role\":\"model\",\"parts\":[" + part("hi") + "]},"
            + "{\"role\":\"user\",\"parts\":[" + part("hello") + "]}]"));
    GenAiMapper.Plan plan = GenAiMapper.map(List.of(model));
    assertEquals(1, plan.ignoredMessages());
    assertTrue(plan.unreadMessages().get(0).contains("(invoke_agent) has 1 message with a role the node does not know"),
        plan.unreadMessages().toString());
    assertEquals(List.of("user: hello"), messages(plan.sessions().get(0).inputs()));

    OtlpSpan broken = span("00000000000000a2", "", 0, 1000, Map.of("gen_ai.operation.name", "invoke_agent",
        "gen_ai.agent.name", "Friday", "gen_ai.input.messages", "[{\"role\":\"user\""));
    GenAiMapper.Plan refused = GenAiMapper.map(List.of(broken));
    assertEquals(1, refused.refused());
    assertTrue(refused.problems().get(0).contains("gen_ai.input.messages is not valid JSON"), refused.problems().toString());
  }

  private static Set<String> ids(List<SessionInput> inputs) {
    Set<String> ids = new LinkedHashSet<>();
    for (SessionInput in : inputs) ids.add(in.eventId());
    return ids;
  }
}
