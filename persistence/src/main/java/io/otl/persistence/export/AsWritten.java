package io.otl.persistence.export;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.Desensitizer;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * One converted line as the export would write it, after its final scan ({@link LineScan}): as given, or its
 * training content desensitized by the node's rules, or left out with a reason.
 *
 * <p>Sessions are desensitized when stored, by that build's rules: a journal an earlier build wrote holds raw
 * what a later rule takes (trial t165), so a line the scan finds something in is desensitized by the node's
 * own rules and scanned again; only what is left is a finding. What is rewritten is the training content only
 * (review t170), every string and key of the line's fields but {@code metadata}; JSON numbers stay:
 * <ul>
 *   <li>{@code metadata} holds ids (session, agent, model version, task) that the manifest, the lineage and
 *       the journal keep as stored: an id rewritten in the line ({@code s-[PHONE]}) no longer joins them.
 *   <li>a number turned into the string {@code "[PHONE]"} changes its JSON type, and a tool call's argument
 *       then no longer matches the line's own {@code tools} schema ({@code "type": "integer"}), which a
 *       chat template shows the model beside it.
 * </ul>
 * When what is left after that is in {@code metadata} or in a number, and the node's rules take it, the line
 * cannot be written truthfully and is left out ({@link #PII_IN_METADATA}, {@link #PII_IN_A_NUMBER}, counted
 * in the manifest's {@code exclusions}): it never reaches the file raw. What the node's rules do not take
 * (a rule left out, desensitizing off) stays a finding, which refuses the file as before.
 */
record AsWritten(String line, Set<String> findings, boolean desensitized, String leftOut) {
  /** A line whose metadata (its ids) holds what the node's rules take: rewriting it would break the joins. */
  static final String PII_IN_METADATA = "pii-in-metadata";
  /** A line with a JSON number the node's rules take (a phone as an integer argument): no string may replace it. */
  static final String PII_IN_A_NUMBER = "pii-in-a-number";

  private static final String METADATA = "metadata";

  /** Whether the line is written (else {@link #leftOut} says why not). */
  boolean written() {
    return leftOut == null;
  }

  /** {@code line} as the export writes it, by the built-in {@code scanner} and the node's {@code rules}. */
  static AsWritten of(Desensitizer scanner, Desensitizer rules, String line) {
    Set<String> found = LineScan.findings(scanner, line);
    if (found.isEmpty() || !rules.enabled()) return new AsWritten(line, found, false, null);
    JsonNode tree;
    try {
      tree = JsonlFormats.JSON.readTree(line);
    } catch (IOException notJson) {
      return new AsWritten(line, found, false, null); // every line the export writes is JSON
    }
    if (tree == null || !tree.isObject()) return new AsWritten(line, found, false, null);
    ObjectNode content = JsonlFormats.JSON.createObjectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = tree.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      content.set(f.getKey(), f.getKey().equals(METADATA) ? f.getValue() : rules.applyToStrings(f.getValue()));
    }
    boolean changed = !content.equals(tree);
    String out = changed ? JsonlFormats.write(content) : line;
    Set<String> left = changed ? LineScan.findings(scanner, out) : found;
    if (!left.isEmpty()) {
      JsonNode metadata = tree.get(METADATA);
      if (metadata != null && !rules.apply(metadata).equals(metadata)
          && !LineScan.findings(scanner, JsonlFormats.write(metadata)).isEmpty()) {
        return new AsWritten(null, Set.of(), false, PII_IN_METADATA);
      }
      content.remove(METADATA);
      if (takesANumber(rules, content)) return new AsWritten(null, Set.of(), false, PII_IN_A_NUMBER);
    }
    return new AsWritten(out, left, changed, null);
  }

  /** Whether {@code rules} would replace a number somewhere in {@code node}. */
  private static boolean takesANumber(Desensitizer rules, JsonNode node) {
    if (node.isNumber()) return !rules.apply(node).equals(node);
    for (JsonNode child : node) {
      if (takesANumber(rules, child)) return true;
    }
    return false;
  }
}
