package io.otl.persistence.export;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.Sha256;
import java.text.Normalizer;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Drops repeated trajectories from a training file (issue #16). A line's text is every string in
 * it but ids and metadata (which name the session and its tool calls, not what was said). Exact
 * duplicate: the same text as an earlier line. Near duplicate: the same text once normalised (NFKC,
 * lower case, anything but letters and digits dropped, whitespace collapsed), e.g. the same answer
 * with other punctuation or casing. The first line wins; the rest are counted by reason.
 */
final class Dedup {
  static final String EXACT = "duplicate-exact";
  static final String NEAR = "duplicate-near";

  private static final Set<String> IGNORED_KEYS = Set.of("id", "tool_call_id", "metadata");

  private final Set<String> exact = new HashSet<>();
  private final Set<String> near = new HashSet<>();

  /** Empty when the line is new (and remembered), else the reason it is a duplicate. */
  synchronized Optional<String> check(String jsonLine) {
    String text;
    try {
      StringBuilder sb = new StringBuilder();
      collect(JsonlFormats.JSON.readTree(jsonLine), sb);
      text = sb.toString();
    } catch (java.io.IOException e) {
      text = jsonLine;
    }
    String exactKey = Sha256.hex(text);
    String nearKey = Sha256.hex(normalise(text));
    if (!exact.add(exactKey)) return Optional.of(EXACT);
    if (!near.add(nearKey)) return Optional.of(NEAR);
    return Optional.empty();
  }

  static String normalise(String text) {
    String n = Normalizer.normalize(text, Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
    return n.replaceAll("[^\\p{L}\\p{N}]+", " ").strip();
  }

  private static void collect(JsonNode node, StringBuilder sb) {
    if (node.isTextual()) {
      sb.append(node.textValue()).append('\u0001');
    } else if (node.isValueNode()) {
      sb.append(node.asText()).append('\u0001');
    } else if (node.isArray()) {
      for (JsonNode n : node) collect(n, sb);
    } else if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (IGNORED_KEYS.contains(e.getKey())) continue;
        sb.append(e.getKey()).append('\u0002');
        collect(e.getValue(), sb);
      }
    }
  }
}
