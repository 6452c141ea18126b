package io.otl.core.session;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.Set;
import scala.collection.immutable.HashSet;
import scala.collection.immutable.HashSet$;

/**
 * The ids of a session's events, in the order they were stored: an immutable set whose {@link #with}
 * shares structure with the set it extends. {@link AgentSession.State} is immutable and gains an id
 * per event (twice: the command handler's draft and the event handler), so copying a set per event
 * made a session of n events cost O(n²) (W1 profile, benchmarks/BENCHMARKS.md). Membership is
 * Scala's persistent hash trie (Pekko's own dependency); the order is a chain of the ids added, newest
 * first, walked only when the set is iterated (a snapshot, a read). Serialized by Jackson as a plain
 * JSON array like any {@link Set}, so snapshots read and write as before.
 *
 * <p>The order holds only in the JVM that applied the events: a state read from a snapshot or sent to
 * another node (a gateway's lookup) is read by Jackson as a HashSet, and its ids come in the hash's
 * order. Never read "the last" id off it: take it from the state's lists (its messages), which keep
 * their order everywhere (trial t93; trial t95 found no other reader of this order). Reading the set as
 * a LinkedHashSet would keep it, but the golden replay contract compares the recorded states' ids, written
 * in the hash's order, element by element (GoldenJournalReplayTest fails on golden-s2).
 */
public final class EventIdSet extends AbstractSet<String> {
  private static final EventIdSet EMPTY = new EventIdSet(emptyTrie(), null);

  /** An id and the ids added before it. */
  private record Added(String id, Added before) {}

  private final HashSet<String> members;
  private final Added newest;

  private EventIdSet(HashSet<String> members, Added newest) {
    this.members = members;
    this.newest = newest;
  }

  @SuppressWarnings("unchecked")
  private static HashSet<String> emptyTrie() {
    return (HashSet<String>) (Object) HashSet$.MODULE$.empty();
  }

  public static EventIdSet empty() {
    return EMPTY;
  }

  /** {@code ids} as an EventIdSet: itself when it is one (the usual case), else a copy (a snapshot read). */
  public static EventIdSet of(Collection<String> ids) {
    if (ids instanceof EventIdSet set) return set;
    EventIdSet set = EMPTY;
    for (String id : ids) set = set.with(id);
    return set;
  }

  /** This set with {@code id} added; this very set when it holds {@code id} already. */
  public EventIdSet with(String id) {
    if (id == null) throw new NullPointerException("event id");
    if (members.contains(id)) return this;
    return new EventIdSet(members.incl(id), new Added(id, newest));
  }

  @Override
  public boolean contains(Object o) {
    return o instanceof String s && members.contains(s);
  }

  @Override
  public int size() {
    return members.size();
  }

  @Override
  public Iterator<String> iterator() {
    String[] ids = new String[size()];
    int i = ids.length;
    for (Added a = newest; a != null; a = a.before()) ids[--i] = a.id();
    return Collections.unmodifiableList(Arrays.asList(ids)).iterator();
  }
}
