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
 * another, and a later turn may arrive first. The ids come from the spans and from what the session
 * itself holds, never from a node's memory of it (what the gateway's numbering needed, trial t93), so every
 * way stores what one request with all the spans stores: each message once and in order, repeated
 * "continue"s and a tool call id the model reuses included (trial t95: the same on a 3-node cluster,
 * docs/connect-opentelemetry.md); since trial t97 also for an agent that sends only a window of its
 * conversation, a later turn arriving first within the window.
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
   * What the session holds after these requests, in the order stored: each request's inputs placed against
   * what the session holds (as the OTLP route places them), each under its id, a copy under an id it holds
   * dropped as a duplicate (as the session does); messages as role and text, tool calls as call id and
   * input, steps by id. A whole history on every span keeps the ids the span alone gives (those earlier
   * builds stored).
   */
  private static List<String> stored(List<List<OtlpSpan>> requests) {
    return stored(requests, true);
  }

  private static List<String> stored(List<List<OtlpSpan>> requests, boolean wholeHistory) {
    Map<String, String> held = new LinkedHashMap<>();
    for (List<OtlpSpan> request : requests) {
      for (GenAiMapper.SessionBatch batch : GenAiMapper.map(request).sessions()) {
        assertEquals(SESSION, batch.sessionId());
        List<SessionInput> placed = batch.aligned(held.keySet());
        if (wholeHistory) assertEquals(ids(batch.inputs()), ids(placed), "the ids the spans alone give");
        for (SessionInput in : placed) held.putIfAbsent(in.eventId(), describe(in));
      }
    }
    return List.copyOf(held.values());
  }

  private static List<String> ids(List<SessionInput> inputs) {
    return inputs.stream().map(SessionInput::eventId).toList();
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

  private static final String[][] WINDOWED = {
      {"Plan three days in Rome.", "Day one: the Colosseum."},
      {"continue", "Day two: the Vatican."},
      {"continue", "Day three: Trastevere."},
      {"Which hotel?", "Hotel Artemide."},
      {"continue", "It is near Termini."},
      {"continue", "Breakfast is included."},
      {"continue", "That is all."}};

  /**
   * An agent that sends the model only the system prompt and its last four messages (trial t95): each turn's
   * agent span and chat span, the window as the chat span's input.
   */
  private static List<List<OtlpSpan>> windowedTurns() {
    List<String> history = new ArrayList<>();
    List<List<OtlpSpan>> turns = new ArrayList<>();
    long t = 1_700_000_000_000_000_000L;
    for (int i = 0; i < WINDOWED.length; i++) {
      history.add(text("user", WINDOWED[i][0]));
      List<String> window = new ArrayList<>(List.of(text("system", "You plan trips.")));
      window.addAll(history.subList(Math.max(0, history.size() - 4), history.size()));
      String trace = String.format("%032x", 50 + i);
      String agent = String.format("%016x", 500 + i);
      turns.add(List.of(
          span(trace, agent, "", t, Map.of("gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "planner")),
          span(trace, String.format("%016x", 600 + i), agent, t + 1, Map.of("gen_ai.operation.name", "chat",
              "gen_ai.response.id", "resp-" + i, "gen_ai.input.messages", "[" + String.join(",", window) + "]",
              "gen_ai.output.messages", "[" + text("assistant", WINDOWED[i][1]) + "]"))));
      history.add(text("assistant", WINDOWED[i][1]));
      t += 2_000_000_000L;
    }
    return turns;
  }

  private static List<String> messages(List<String> stored) {
    return stored.stream().filter(s -> s.startsWith("system:") || s.startsWith("user:") || s.startsWith("assistant:"))
        .toList();
  }

  @Test
  void aSlidingWindowStoresEachMessageOnceAndEveryContinue() {
    List<String> conversation = new ArrayList<>(List.of("system: You plan trips."));
    for (String[] turn : WINDOWED) {
      conversation.add("user: " + turn[0]);
      conversation.add("assistant: " + turn[1]);
    }
    assertEquals(15, conversation.size());
    List<List<OtlpSpan>> turns = windowedTurns();
    // one request per turn, in order: each resent message a duplicate, each "continue" a message of its own
    List<String> inOrder = stored(turns, false);
    assertEquals(conversation, messages(inOrder));
    // all turns in one request (a batch exporter)
    assertEquals(inOrder, stored(List.of(turns.stream().flatMap(List::stream).toList()), false));
    // the whole export sent again, a turn at a time: nothing new
    List<List<OtlpSpan>> retried = new ArrayList<>(turns);
    retried.addAll(turns);
    assertEquals(inOrder, stored(retried, false));
    // each turn sent twice at once (the exporter retried a request whose answer it did not get)
    List<List<OtlpSpan>> twice = new ArrayList<>();
    for (List<OtlpSpan> turn : turns) {
      twice.add(turn);
      twice.add(turn);
    }
    assertEquals(inOrder, stored(twice, false));
    // a later turn first, within the window: the same messages, each once
    List<List<OtlpSpan>> swapped = List.of(turns.get(1), turns.get(0), turns.get(3), turns.get(2), turns.get(5),
        turns.get(4), turns.get(6));
    assertEquals(sorted(inOrder), sorted(stored(swapped, false)));
    // each trace's agent span in a request of its own
    List<List<OtlpSpan>> split = new ArrayList<>();
    for (List<OtlpSpan> turn : turns) {
      split.add(turn.subList(1, turn.size()));
      split.add(turn.subList(0, 1));
    }
    assertEquals(sorted(inOrder), sorted(stored(split, false)));
  }

  private static List<String> sorted(List<String> l) {
    return l.stream().sorted().toList();
  }
}
