package io.otl.core.session;

import java.util.regex.Pattern;

/**
 * Where a PEM private key that {@link PiiRules#SECRET} found by its header ends: the header, the armor
 * header lines after it ({@code Proc-Type: 4,ENCRYPTED} and {@code DEK-Info: …} of a traditional
 * encrypted OpenSSL key, PGP's {@code Version:} and {@code Comment: Alice <alice@example.com>}), the
 * base64 body, and the END line when it follows the body.
 *
 * <p>Found by one forward walk rather than by the pattern: the pattern's lazy body, tried from every
 * header up to the end of the text when no END line followed, took about a second on 64 KB made of
 * repeated headers (review t160, docs/data-hardening.md). The walk stops at the first character no
 * body holds ('-' of the next header or of the END line among them), so each character is read a
 * bounded number of times however many headers the text holds, and no length cap is needed.
 *
 * <p>Line breaks are {@code \n}, {@code \r} and their JSON escapes ({@code \\n}, {@code \\r}): a service
 * account's JSON or a tool's JSON output holds the key on one line.
 */
final class PemBlock {
  private PemBlock() {}

  /** The header: at most three words before PRIVATE KEY ({@code RSA}, {@code OPENSSH}, {@code ENCRYPTED}, PGP's). */
  static final String HEADER = "-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----";

  private static final Pattern END = Pattern.compile("-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----");

  /** An armor header's name and colon ({@code Proc-Type:}, {@code DEK-Info:}, {@code Comment:}). */
  private static final Pattern ARMOR_NAME = Pattern.compile("[A-Za-z][A-Za-z0-9-]{0,31}: ");

  /**
   * The shortest run of base64 characters, without a break, that makes a PEM header's block a key: a key's
   * lines are 64 characters, and no word of prose or code is this long. A header without one (code testing
   * {@code pem.startswith("-----BEGIN RSA PRIVATE KEY-----")}, prose naming the BEGIN and END lines) is no
   * key: it became {@code [SECRET]} and journals holding such text had their exports refused (review t160).
   */
  private static final int MIN_RUN = 32;

  /**
   * The span {@code {start, end}} of the key whose header {@link PiiRules#SECRET} matched at
   * {@code t[start, headerEnd)}, or null when no key's body follows the header.
   */
  static int[] span(CharSequence t, int start, int headerEnd) {
    int n = t.length();
    int i = afterArmorHeaders(t, headerEnd);
    int bodyStart = i;
    int lineStart = i; // where the body's current line starts
    int lastBreak = i; // where the line break before it starts
    boolean lineHasKey = false; // the current line holds a run of MIN_RUN
    boolean lineHasWords = false; // ... or base64 characters on both sides of a space: prose ("that is all")
    boolean bodyHasKey = false;
    boolean sawBase64 = false;
    boolean blankLine = true; // nothing but white space since the last line break
    boolean prose = false; // the walk stopped in a line of prose
    int run = 0;
    boolean spaceAfterBase64 = false;
    while (i < n) {
      char c = t.charAt(i);
      int br = lineBreak(t, i);
      if (br > 0) {
        if (blankLine && sawBase64) break; // a paragraph break: prose follows a cut key
        if (lineHasWords && !lineHasKey && lineStart > bodyStart) {
          prose = true;
          break;
        }
        lastBreak = i;
        i += br;
        lineStart = i;
        lineHasKey = false;
        lineHasWords = false;
        spaceAfterBase64 = false;
        blankLine = true;
        run = 0;
        continue;
      }
      int slashes = c == '\\' ? afterBackslashes(t, i) - i : 0;
      if (base64(c) || slashes > 0 && i + slashes < n && t.charAt(i + slashes) == '/') { // "\/": an escaped '/'
        i += slashes;
        run++;
        lineHasWords |= spaceAfterBase64;
        blankLine = false;
        sawBase64 = true;
        if (run >= MIN_RUN) {
          lineHasKey = true;
          bodyHasKey = true;
        }
      } else if (c == ' ' || c == '\t') {
        spaceAfterBase64 |= run > 0;
        run = 0;
      } else {
        prose = !lineHasKey; // '.', '\'', '(': a word's character, unless the line is the key's
        break;
      }
      i++;
    }
    if (i < n && t.charAt(i) == '-') {
      var end = END.matcher(t).region(i, n);
      if (end.lookingAt()) return bodyHasKey ? new int[] {start, end.end()} : null;
    }
    prose |= i == n && lineHasWords && !lineHasKey;
    // A line of prose after the key's lines ("that's what I copied.") stays; on the header's own line the
    // walk stops where the base64 does.
    int bodyEnd = prose && lineStart > bodyStart ? lastBreak : i;
    // Lines left out hold no run of MIN_RUN, so the body keeps the one bodyHasKey saw.
    return bodyHasKey ? new int[] {start, trimEnd(t, bodyStart, bodyEnd)} : null;
  }

  /**
   * Armor header lines a block may have: RFC 1421's two, PGP's few (Version, Comment, Hash, Charset). The
   * bound keeps the walk linear: a text of lines each holding a header and starting with a name and a colon
   * would otherwise have every header read every line after it.
   */
  private static final int MAX_ARMOR_LINES = 8;

  /** Past the armor header lines right after the header; {@code i} when there are none. */
  private static int afterArmorHeaders(CharSequence t, int i) {
    int n = t.length();
    int at = i;
    for (int lines = 0; lines < MAX_ARMOR_LINES; lines++) {
      int br = lineBreak(t, at);
      if (br == 0) break;
      var name = ARMOR_NAME.matcher(t).region(at + br, n);
      if (!name.lookingAt()) break;
      at = name.end();
      while (at < n && lineBreak(t, at) == 0) at++; // the value, whatever it holds ('<', '@' of a Comment)
    }
    return at;
  }

  /**
   * The length of the line break at {@code i}, or 0: {@code \r\n}, {@code \n}, {@code \r}, and their escapes
   * with one backslash or more ({@code \\n} in a JSON text, {@code \\\\n} in a JSON text inside a JSON text: an
   * MCP tool's result holding a service account's key; review t166).
   */
  private static int lineBreak(CharSequence t, int i) {
    int n = t.length();
    if (i >= n) return 0;
    char c = t.charAt(i);
    if (c == '\r') {
      if (i + 1 < n && t.charAt(i + 1) == '\n') return 2;
      // an escaped \r\n as the rules see it: CR, a space, LF (review t168: cut after its first line before)
      return i + 2 < n && t.charAt(i + 1) == ' ' && t.charAt(i + 2) == '\n' ? 3 : 1;
    }
    if (c == '\n') return 1;
    // the rules see an escaped line break as a space and the break (PiiRules#escapedBreaksUnescaped)
    if (c == ' ' && i + 1 < n && (t.charAt(i + 1) == '\n' || t.charAt(i + 1) == '\r')) return 1 + lineBreak(t, i + 1);
    int j = afterBackslashes(t, i);
    if (j == i || j >= n) return 0;
    if (t.charAt(j) == 'r') {
      int k = afterBackslashes(t, j + 1);
      return k > j + 1 && k < n && t.charAt(k) == 'n' ? k + 1 - i : j + 1 - i;
    }
    return t.charAt(j) == 'n' ? j + 1 - i : 0;
  }

  private static int afterBackslashes(CharSequence t, int i) {
    while (i < t.length() && t.charAt(i) == '\\') i++;
    return i;
  }

  /** {@code to} without the white space and line breaks the body ends with: they stay around the placeholder. */
  private static int trimEnd(CharSequence t, int from, int to) {
    while (to > from) {
      char c = t.charAt(to - 1);
      int slashes = 0;
      while (to - 2 - slashes >= from && t.charAt(to - 2 - slashes) == '\\') slashes++;
      if ((c == 'n' || c == 'r') && slashes > 0) {
        to -= 1 + slashes; // an escaped line break
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        to--;
      } else {
        break;
      }
    }
    return to;
  }

  private static boolean base64(char c) {
    return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=';
  }
}
