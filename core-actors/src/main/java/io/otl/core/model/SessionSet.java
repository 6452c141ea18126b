package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;

/**
 * Immutable set of session ids, kept as a sorted array of 64-bit hashes, for deduplicating
 * outcomes during one rollout. An id costs 8 bytes in memory (about 20 characters in a JSON
 * snapshot) instead of the id itself; the full id stays in the journal's {@code OutcomeRecorded}
 * event. Two different ids collide with probability about n²/2⁶⁵ (4·10⁻¹¹ for 40,000 ids), which
 * would drop one outcome as a duplicate.
 */
public final class SessionSet {

  /**
   * In every set this build starts: "each session counted here whose satisfaction score was counted
   * carries its {@code scored:} mark". A set restored from a snapshot of a build before those marks
   * (it has ids but not this hash) cannot say which of its sessions were scored: see {@link
   * #containsScored}.
   */
  private static final long MARKS_KEPT = RoutingTable.hash64("format:", "scored-marks");

  public static final SessionSet EMPTY = new SessionSet(new long[] {MARKS_KEPT});

  private final long[] hashes;

  private SessionSet(long[] sortedHashes) {
    this.hashes = sortedHashes;
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static SessionSet of(long[] hashes) {
    if (hashes == null || hashes.length == 0) {
      return EMPTY; // nothing counted before: every mark to come is kept
    }
    long[] copy = hashes.clone();
    Arrays.sort(copy);
    return new SessionSet(copy);
  }

  @JsonValue
  public long[] hashes() {
    return hashes.clone();
  }

  /** The hashes held, ids and marks, without the format hash. */
  public int size() {
    return hashes.length - (marksKept() ? 1 : 0);
  }

  private boolean marksKept() {
    return has(MARKS_KEPT);
  }

  private boolean has(long h) {
    return Arrays.binarySearch(hashes, h) >= 0;
  }

  public boolean contains(String sessionId) {
    return Arrays.binarySearch(hashes, RoutingTable.hash64("dedup:", sessionId)) >= 0;
  }

  /**
   * Whether the session's satisfaction score was counted (or may have been). Kept in the same array
   * under another hash domain, so snapshots keep their shape. A set restored from a snapshot of a
   * build before these marks (a rollout that spans the upgrade) lacks them for the sessions it
   * counted then: those count as scored, so feedback revising one of them is not counted a second
   * time (a score it did not have is then not counted, as before the upgrade). Sessions such a set
   * counts afterwards carry a {@code since:} hash and are judged by their own marks.
   */
  public boolean containsScored(String sessionId) {
    if (has(RoutingTable.hash64("scored:", sessionId))) {
      return true;
    }
    return !marksKept() && contains(sessionId) && !has(RoutingTable.hash64("since:", sessionId));
  }

  public SessionSet addScored(String sessionId) {
    return addHash(RoutingTable.hash64("scored:", sessionId));
  }

  public SessionSet add(String sessionId) {
    if (contains(sessionId)) {
      return this;
    }
    SessionSet next = addHash(RoutingTable.hash64("dedup:", sessionId));
    return marksKept() ? next : next.addHash(RoutingTable.hash64("since:", sessionId));
  }

  private SessionSet addHash(long h) {
    int i = Arrays.binarySearch(hashes, h);
    if (i >= 0) {
      return this;
    }
    int at = -i - 1;
    long[] next = new long[hashes.length + 1];
    System.arraycopy(hashes, 0, next, 0, at);
    next[at] = h;
    System.arraycopy(hashes, at, next, at + 1, hashes.length - at);
    return new SessionSet(next);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SessionSet other && Arrays.equals(hashes, other.hashes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(hashes);
  }

  @Override
  public String toString() {
    return "SessionSet(" + size() + " ids)";
  }
}
