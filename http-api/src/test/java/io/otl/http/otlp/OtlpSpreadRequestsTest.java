package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.SessionInput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One conversation's spans however an exporter splits and orders its requests: a Collector's
 * load-balancing exporter (or an HTTP load balancer) sends each to any node of a cluster, a retry to
 * another, and a later turn may arrive first. The ids come from the spans alone, never from a node's
 * memory of the session (what the gateway's numbering needed, trial t93), so every way stores what one
 * request with all the spans stores: each message once and in order, repeated "continue"s and a tool
 * call id the model reuses included (trial t95: the same on a 3-node cluster, docs/connect-opentelemetry.md).
 */
class OtlpSpreadRequestsTest {
  private static final String SESSION = "spread-1";
  private static final Map<String, Object> RESOURCE = Map.of("service.name", "svc");

  private static String text(String role, String content) {
    return "{\"role\":\"" + role + "\",\"parts\":[{\"type\":\"text\",\"content\":\"" + content + "\"}]}";
  }

  private static String call(String city) {
    return "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call_0\",\"name\":\"weather\","
        + "\"arguments\":{\"city\":\"" + city + "\"}}]}";
  }

  private static String result(String weather) {
    return "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_0\",\"response\":\""
        + weather + "\"}]}";
  }

  private static OtlpSpan span(String trace, String id, String parent, long start, Map<String, Object> attributes) {
    Map<String, Object> a = new LinkedHashMap<>(attributes);
    a.put("gen_ai.conversation.id", SESSION);
    return new OtlpSpan(trace, id, parent, "s", start, start + 100_000_000L, a, List.of(), 0, null, RESOURCE);
  }

  /**
   * Turn by turn: its agent span, its chat span (the whole history as input) and the tool it ran, if
   * any. The model calls its tool under the same id (call_0) each time, and the user says "continue"
   * three times.
   */
  private static List<List<OtlpSpan>> turns() {
    String[][] script = {
        {text("user", "Weather in Paris?"), call("Paris"), "Paris", "sunny"},
        {null, text("assistant", "Sunny in Paris."), null, null},
        {text("user", "continue"), text("assistant", "Shall I check London?"), null, null},
        {text("user", "continue"), call("London"), "London", "rain"},
        {null, text("assistant", "Rain in London."), null, null},
        {text("user", "continue"), text("assistant", "Done."), null, null}};
    List<String> history = new ArrayList<>(List.of(text("system", "You are a weather agent.")));
    List<List<OtlpSpan>> turns = new ArrayList<>();
    String pendingResult = null;
    long t = 1_700_000_000_000_000_000L;
    for (int i = 0; i < script.length; i++) {
      String[] turn = script[i];
      if (pendingResult != null) history.add(result(pendingResult));
      if (turn[0] != null) history.add(turn[0]);
      String trace = String.format("%032x", i + 1);
      String agent = String.format("%016x", 100 + i);
      List<OtlpSpan> spans = new ArrayList<>();
      spans.add(span(trace, agent, "", t, Map.of("gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "weather")));
      spans.add(span(trace, String.format("%016x", 200 + i), agent, t + 1, Map.of("gen_ai.operation.name", "chat",
          "gen_ai.response.id", "resp-" + i, "gen_ai.input.messages", "[" + String.join(",", history) + "]",
          "gen_ai.output.messages", "[" + turn[1] + "]")));
      history.add(turn[1]);
      pendingResult = turn[3];
      if (turn[2] != null) {
        spans.add(span(trace, String.format("%016x", 300 + i), agent, t + 2, Map.of("gen_ai.operation.name",
            "execute_tool", "gen_ai.tool.name", "weather", "gen_ai.tool.call.id", "call_0",
            "gen_ai.tool.call.arguments", "{\"city\":\"" + turn[2] + "\"}", "gen_ai.tool.call.result", turn[3])));
      }
      turns.add(spans);
      t += 2_000_000_000L;
    }
    return turns;
  }

  /**
   * What the session holds after these requests, in the order stored: each input under its id, a copy
   * under an id it holds dropped as a duplicate (as the session does); messages as role and text, tool
   * calls as call id and input, steps by id.
   */
  private static List<String> stored(List<List<OtlpSpan>> requests) {
    Map<String, String> held = new LinkedHashMap<>();
    for (List<OtlpSpan> request : requests) {
      for (GenAiMapper.SessionBatch batch : GenAiMapper.map(request).sessions()) {
        assertEquals(SESSION, batch.sessionId());
        for (SessionInput in : batch.inputs()) held.putIfAbsent(in.eventId(), describe(in));
      }
    }
    return List.copyOf(held.values());
  }

  private static String describe(SessionInput in) {
    if (in instanceof SessionInput.Message m) return m.role() + ": " + m.content();
    if (in instanceof SessionInput.ToolCall c) return "tool call " + c.callId() + " " + c.input();
    return in.type() + " " + in.eventId();
  }

  @Test
  void turnsSpreadOverRequestsInAnyOrderStoreWhatOneRequestStores() {
    List<List<OtlpSpan>> turns = turns();
    List<OtlpSpan> all = turns.stream().flatMap(List::stream).toList();
    List<String> oneRequest = stored(List.of(all));
    List<String> messages = oneRequest.stream().filter(s -> !s.startsWith("tool call") && !s.startsWith("reasoning")
        && !s.startsWith("start")).toList();
    assertEquals(List.of("system: You are a weather agent.", "user: Weather in Paris?", "assistant: ", "tool: sunny",
        "assistant: Sunny in Paris.", "user: continue", "assistant: Shall I check London?", "user: continue",
        "assistant: ", "tool: rain", "assistant: Rain in London.", "user: continue", "assistant: Done."), messages);
    assertEquals(2, oneRequest.stream().filter(s -> s.startsWith("tool call call_0")).count());

    // one request per turn, in order (nodes A, B, C, A, ...)
    assertEquals(oneRequest, stored(turns));
    // a later turn first (a retry that reached another node late): the same inputs, each once
    List<List<OtlpSpan>> swapped = List.of(turns.get(1), turns.get(0), turns.get(3), turns.get(2), turns.get(5),
        turns.get(4));
    assertEquals(sorted(oneRequest), sorted(stored(swapped)));
    // each trace split: its chat and tool spans in one request, its agent span in another (another node)
    List<List<OtlpSpan>> split = new ArrayList<>();
    for (List<OtlpSpan> turn : turns) {
      split.add(turn.subList(1, turn.size()));
      split.add(turn.subList(0, 1));
    }
    assertEquals(sorted(oneRequest), sorted(stored(split)));
    // the whole export sent again (a retry to another node): nothing new
    List<List<OtlpSpan>> retried = new ArrayList<>(turns);
    retried.addAll(turns);
    assertEquals(oneRequest, stored(retried));
  }

  private static List<String> sorted(List<String> l) {
    return l.stream().sorted().toList();
  }
}
