package io.otl.wire;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * What an ingested JSON document may hold beyond being valid JSON (issue #14.6, #14.7): no deeper
 * nesting than a limit, no NUL characters or lone surrogates in strings or keys, only finite
 * numbers. Shared by the HTTP edge and Kafka ingestion so both refuse the same documents, which
 * would otherwise be stored and break exports later (Infinity, depth past Jackson's limits).
 */
public final class JsonLimits {
  /** The default nesting limit: the outermost object counts 1. */
  public static final int DEFAULT_MAX_DEPTH = 32;

  private JsonLimits() {}

  /** Why {@code node} cannot be ingested, naming the JSON path; null when it can. */
  public record Problem(boolean tooDeep, String message) {}

  /**
   * A key as error messages may show it: as sent when it is a plain word, else {@code *}. A key
   * is client data (an e-mail, a phone number as a map key) and answers must not echo it.
   */
  public static String shownKey(String key) {
    return io.otl.core.Ids.shownKey(key);
  }

  public static Problem problem(JsonNode node, String path, int maxDepth) {
    return check(node, path, 1, maxDepth);
  }

  private static Problem check(JsonNode node, String path, int depth, int maxDepth) {
    if (node.isContainerNode() && depth > maxDepth) {
      return new Problem(true, path + " is nested " + depth + " levels deep; at most " + maxDepth + " are accepted");
    }
    if (node.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        String text = textProblem(f.getKey());
        if (text != null) return new Problem(false, "a key of " + path + " " + text);
        // shownPath: a policy key (trigger.min-samples) is a dotted word and must be named
        String child = path + "." + io.otl.core.Ids.shownPath(f.getKey());
        Problem p = check(f.getValue(), child, depth + 1, maxDepth);
        if (p != null) return p;
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        Problem p = check(node.get(i), path + "[" + i + "]", depth + 1, maxDepth);
        if (p != null) return p;
      }
    } else if (node.isTextual()) {
      String text = textProblem(node.textValue());
      if (text != null) return new Problem(false, path + " " + text);
    } else if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
      return new Problem(false, path + " is a number too large for a double (it would be stored as Infinity)");
    }
    return null;
  }

  /** Why a string cannot be stored as sent, or null. */
  static String textProblem(String s) {
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
}
