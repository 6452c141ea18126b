package io.otl.core.session;

import java.text.Normalizer;
import java.util.regex.Pattern;

/**
 * The built-in PII patterns and the text folding they run on (design §3.1), shared by the
 * {@link Desensitizer} and the id checks ({@link io.otl.core.Ids}).
 *
 * <p>Attackers and careless clients write PII in many shapes; the patterns accept separators
 * ({@code 138.6789.0123}, {@code +86 (139) 2345 6789}, {@code 110106 19900307 127X}), digit runs glued
 * to letters or {@code _} ({@code tel_13889012345}, {@code ID110107199003071288}: only a neighbouring
 * digit stops a match, because a digit run inside a longer one is not a number of its own), non-ASCII
 * e-mails and {@code %40}. Text is NFKC-normalised first, so full-width digits and {@code ＠} count.
 */
public final class PiiRules {
  private PiiRules() {}

  /** Mainland China resident ID: 18 characters (last may be X, groups may be spaced) or the old 15 digits. */
  public static final Pattern ID_CARD = Pattern.compile(
      "(?<!\\d)(?:[1-9]\\d{5}[ -]?(?:18|19|20)\\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])[ -]?\\d{3}[0-9Xx]"
          + "|[1-9]\\d{7}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])\\d{3})(?!\\d)");
  /**
   * E.164 (+ and 7-15 digits with separators or parentheses) and mainland China mobiles (+86 or 0086
   * optional, the 3-4-4 groups separated by nothing, spaces, dots or dashes, the first in parentheses).
   */
  /** A canonical UUID inside a longer id, not glued to other letters or digits. */
  private static final Pattern EMBEDDED_UUID = Pattern.compile(
      "(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])");

  public static final Pattern PHONE = Pattern.compile(
      "(?<![\\d+])(?:\\+[1-9](?:[ .()-]{0,3}\\d){6,14}"
          + "|(?:(?:\\+|00)?86[ .-]?)?\\(?1[3-9]\\d\\)?(?:[ .-]?\\d{4}){2})(?!\\d)");
  /** Letters of any script in the local part and the domain; {@code %40} is an encoded '@'. */
  public static final Pattern EMAIL = Pattern.compile(
      "[\\p{L}\\p{N}._%+-]+(?:@|%40)[\\p{L}\\p{N}-]+(?:\\.[\\p{L}\\p{N}-]+)*\\.\\p{L}{2,}");


  /**
   * The text the patterns see, and what the cheap pre-checks need, from one pass over it. NFKC
   * (full-width digits and '＠', circled or mathematical digits) runs only when the text holds a
   * character it could turn into something a pattern looks for; other non-ASCII text (CJK prose) is
   * matched as it is: the e-mail pattern's letter classes take any script.
   */
  public record Scan(String text, int digits, boolean at, boolean percent) {
    boolean mayHoldEmail() {
      return at || (percent && text.contains("%40"));
    }
  }

  public static Scan scan(String text) {
    return scan(text, false);
  }

  private static Scan scan(String text, boolean normalised) {
    int digits = 0;
    boolean at = false;
    boolean percent = false;
    boolean fullWidth = false;
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        if (c >= '0' && c <= '9') {
          digits++;
        } else if (c == '@') {
          at = true;
        } else if (c == '%') {
          percent = true;
        }
      } else if (!normalised) {
        if (foldable(c, text, i)) return scan(Normalizer.normalize(text, Normalizer.Form.NFKC), true);
        // Full-width punctuation is everyday Chinese text: it matters only next to an '@' (a
        // full-width '．' in an e-mail's domain), so it alone does not cost a normalisation.
        fullWidth |= c >= 0xFF01 && c <= 0xFF5E;
      }
    }
    if (fullWidth && at) return scan(Normalizer.normalize(text, Normalizer.Form.NFKC), true);
    return new Scan(text, digits, at, percent);
  }

  /** Whether NFKC may turn this character into a digit, '@', '%' or '+' (or it is a digit of another script). */
  private static boolean foldable(char c, String text, int i) {
    if (c >= 0x3400 && c < 0xA000) return false; // CJK ideographs: the bulk of Chinese text, never digits
    if ((c >= 0xFF10 && c <= 0xFF19) || c == 0xFF20 || c == 0xFF05 || c == 0xFF0B) return true; // full-width 0-9 @ % +
    if (c == 0xFE6B || c == 0xFE6A || c == 0xFE62) return true; // small @ % +
    if (Character.isHighSurrogate(c) && i + 1 < text.length()) {
      int cp = Character.toCodePoint(c, text.charAt(i + 1));
      return Character.getType(cp) == Character.DECIMAL_DIGIT_NUMBER;
    }
    int type = Character.getType(c);
    return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.OTHER_NUMBER;
  }

  /** The text as the patterns see it (see {@link #scan}). */
  public static String fold(String text) {
    return scan(text).text();
  }

  /**
   * What an identifier looks like when it looks like PII ("a phone number", "an ID card number", "an
   * e-mail address"), else null. A canonical UUID is opaque by construction and never refused, whole
   * or as a part ({@code sess-<uuid>}): its hex groups may hold phone-shaped digit runs by chance
   * (about one UUID in a thousand; a gateway test's {@code long-<uuid>} session was refused so).
   */
  public static String looksLike(String id) {
    if (id == null || id.isEmpty() || isUuid(id)) return null;
    if (id.length() > 36 && id.indexOf('-') >= 0) {
      id = EMBEDDED_UUID.matcher(id).replaceAll("~");
      if (id.equals("~")) return null;
    }
    Scan f = scan(id);
    if (f.digits() >= 15 && ID_CARD.matcher(f.text()).find()) return "an ID card number";
    if (f.digits() >= 7 && PHONE.matcher(f.text()).find()) return "a phone number";
    if (f.mayHoldEmail() && EMAIL.matcher(f.text()).find()) return "an e-mail address";
    return null;
  }

  /**
   * Whether a whole value is a canonical UUID (8-4-4-4-12 hex digits; message and call ids): left as
   * it is. A loop rather than a regex: every id of every recorded event is checked.
   */
  static boolean isUuid(String value) {
    if (value.length() != 36) return false;
    for (int i = 0; i < 36; i++) {
      char c = value.charAt(i);
      boolean ok = i == 8 || i == 13 || i == 18 || i == 23
          ? c == '-'
          : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!ok) return false;
    }
    return true;
  }
}
