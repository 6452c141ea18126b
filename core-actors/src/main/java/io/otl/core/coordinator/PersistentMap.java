package io.otl.core.coordinator;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import scala.Option;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.collection.immutable.HashMap;
import scala.collection.immutable.HashMap$;

/**
 * An immutable map from session id to {@code V} with structural sharing: {@link #with} and {@link
 * #without} return a new map in O(log₃₂ n) time and memory, sharing everything else with the old
 * one. It wraps Scala's persistent {@code immutable.HashMap} (a CHAMP trie; the Scala library is on
 * the classpath with Pekko anyway).
 *
 * <p>Why: the coordinator's state holds every session it has seen (the pool of 100,000 trajectories
 * and more). With a copied {@code java.util.Map} each event would cost O(n), recovery O(n²). With
 * a mutable map the state would be shared with the snapshot store, which serializes snapshots
 * asynchronously on its own thread while the entity keeps mutating (and with the test kit, which
 * reads the state from the test thread). An immutable map avoids both: every state value is a
 * stable value, event handlers stay pure functions, and "state as of T" replays need no copying.
 *
 * <p>In JSON (snapshots) it is a plain object {@code {"<sessionId>": V, …}}, sorted by key.
 */
public final class PersistentMap<V> {

  private static final PersistentMap<?> EMPTY = new PersistentMap<>(HashMap$.MODULE$.empty());

  private final HashMap<String, V> map;

  private PersistentMap(HashMap<String, V> map) {
    this.map = map;
  }

  @SuppressWarnings("unchecked")
  public static <V> PersistentMap<V> empty() {
    return (PersistentMap<V>) EMPTY;
  }

  /** Snapshot form: builds the trie from a plain map. */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public PersistentMap(Map<String, V> entries) {
    HashMap<String, V> m = HashMap$.MODULE$.empty();
    if (entries != null) {
      for (Map.Entry<String, V> e : entries.entrySet()) {
        m = m.updated(e.getKey(), e.getValue());
      }
    }
    this.map = m;
  }

  /** Snapshot form: a sorted plain copy (O(n), only when a snapshot is written). */
  @JsonValue
  public Map<String, V> toMap() {
    TreeMap<String, V> out = new TreeMap<>();
    forEach(out::put);
    return out;
  }

  public V get(String key) {
    Option<V> v = map.get(key);
    return v.isDefined() ? v.get() : null;
  }

  public boolean containsKey(String key) {
    return map.contains(key);
  }

  public int size() {
    return map.size();
  }

  public boolean isEmpty() {
    return map.isEmpty();
  }

  public PersistentMap<V> with(String key, V value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    return new PersistentMap<>(map.updated(key, value));
  }

  public PersistentMap<V> without(String key) {
    if (!map.contains(key)) {
      return this;
    }
    return new PersistentMap<>(map.removed(key));
  }

  /** Visits every entry, in no particular order. */
  public void forEach(BiConsumer<String, V> visitor) {
    Iterator<Tuple2<String, V>> it = map.iterator();
    while (it.hasNext()) {
      Tuple2<String, V> t = it.next();
      visitor.accept(t._1(), t._2());
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PersistentMap<?> other && map.equals(other.map);
  }

  @Override
  public int hashCode() {
    return map.hashCode();
  }

  @Override
  public String toString() {
    return "PersistentMap(" + map.size() + " entries)";
  }
}
