package io.otl.http.gateway;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What this gateway learned of the sessions it served: owner, the version the session started on
 * (which its later calls keep, design §3.3), the event ids known stored, and whether the session
 * is completed. A later turn of a session checks its owner here instead of
 * asking the session (a message to the entity, or for a passivated session a start and a
 * recovery, before the call can be forwarded).
 *
 * <p>Safe to trust: a session's owner never changes once its first event is stored; event ids
 * only grow, so a stale set makes the recording send history the session drops as duplicates;
 * a completion the gateway did not see is reported by the recording (the session refuses) and
 * then noted here. Bounded: the least recently used sessions are forgotten first.
 */
final class KnownSessions {
  /**
   * Event ids kept per session. A longer session keeps its owner, but not its ids or last message:
   * its recordings ask the session for them ({@link TurnRecording}), since numbering recurring
   * messages against a partial set gave new messages ids the session had, and lost them.
   */
  static final int MAX_IDS = 1024;

  /**
   * One session as the gateway knows it.
   *
   * @param version the version the session started on, null if unknown (then its bucket routes it)
   * @param lastMessage the id of the last message this gateway recorded in the session (its latest
   *     answer, or the request's last message when the call failed), null if unknown: where the next
   *     request's resent history ends, so a recurring message is numbered as recorded even when the
   *     agent slid its window past earlier occurrences ({@link TurnRecorder})
   * @param write the name of this gateway's last write into the session (with {@code lastMessage}): the
   *     next turn numbered from this entry is stored only if the session's last gateway write is still
   *     that one, since another node's gateway may have recorded turns this entry lacks
   */
  record Entry(String owner, String version, Set<String> eventIds, boolean completed, String lastMessage,
      String write) {
    Entry(String owner, String version, Set<String> eventIds, boolean completed) {
      this(owner, version, eventIds, completed, null, null);
    }
  }

  private final Map<String, Entry> entries;

  KnownSessions(int capacity) {
    this.entries = new LinkedHashMap<>(256, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
        return size() > capacity;
      }
    };
  }

  synchronized Entry get(String sessionId) {
    return entries.get(sessionId);
  }

  /** What the session itself answered (a lookup). */
  synchronized void learned(String sessionId, String owner, String version, Set<String> eventIds,
      boolean completed) {
    if (owner == null) return;
    entries.put(sessionId, new Entry(owner, version, eventIds.size() > MAX_IDS ? Set.of() : eventIds, completed));
  }

  /**
   * A call of {@code owner} is about to be routed and forwarded for a session nothing is known of: it
   * is the owner's from now on, so a call of another agent arriving before the recording is refused
   * (the recording comes after the answer), and starts on {@code version} (null until the route gives
   * it: {@link #startedOn}). Returns the entry a concurrent call made first, or null.
   */
  synchronized Entry claim(String sessionId, String owner, String version) {
    Entry e = entries.get(sessionId);
    if (e != null) return e;
    entries.put(sessionId, new Entry(owner, version, Set.of(), false));
    return null;
  }

  /**
   * A recording was stored: the session is the agent's and holds these ids too.
   *
   * @param version the version it started on if this gateway did not know it yet
   * @param heldBefore all the session held when the turn was numbered (with {@code lastBefore}, its
   *     last gateway message), or null when that is unknown: then the entry keeps no last message,
   *     so that the next recording asks the session instead of numbering against a partial set
   * @param stored the ids the recording sent
   * @param write the recording's name ({@link Entry#write})
   */
  synchronized void recorded(String sessionId, String owner, String version, Set<String> heldBefore,
      String lastBefore, List<String> stored, String write) {
    Entry e = entries.get(sessionId);
    Set<String> ids = new LinkedHashSet<>(heldBefore != null ? heldBefore : e == null ? Set.of() : e.eventIds());
    ids.addAll(stored);
    String started = e != null && e.version() != null ? e.version() : version;
    String last = TurnRecorder.lastMessage(stored, lastBefore);
    boolean kept = ids.size() <= MAX_IDS;
    String keptLast = kept && heldBefore != null ? last : null;
    entries.put(sessionId, new Entry(owner, started, kept ? Set.copyOf(ids) : Set.of(), false, keptLast, write));
  }

  /** The version a session claimed without one starts on (kept if one is known already). */
  synchronized void startedOn(String sessionId, String owner, String version) {
    Entry e = entries.get(sessionId);
    if (e != null && owner.equals(e.owner()) && e.version() == null) {
      entries.put(sessionId, new Entry(e.owner(), version, e.eventIds(), e.completed(), e.lastMessage(), e.write()));
    }
  }

  /** A claim whose call could not be routed: nothing was forwarded or stored, so the session is nobody's. */
  synchronized void unclaim(String sessionId, String owner) {
    Entry e = entries.get(sessionId);
    if (e != null && owner.equals(e.owner()) && e.version() == null && e.eventIds().isEmpty()) {
      entries.remove(sessionId);
    }
  }

  /** The session refused a recording because it is completed. */
  synchronized void completed(String sessionId) {
    Entry e = entries.get(sessionId);
    if (e != null) {
      entries.put(sessionId, new Entry(e.owner(), e.version(), e.eventIds(), true, e.lastMessage(), e.write()));
    }
  }

  /** Forget what may be wrong (a refusal the gateway cannot explain). */
  synchronized void forget(String sessionId) {
    entries.remove(sessionId);
  }
}
