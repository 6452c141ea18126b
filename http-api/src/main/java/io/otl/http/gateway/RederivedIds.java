package io.otl.http.gateway;

import io.otl.core.Sha256;
import io.otl.core.session.AgentSession;
import io.otl.core.session.Desensitizer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ids a session's stored gateway messages get when today's desensitizer derives them again. A
 * message's id hashes its text as stored, desensitized by the rules in force when it was recorded; an
 * operator who adds a rule (a {@code desensitize.custom} pattern, a name to {@code patterns}) and
 * restarts the node changes what the agent's resent history hashes to. Each open conversation whose
 * history the new rule matched was stored a second time, the rule's matches now replaced (trial t58:
 * "my code secretword42" and its answer stored raw, then again as "my code [REDACTED]"). A stored
 * message is taken under both ids when its id says it was hashed from exactly its stored text (no
 * tool call ids, not cut): rules only ever replace more, so today's rules over the stored text give
 * what they give over the text as sent. The same holds for an id an earlier build hashed with the
 * white space around the text (see {@link #withWhiteSpace}).
 */
final class RederivedIds {
  /** The stored text as it is: what the message's id hashed when it was recorded. */
  private static final Desensitizer AS_STORED = new Desensitizer(false, List.of(), List.of());
  /** Stored messages whose hash under today's rules is remembered (a few MB at most). */
  static final int REMEMBERED = 20_000;

  /** A stored message under today's rules: whether its id hashed its stored text, and its hash today. */
  private record Derived(boolean fromItsText, String hash) {}

  private final Desensitizer today;
  /**
   * Stored message (its id without the occurrence number, and whether it was cut) → {@link Derived}.
   * A stored message never changes and today's rules are fixed for the life of the process, so each is
   * desensitized and hashed once: a session past {@link KnownSessions#MAX_IDS} is re-derived on every
   * turn, and without this a long conversation cost a desensitization of its whole history per turn
   * (review t70). Guarded by itself.
   */
  private final Map<String, Derived> remembered = new LinkedHashMap<>(256, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Derived> eldest) {
      return size() > REMEMBERED;
    }
  };

  RederivedIds(Desensitizer today) {
    this.today = today;
  }

  /**
   * @return stored message id → its id under today's rules, for the messages whose id changes; the
   *     occurrence numbers follow the stored order, as {@link TurnRecorder#messageId} numbers them
   */
  Map<String, String> of(List<AgentSession.MessageRecorded> messages) {
    Map<String, String> changed = new LinkedHashMap<>();
    Map<String, Integer> occurrences = new HashMap<>();
    for (AgentSession.MessageRecorded m : messages) {
      String id = m.eventId();
      if (id == null || !TurnRecorder.isMessageId(id)) continue;
      String base = withoutNumber(id);
      Derived d = derived(base, m);
      String hash = d.fromItsText() ? d.hash() : base;
      int n = occurrences.merge(hash, 1, Integer::sum) - 1;
      String rederived = TurnRecorder.numbered(hash, n);
      if (d.fromItsText() && !rederived.equals(id)) changed.put(id, rederived);
    }
    return changed;
  }

  private Derived derived(String base, AgentSession.MessageRecorded m) {
    String key = m.truncated() == null ? base : base + "\u0000cut";
    synchronized (remembered) {
      Derived known = remembered.get(key);
      if (known != null) return known;
    }
    String role = m.role().name();
    String content = m.content() == null ? "" : m.content();
    String asStored = TurnRecorder.messageHash(AS_STORED, role, content, List.of());
    boolean fromItsText = m.truncated() == null
        && (TurnRecorder.numbered(asStored, 0).equals(base)
            || TurnRecorder.numbered(withWhiteSpace(role, content), 0).equals(base));
    Derived d = new Derived(fromItsText, fromItsText ? TurnRecorder.messageHash(today, role, content, List.of()) : null);
    synchronized (remembered) {
      remembered.put(key, d);
    }
    return d;
  }

  /**
   * The hash builds before commit c3fddf53 gave a message: its stored text with the white space around
   * it. A conversation open across the upgrade resends "You are helpful.\n" (a prompt read from a file),
   * "Hello\n" or a model's "\n\nSure": today's id hashes the stripped text, so its whole history was
   * stored a second time (trial t67: every message of a gateway session recorded by the build of
   * commit 761b7a46 twice after the upgrade).
   */
  private static String withWhiteSpace(String role, String content) {
    return Sha256.hex(role + '\u0000' + content + '\u0000', 12);
  }

  private static String withoutNumber(String id) {
    int dot = id.indexOf('.', "gw:m:".length());
    return dot < 0 ? id : id.substring(0, dot);
  }
}
