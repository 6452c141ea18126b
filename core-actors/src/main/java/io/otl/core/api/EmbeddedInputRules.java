package io.otl.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.StrictValues;
import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.time.ZoneOffset;
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
      return firstOf(text(where, ".role", m.role()), text(where, ".content", m.content()), text(where, ".msgId", m.msgId()));
    } else if (input instanceof SessionInput.ToolCall t) {
      return firstOf(text(where, ".callId", t.callId()), text(where, ".toolName", t.toolName()),
          tree(where, ".input", t.input()), tree(where, ".output", t.output()));
    } else if (input instanceof SessionInput.Reasoning s) {
      return firstOf(text(where, ".thought", s.thought()), text(where, ".action", s.action()),
          text(where, ".observation", s.observation()));
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

  /** Years past 9999 cannot be written back as plain ISO-8601, and no agent event predates 1970. */
  private static Rejected time(String where, Instant at) {
    if (at == null) return null;
    if (at.isBefore(Instant.EPOCH) || !at.isBefore(FIRST_INSTANT_OF_10000)) {
      return invalid(where + ".at", "is outside the years 1970-9999; pass the event's real time or null");
    }
    return null;
  }

  private static final Instant FIRST_INSTANT_OF_10000 =
      java.time.LocalDate.of(10000, 1, 1).atStartOfDay().toInstant(ZoneOffset.UTC);

  private static Rejected invalid(String field, String problem) {
    return new Rejected(AgentSession.RejectionCode.INVALID, field, field + " " + problem);
  }

  private static Rejected firstOf(Rejected... rejections) {
    for (Rejected r : rejections) if (r != null) return r;
    return null;
  }
}
