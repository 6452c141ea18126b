package io.otl.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * What a stored value may hold beyond its type (issue #14.6, #14.7; docs/http-edge.md, "Strict JSON"): no
 * NUL characters or lone UTF-16 surrogates in strings or keys, only finite numbers, no deeper nesting
 * than a limit. The wire doors (HTTP bodies, Kafka records, OTLP spans, the gateway) apply these rules
 * through {@code io.otl.wire.JsonLimits}, which delegates here; the embedding API applies them to the
 * Java objects it is given ({@code io.otl.core.api.DataCollector}), so no door stores what another
 * refuses. Such values broke exports and PostgreSQL text, or could not be read back.
 */
public final class StrictValues {
  private StrictValues() {}

  /** Why {@code node} cannot be stored, naming the path; null when it can. */
  public record Problem(boolean tooDeep, String message) {}

  /** Checks a tree whose root counts as level 1 of {@code maxDepth}. */
  public static Problem problem(JsonNode node, String path, int maxDepth) {
    return check(node, new Path(null, path, null, -1), 1, maxDepth);
  }

  /**
   * Where a value is, written out only for a problem: every record and request body is checked, and
   * building each field's path text (with {@link Ids#shownPath}'s regex per key) cost more than the
   * check itself (BENCHMARKS.md, W3, session 41).
   */
  private record Path(Path parent, String root, String key, int index) {
    Path field(String name) {
      return new Path(this, null, name, -1);
    }

    Path element(int i) {
      return new Path(this, null, null, i);
    }

    @Override
    public String toString() {
      if (parent == null) return root;
      // shownPath: a policy key (trigger.min-samples) is a dotted word and must be named
      return key != null ? parent + "." + Ids.shownPath(key) : parent + "[" + index + "]";
    }
  }

  private static Problem check(JsonNode node, Path path, int depth, int maxDepth) {
    if (node.isContainerNode() && depth > maxDepth) {
      return new Problem(true, path + " is nested " + depth + " levels deep; at most " + maxDepth + " are accepted");
    }
    if (node.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        String text = textProblem(f.getKey());
        if (text != null) return new Problem(false, "a key of " + path + " " + text);
        Problem p = check(f.getValue(), path.field(f.getKey()), depth + 1, maxDepth);
        if (p != null) return p;
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        Problem p = check(node.get(i), path.element(i), depth + 1, maxDepth);
        if (p != null) return p;
      }
    } else if (node.isTextual()) {
      String text = textProblem(node.textValue());
      if (text != null) return new Problem(false, path + " " + text);
    } else if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
      // A parsed 1e999 reads as Infinity; a tree built in Java may also hold NaN. Neither is JSON.
      if (Double.isNaN(node.doubleValue())) return new Problem(false, path + " is NaN, which JSON cannot hold");
      return new Problem(false, path + " is a number too large for a double (it would be stored as Infinity)");
    }
    return null;
  }

  /**
   * {@code s} with each NUL and lone surrogate replaced by U+FFFD, as a UTF-8 decoder reads bytes it
   * cannot decode; {@code s} itself when it has none. For text the node records without being able to
   * refuse it: a model server's answer, which the agent already has (trial t102: "\ud83d", half an
   * emoji, was journaled from an answer, answered by GET as such and written "?" by exports).
   */
  public static String storable(String s) {
    if (textProblem(s) == null) return s;
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        b.append(c).append(s.charAt(++i));
      } else {
        b.append(c == 0 || Character.isSurrogate(c) ? '\uFFFD' : c);
      }
    }
    return b.toString();
  }

  /** Why a string cannot be stored as given (a NUL, a lone surrogate), or null; null for null. */
  public static String textProblem(String s) {
    if (s == null) return null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) return "contains a NUL character (\\u0000)";
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return "contains a lone UTF-16 surrogate (an escaped \\ud800-\\udbff without its pair)";
      }
      if (Character.isLowSurrogate(c)) return "contains a lone UTF-16 surrogate (\\udc00-\\udfff without its pair)";
    }
    return null;
  }

  private static final java.time.Instant FIRST_INSTANT_OF_10000 =
      java.time.LocalDate.of(10000, 1, 1).atStartOfDay().toInstant(java.time.ZoneOffset.UTC);

  /**
   * Why an event time cannot be stored (outside the years 1970-9999 in UTC, which is how it is stored
   * and written back: a later year has no plain ISO-8601 form, and no agent event predates 1970), or
   * null; null for null. One rule for every door: the wire judged the sender's local year, the
   * embedding API the UTC one, so 9999-12-31T23:00:00-05:00 passed HTTP and not Java.
   */
  public static String timeProblem(java.time.Instant at) {
    if (at == null) return null;
    return at.isBefore(java.time.Instant.EPOCH) || !at.isBefore(FIRST_INSTANT_OF_10000)
        ? "is outside the years 1970-9999 (UTC)" : null;
  }
}
