package io.otl.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.SessionInput;
import io.otl.wire.EventJson;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Realistic, deterministic session traffic: user and assistant messages of 200–2,000 characters,
 * tool calls with JSON input and output, reasoning steps, and a task result as the last event (so
 * every session completes and writes its one tagged TrajectoryCompleted). Text has no digits, so
 * the desensitizer scans everything and replaces nothing.
 */
final class EventGen {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] WORDS = ("the parcel order refund customer agent tool search invoice shipment delay "
      + "warehouse policy account password reset network latency service cluster node restart deploy review "
      + "change request merge branch function test failure success retry timeout escalate summary answer "
      + "question detail context travel flight hotel booking itinerary price compare option").split(" ");

  /**
   * false: the last event is a message, not a task result, so sessions stay active and nothing is
   * tagged (for the tagging experiment in BENCHMARKS.md; {@code --complete false}).
   */
  static volatile boolean complete = true;

  private EventGen() {}

  /** Event {@code i} (0-based) of {@code total} for {@code sessionId}, as the JSON the API takes. */
  static ObjectNode event(String sessionId, int i, int total) {
    SplittableRandom r = new SplittableRandom(sessionId.hashCode() * 31L + i);
    ObjectNode e = JSON.createObjectNode();
    String id = "e" + i;
    if (i == total - 1 && complete) {
      e.put("type", "result").put("eventId", id).put("status", "SUCCESS").put("detail", text(r, 40, 120));
      return e;
    }
    switch (i % 5) {
      case 0 -> e.put("type", "message").put("eventId", id).put("role", "user").put("content", text(r, 200, 2000));
      case 1, 4 -> e.put("type", "message").put("eventId", id).put("role", "assistant")
          .put("content", text(r, 200, 2000)).put("msgId", "chatcmpl-" + sessionId + "-" + i)
          .put("latencyMs", 200 + r.nextInt(1500));
      case 2 -> {
        e.put("type", "tool_call").put("eventId", id).put("callId", "call-" + i).put("toolName", "search")
            .put("success", true).put("latencyMs", 20 + r.nextInt(300));
        ObjectNode in = e.putObject("input");
        in.put("query", text(r, 30, 120)).put("limit", 5);
        ObjectNode out = e.putObject("output");
        ArrayNode hits = out.putArray("hits");
        for (int h = 0; h < 3; h++) hits.addObject().put("title", text(r, 20, 60)).put("snippet", text(r, 80, 200));
      }
      default -> e.put("type", "reasoning").put("eventId", id).put("index", i).put("thought", text(r, 100, 400))
          .put("action", "call search").put("observation", text(r, 100, 400));
    }
    return e;
  }

  static List<ObjectNode> events(String sessionId, int from, int to, int total) {
    List<ObjectNode> out = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) out.add(event(sessionId, i, total));
    return out;
  }

  static List<SessionInput> inputs(List<ObjectNode> events) {
    List<SessionInput> out = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) out.add(EventJson.parse(events.get(i), "events[" + i + "]"));
    return out;
  }

  /** The POST /v1/sessions/{id}/events body. */
  static String body(String agentId, List<ObjectNode> events) {
    ObjectNode b = JSON.createObjectNode();
    b.put("agentId", agentId);
    b.putArray("events").addAll(events);
    return b.toString();
  }

  static String text(SplittableRandom r, int min, int max) {
    int len = min + r.nextInt(max - min + 1);
    StringBuilder sb = new StringBuilder(len + 12);
    while (sb.length() < len) {
      if (sb.length() > 0) sb.append(r.nextInt(12) == 0 ? ". " : " ");
      sb.append(WORDS[r.nextInt(WORDS.length)]);
    }
    sb.setLength(len);
    return sb.toString();
  }
}
