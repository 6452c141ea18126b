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

  public static final SessionSet EMPTY = new SessionSet(new long[0]);

  private final long[] hashes;

  private SessionSet(long[] sortedHashes) {
    this.hashes = sortedHashes;
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static SessionSet of(long[] hashes) {
    long[] copy = hashes == null ? new long[0] : hashes.clone();
    Arrays.sort(copy);
    return new SessionSet(copy);
  }

  @JsonValue
  public long[] hashes() {
    return hashes.clone();
  }

  public int size() {
    return hashes.length;
  }

  public boolean contains(String sessionId) {
    return Arrays.binarySearch(hashes, RoutingTable.hash64("dedup:", sessionId)) >= 0;
  }

  /**
   * Whether the session's satisfaction score was counted (or may have been). Kept in the same array
   * under another hash domain, so snapshots keep their shape. {@code marksKept} false: the set was
   * restored from a snapshot of a build before these marks (a rollout that spans the upgrade), which
   * lacks them for the sessions it counted then; those count as scored, so feedback revising one is
   * not counted a second time (a score it did not have is not counted either, as before the
   * upgrade). The sessions such a set counts afterwards ({@link #addAfterUpgrade}) carry a
   * {@code since:} hash and are judged by their own marks.
   */
  public boolean containsScored(String sessionId, boolean marksKept) {
    if (Arrays.binarySearch(hashes, RoutingTable.hash64("scored:", sessionId)) >= 0) {
      return true;
    }
    return !marksKept && contains(sessionId)
        && Arrays.binarySearch(hashes, RoutingTable.hash64("since:", sessionId)) < 0;
  }

  /** {@link #add}, in a set restored without scored marks: the session is known to keep its marks. */
  public SessionSet addAfterUpgrade(String sessionId) {
    return contains(sessionId) ? this : add(sessionId).addHash(RoutingTable.hash64("since:", sessionId));
  }

  public SessionSet addScored(String sessionId) {
    return addHash(RoutingTable.hash64("scored:", sessionId));
  }

  public SessionSet add(String sessionId) {
    return addHash(RoutingTable.hash64("dedup:", sessionId));
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
    return "SessionSet(" + hashes.length + " ids)";
  }
}
