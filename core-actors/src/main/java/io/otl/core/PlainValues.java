package io.otl.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values of a map of run-time policy overrides read back from JSON (the journal, a cluster
 * message), as plain Java. Pekko's Jackson serializer registers the Scala module, which reads a JSON
 * array in an {@code Object} slot back as a Scala {@code List}: Typesafe Config, the policy checks and
 * the API's JSON writer take none of it, so the run-time {@code model-update.steps} and {@code
 * trigger.type} were dropped at every restart (and shown as {@code {"empty":false,"traversableAgain":true}}).
 */
public final class PlainValues {
  private PlainValues() {}

  /** The overrides with every Scala collection inside turned into a Java list or map; null is empty. */
  public static Map<String, Object> plain(Map<String, Object> overrides) {
    if (overrides == null) return Map.of();
    Map<String, Object> out = new LinkedHashMap<>();
    overrides.forEach((k, v) -> out.put(k, plainValue(v)));
    return Collections.unmodifiableMap(out);
  }

  private static Object plainValue(Object v) {
    if (v instanceof scala.collection.Map<?, ?> m) {
      Map<Object, Object> out = new LinkedHashMap<>();
      scala.jdk.javaapi.CollectionConverters.asJava(m).forEach((k, x) -> out.put(k, plainValue(x)));
      return Collections.unmodifiableMap(out);
    }
    if (v instanceof scala.collection.Iterable<?> it) {
      List<Object> out = new ArrayList<>();
      scala.jdk.javaapi.CollectionConverters.asJava(it).forEach(x -> out.add(plainValue(x)));
      return Collections.unmodifiableList(out);
    }
    if (v instanceof Map<?, ?> m) {
      Map<Object, Object> out = new LinkedHashMap<>();
      m.forEach((k, x) -> out.put(k, plainValue(x)));
      return Collections.unmodifiableMap(out);
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      l.forEach(x -> out.add(plainValue(x)));
      return Collections.unmodifiableList(out);
    }
    return v;
  }
}
