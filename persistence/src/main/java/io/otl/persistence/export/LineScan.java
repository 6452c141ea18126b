package io.otl.persistence.export;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.otl.core.session.Desensitizer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The export's final scan of one JSON line: the line as written, and each string in it that JSON escapes
 * changed, as decoded. A rule reads "\n" in the line as a backslash and an 'n', so a PEM private key or an
 * {@code Authorization: Basic …} header right after an escaped line break ({@code "config:\n-----BEGIN…"})
 * was no finding: the letter before it is no word boundary (review t160). Ingestion desensitizes the
 * decoded text, but a journal written by an earlier build (or with desensitization off) holds such text
 * raw, and its export went through.
 */
final class LineScan {
  private LineScan() {}

  private static final JsonFactory JSON = new JsonFactory();

  /**
   * The names of the rules that find something in {@code line}, each once. A number with a fraction is a
   * measurement (a reward of 6/11 is written {@code 0.5454545454545454}, 16 digits that pass a card's Luhn
   * check; review t166 counted 3.8 % of random rewards taken for a card, each failing its whole export), so
   * the line is read again without them when it holds a finding; a whole number ({@code 13812345678.0}) stays.
   */
  static Set<String> findings(Desensitizer scanner, String line) {
    Set<String> found = new LinkedHashSet<>(scanner.findings(line));
    boolean escapes = line.indexOf('\\') >= 0;
    if (found.isEmpty() && !escapes) return found; // nothing escaped: the strings read as the line does
    List<int[]> measurements = new ArrayList<>();
    List<String> decoded = new ArrayList<>();
    try (JsonParser p = JSON.createParser(line)) {
      for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
        if (t == JsonToken.VALUE_NUMBER_FLOAT) {
          double v = p.getDoubleValue();
          if (v != Math.rint(v)) {
            int at = (int) p.currentTokenLocation().getCharOffset();
            measurements.add(new int[] {at, at + p.getTextLength()});
          }
        } else if ((t == JsonToken.VALUE_STRING || t == JsonToken.FIELD_NAME) && escapes) {
          String s = p.getText();
          if (escaped(s)) decoded.add(s);
        }
      }
    } catch (IOException notJson) {
      return found; // every line the export writes is JSON; the line itself was scanned above
    }
    if (!found.isEmpty() && !measurements.isEmpty()) found = new LinkedHashSet<>(scanner.findings(without(line, measurements)));
    for (String s : decoded) found.addAll(scanner.findings(s));
    return found;
  }

  /** {@code line} with each span as letters: what no rule reads as a number. */
  private static String without(String line, List<int[]> spans) {
    char[] out = line.toCharArray();
    for (int[] span : spans) java.util.Arrays.fill(out, span[0], Math.min(span[1], out.length), 'x');
    return new String(out);
  }

  /** Whether a JSON writer escapes a character of {@code s} (a control character, '"' or '\'). */
  private static boolean escaped(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == '"' || c == '\\') return true;
    }
    return false;
  }
}
