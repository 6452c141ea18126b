package io.otl.http;

import io.otl.core.session.AgentSession;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The session response shape of DESIGN §7.1, built from the entity's state. */
final class SessionView {
  private SessionView() {}

  static Map<String, Object> of(String sessionId, AgentSession.State s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sessionId", sessionId);
    m.put("agentId", s.agentId());
    m.put("status", s.status().name());
    m.put("modelVersion", s.modelVersion());
    m.put("agentVersion", s.agentVersion());
    m.put("metadata", s.metadata());
    m.put("startedAt", s.startedAt());
    m.put("completedAt", s.completedAt());
    m.put("messages", s.messages().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "role", e.role().name(), "content", e.content(),
        "msgId", e.msgId(), "latencyMs", e.latencyMs())).toList());
    m.put("toolCalls", s.toolCalls().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "callId", e.callId(), "toolName", e.toolName(),
        "input", e.input(), "output", e.output(), "success", e.success(), "latencyMs", e.latencyMs())).toList());
    m.put("steps", s.steps().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "index", e.index(), "thought", e.thought(), "action", e.action(),
        "observation", e.observation())).toList());
    m.put("feedback", s.feedback().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "feedbackId", e.feedbackId(), "kind", e.kind().name(),
        "value", e.value(), "source", e.source())).toList());
    m.put("result", s.result() == null ? null : map(
        "status", s.result().status().name(), "detail", s.result().detail(), "at", s.result().at()));
    m.put("reward", s.reward());
    m.put("qualityScore", s.qualityScore());
    m.put("counts", s.counts());
    return m;
  }

  /** An insertion-ordered map from alternating keys and values (values may be null). */
  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  static List<Object> list(Object... items) {
    return List.of(items);
  }
}
