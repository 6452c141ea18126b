package io.otl.core.session;

import io.otl.core.CanonicalJson;
import io.otl.core.Sha256;
import io.otl.core.session.SessionModel.FeedbackKind;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Ids of inputs sent without an eventId: a hash of everything the client sent, so a retried request
 * derives the same ids and is stored once. Feedback is keyed by its feedbackId.
 *
 * <p>Since 0.2.0 the hash is over {@link CanonicalJson} ({@code d2:} ids). Release 0.1.0 hashed
 * {@code Record.toString()} ({@code d:} ids), whose rendering a JDK or Jackson upgrade may change.
 * Those ids stay in the journals that hold them, so a retry that reaches a session after the
 * upgrade is also checked against the 0.1.0 derivation ({@link #seenBefore}); see
 * docs/schema-evolution.md, "Derived ids".
 */
final class DerivedEventIds {
  private DerivedEventIds() {}

  /** The id over the input as sent: what earlier builds derived, and still the id of one without personal data. */
  static String of(SessionInput input) {
    if (input instanceof SessionInput.Feedback f && f.feedbackId() != null) return "feedback:" + f.feedbackId();
    return "d2:" + Sha256.hex(canonical(input), 16);
  }

  /**
   * The id of an input without eventId: over its canonical text as the session stores it, personal
   * data replaced ({@code d3:}), so that the id says nothing the stored text does not. Hashed as sent,
   * "call me on 13812345678" got an id that anyone reading the journal, an audit or GET
   * /v1/sessions/{id} could test a few billion phone numbers against. An input without personal data
   * keeps its {@code d2:} id. Two inputs alike but for their personal data are one input, as two
   * alike inputs are.
   */
  static String of(SessionInput input, Desensitizer desensitizer) {
    return idOver(asStored(input), desensitizer);
  }

  private static String idOver(SessionInput input, Desensitizer desensitizer) {
    if (input instanceof SessionInput.Feedback f && f.feedbackId() != null) return "feedback:" + f.feedbackId();
    String sent = canonical(input);
    String stored = desensitizer.apply(sent);
    return (stored.equals(sent) ? "d2:" : "d3:") + Sha256.hex(stored, 16);
  }

  /**
   * A feedback hashed as the session stores it: its kind, not its spelling ("rating", "Rating" and
   * AgentScope's "USER_RATING" are one RATING), and a value only for a RATING (a thumb sent with 1 and one
   * sent without are one thumb). A retry sent otherwise was a second feedback (trial t142, review t152).
   * Ids of feedback sent as stored are unchanged; earlier builds' ids of others are recognised by
   * {@link #seenBefore}.
   */
  static SessionInput asStored(SessionInput input) {
    if (input instanceof SessionInput.Message m) {
      // a role in another case ("USER") is stored as the role: one message, whichever case a retry sends
      SessionModel.Role role = SessionModel.Role.parse(m.role());
      if (role == null || role.name().equals(m.role())) return input;
      return new SessionInput.Message(m.eventId(), m.at(), role.name(), m.content(), m.msgId(), m.latencyMs(),
          m.inference(), m.truncated(), m.formerId());
    }
    if (!(input instanceof SessionInput.Feedback f) || f.feedbackId() != null) return input;
    FeedbackKind kind = FeedbackKind.parse(f.kind());
    if (kind == null) return input;
    Double value = kind == FeedbackKind.RATING ? f.value() : null;
    if (kind.name().equals(f.kind()) && java.util.Objects.equals(value, f.value())) return input;
    return f.with(kind.name(), value);
  }

  /** What is hashed: the input's wire type, a colon, and the input's {@link CanonicalJson}. */
  static String canonical(SessionInput input) {
    return input.type() + ":" + CanonicalJson.of(input);
  }

  /**
   * True when a session holding {@code ids} stored this input before under its 0.1.0 id, under the
   * {@code d2:} id of its text as sent (what builds before {@code d3:} stored for inputs with personal data,
   * and what a node stores once a rule was added: the retry's {@code d3:} id is new), or under its
   * {@code d3:} id by every built-in rule (what the default configuration stored, before an operator
   * left a rule out or turned desensitizing off: the retry, now stored as sent, derived a new id and
   * was stored a second time, raw, trial t58). Only sessions that existed before the request can hold
   * such ids; the check is skipped for the others.
   */
  static boolean seenBefore(Set<String> ids, SessionInput input, boolean mayHoldLegacyIds, Desensitizer current) {
    if (!mayHoldLegacyIds || input.eventId() != null) return false;
    if (ids.contains(legacy(input)) || ids.contains(of(input))) return true;
    // a feedback sent otherwise than stored: earlier builds hashed it as sent
    boolean respelled = asStored(input) != input;
    if (respelled && ids.contains(idOver(input, current))) return true;
    // ... or in another spelling than this retry's ("rating" then, "RATING" now; a thumb with 1, now without)
    if (input instanceof SessionInput.Feedback f) {
      for (SessionInput.Feedback spelled : earlierSpellings(f)) {
        if (ids.contains(idOver(spelled, current))) return true;
        if (!current.isBuiltInScanner() && ids.contains(idOver(spelled, Desensitizer.builtInScanner()))) return true;
      }
    }
    // Under the built-in rules the id by every built-in rule is the input's own id, checked already: a
    // second scan of the text for nothing (review t63).
    if (current.isBuiltInScanner()) return false;
    return ids.contains(of(input, Desensitizer.builtInScanner()))
        || respelled && ids.contains(idOver(input, Desensitizer.builtInScanner()));
  }

  /**
   * The spellings an earlier build may have stored {@code f} under, hashed as sent: its kind as stored, in
   * lower case and capitalized, and AgentScope's alias of it likewise; a thumb with and without its value.
   * A retry respelled after the upgrade ("RATING" where "rating" was sent, a thumb without the 1 it had)
   * matches none of its own ids (trial t153). Mixed case beyond these is not recognised.
   */
  private static List<SessionInput.Feedback> earlierSpellings(SessionInput.Feedback f) {
    FeedbackKind kind = FeedbackKind.parse(f.kind());
    if (kind == null || f.feedbackId() != null) return List.of();
    Set<String> names = new LinkedHashSet<>();
    spellings(kind.name(), names);
    FeedbackKindAliases.all().forEach((alias, k) -> { if (k == kind) spellings(alias, names); });
    Set<Double> values = new LinkedHashSet<>();
    values.add(f.value());
    if (kind != FeedbackKind.RATING) values.add(null);
    if (kind == FeedbackKind.THUMBS_UP) values.add(1.0);
    if (kind == FeedbackKind.THUMBS_DOWN) values.add(-1.0);
    List<SessionInput.Feedback> spelled = new ArrayList<>();
    for (String name : names) for (Double value : values) spelled.add(f.with(name, value));
    return spelled;
  }

  private static void spellings(String upper, Set<String> into) {
    String lower = upper.toLowerCase(Locale.ROOT);
    into.add(upper);
    into.add(lower);
    into.add(Character.toUpperCase(lower.charAt(0)) + lower.substring(1));
  }

  /** The 0.1.0 derivation, kept only to recognise ids it stored: never use it for new ids. */
  static String legacy(SessionInput input) {
    if (input instanceof SessionInput.Feedback f && f.feedbackId() != null) return "feedback:" + f.feedbackId();
    return "d:" + Sha256.hex(render010(input), 16);
  }

  /**
   * {@code toString()} of the input as 0.1.0's records rendered it, written out for every kind: the
   * records have gained components since (the gateway's {@code inference} and {@code truncated}, per-turn
   * {@code msgId}), and a record's own text then no longer matches 0.1.0's (a tool call's ended
   * {@code , truncated=null]}). An input that uses such a component cannot be a retry of a 0.1.0
   * request, so it renders to something no 0.1.0 id matches.
   */
  private static String render010(SessionInput input) {
    if (input instanceof SessionInput.Start s) {
      return "Start[eventId=" + s.eventId() + ", at=" + s.at() + ", agentVersion=" + s.agentVersion()
          + ", modelVersion=" + s.modelVersion() + ", metadata=" + s.metadata() + "]";
    }
    if (input instanceof SessionInput.Message m) {
      if (m.inference() != null || m.truncated() != null) return newer(input);
      return "Message[eventId=" + m.eventId() + ", at=" + m.at() + ", role=" + m.role() + ", content="
          + m.content() + ", msgId=" + m.msgId() + ", latencyMs=" + m.latencyMs() + "]";
    }
    if (input instanceof SessionInput.ToolCall t) {
      if (t.truncated() != null || t.awaitingResult() != null) return newer(input);
      return "ToolCall[eventId=" + t.eventId() + ", at=" + t.at() + ", callId=" + t.callId() + ", toolName="
          + t.toolName() + ", input=" + t.input() + ", output=" + t.output() + ", success=" + t.success()
          + ", latencyMs=" + t.latencyMs() + "]";
    }
    if (input instanceof SessionInput.Reasoning r) {
      return "Reasoning[eventId=" + r.eventId() + ", at=" + r.at() + ", index=" + r.index() + ", thought="
          + r.thought() + ", action=" + r.action() + ", observation=" + r.observation() + "]";
    }
    if (input instanceof SessionInput.Feedback f) {
      if (f.msgId() != null) return newer(input);
      return "Feedback[eventId=" + f.eventId() + ", at=" + f.at() + ", kind=" + f.kind() + ", value="
          + f.value() + ", feedbackId=" + f.feedbackId() + ", source=" + f.source() + "]";
    }
    if (!(input instanceof SessionInput.Result r)) return newer(input); // a tool_result: after 0.1.0

    return "Result[eventId=" + r.eventId() + ", at=" + r.at() + ", status=" + r.status() + ", detail="
        + r.detail() + "]";
  }

  private static String newer(SessionInput input) {
    return "not-in-0.1.0:" + canonical(input);
  }
}
