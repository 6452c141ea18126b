package io.otl.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.StrictValues;
import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The rules the wire doors apply while parsing (docs/http-edge.md, "Strict JSON"), for inputs the
 * embedding API receives as Java objects, which no parser has seen: no NUL or lone surrogate in any
 * text, only finite numbers and at most {@link #MAX_TREE_DEPTH} levels in a tool's input and output, an
 * {@code at} in the years 1970-9999, metadata values that are strings. {@code DataCollector.record}
 * stored all of these (trial t49), where HTTP, Kafka and OTLP refuse them: a lone surrogate came back as
 * invalid JSON from {@code GET /v1/sessions}, {@code Instant.MAX} as a year-1000000000 time no client
 * parses, a NaN tool input as the string "NaN".
 */
final class EmbeddedInputRules {
  /**
   * A tool input's or output's own levels: the limit of a Kafka record or a gateway call, whose event
   * object counts 1 of {@code http.max-json-depth}'s default 32.
   */
  static final int MAX_TREE_DEPTH = 31;

  private EmbeddedInputRules() {}

  /** The first input that no wire door would store, as the session's own rejection; null when none. */
  static Rejected problem(List<SessionInput> events) {
    if (events == null) return null; // the session names the missing list itself
    for (int i = 0; i < events.size(); i++) {
      SessionInput input = events.get(i);
      if (input == null) continue; // the session refuses it, naming events[i]
      String where = "events[" + i + "]";
      Rejected r = problem(input, where);
      if (r != null) return r;
    }
    return null;
  }

  private static Rejected problem(SessionInput input, String where) {
    Rejected r = firstOf(text(where, ".eventId", input.eventId()), time(where, input.at()));
    if (r != null) return r;
    if (input instanceof SessionInput.Start s) {
      r = firstOf(text(where, ".agentVersion", s.agentVersion()), text(where, ".modelVersion", s.modelVersion()));
      if (r != null || s.metadata() == null) return r;
      int n = 0;
      // Keys may be personal data: named by position, never by key (as the session's own checks).
      for (Map.Entry<String, String> e : s.metadata().entrySet()) {
        if (e.getKey() == null) return invalid(where + ".metadata key #" + n, "is null; metadata keys are strings");
        if (e.getValue() == null) {
          return invalid(where + ".metadata value #" + n, "is null: metadata values are strings; leave the key out");
        }
        r = firstOf(text(where, ".metadata key #" + n, e.getKey()), text(where, ".metadata value #" + n, e.getValue()));
        if (r != null) return r;
        n++;
      }
      return null;
    } else if (input instanceof SessionInput.Message m) {
      r = firstOf(text(where, ".role", m.role()), text(where, ".content", m.content()), text(where, ".msgId", m.msgId()),
          text(where, ".formerId", m.formerId()), keys(where, ".truncated", m.truncated()));
      return r != null ? r : inference(where + ".inference", m.inference());
    } else if (input instanceof SessionInput.ToolCall t) {
      return firstOf(text(where, ".callId", t.callId()), text(where, ".toolName", t.toolName()),
          tree(where, ".input", t.input()), tree(where, ".output", t.output()), keys(where, ".truncated", t.truncated()));
    } else if (input instanceof SessionInput.Reasoning s) {
      return firstOf(text(where, ".thought", s.thought()), text(where, ".action", s.action()),
          text(where, ".observation", s.observation()), text(where, ".formerId", s.formerId()));
    } else if (input instanceof SessionInput.Feedback f) {
      if (f.value() != null && !Double.isFinite(f.value())) {
        return invalid(where + ".value", "must be a finite number");
      }
      return firstOf(text(where, ".kind", f.kind()), text(where, ".feedbackId", f.feedbackId()),
          text(where, ".source", f.source()), text(where, ".msgId", f.msgId()));
    } else if (input instanceof SessionInput.Result x) {
      return firstOf(text(where, ".status", x.status()), text(where, ".detail", x.detail()));
    }
    return null;
  }

  /** What the gateway attaches to an answer: its texts and its logprobs are stored like the rest. */
  private static Rejected inference(String where, io.otl.core.session.InferenceCall call) {
    if (call == null) return null;
    Rejected r = firstOf(text(where, ".modelVersion", call.modelVersion()), text(where, ".servedModel", call.servedModel()),
        text(where, ".finishReason", call.finishReason()), text(where, ".error", call.error()),
        text(where, ".fallbackFrom", call.fallbackFrom()));
    if (r != null || call.logprobs() == null) return r;
    for (int i = 0; i < call.logprobs().size(); i++) {
      Double p = call.logprobs().get(i);
      if (p != null && !Double.isFinite(p)) return invalid(where + ".logprobs[" + i + "]", "must be a finite number");
    }
    return null;
  }

  /** Keys of a map the session stores by name (positions only in the message, as for metadata). */
  private static Rejected keys(String where, String field, Map<String, ?> map) {
    if (map == null) return null;
    int n = 0;
    for (String key : map.keySet()) {
      Rejected r = text(where, field + " key #" + n++, key);
      if (r != null) return r;
    }
    return null;
  }

  private static Rejected text(String where, String field, String value) {
    String p = StrictValues.textProblem(value);
    return p == null ? null : invalid(where + field, p);
  }

  private static Rejected tree(String where, String field, JsonNode value) {
    if (value == null) return null;
    StrictValues.Problem p = StrictValues.problem(value, where + field, MAX_TREE_DEPTH);
    // The message starts with the path inside the tree (events[0].input.a[2] is NaN …); the field is the tree.
    return p == null ? null : new Rejected(AgentSession.RejectionCode.INVALID, where + field, p.message());
  }

  private static Rejected time(String where, Instant at) {
    String p = StrictValues.timeProblem(at);
    return p == null ? null : invalid(where + ".at", p + "; pass the event's real time or null");
  }

  private static Rejected invalid(String field, String problem) {
    return new Rejected(AgentSession.RejectionCode.INVALID, field, field + " " + problem);
  }

  private static Rejected firstOf(Rejected... rejections) {
    for (Rejected r : rejections) if (r != null) return r;
    return null;
  }
}
