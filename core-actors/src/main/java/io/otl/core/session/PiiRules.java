package io.otl.core.session;

import java.text.Normalizer;
import java.util.regex.Pattern;

/**
 * The built-in PII patterns and the text folding they run on (DESIGN §3.1), shared by the
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
  public static final Pattern PHONE = Pattern.compile(
      "(?<![\\d+])(?:\\+[1-9](?:[ .()-]{0,3}\\d){6,14}"
          + "|(?:(?:\\+|00)?86[ .-]?)?\\(?1[3-9]\\d\\)?(?:[ .-]?\\d{4}){2})(?!\\d)");
  /** Letters of any script in the local part and the domain; {@code %40} is an encoded '@'. */
  public static final Pattern EMAIL = Pattern.compile(
      "[\\p{L}\\p{N}._%+-]+(?:@|%40)[\\p{L}\\p{N}-]+(?:\\.[\\p{L}\\p{N}-]+)*\\.\\p{L}{2,}");

  private static final Pattern UUID = Pattern.compile(
      "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  /**
   * The text the patterns see: NFKC for anything non-ASCII (full-width digits, '＠', circled and
   * mathematical digits), the text itself otherwise (the common case costs one scan, no copy).
   */
  public static String fold(String text) {
    for (int i = 0, n = text.length(); i < n; i++) {
      if (text.charAt(i) >= 0x80) return Normalizer.normalize(text, Normalizer.Form.NFKC);
    }
    return text;
  }

  /** At least {@code atLeast} ASCII digits: the cheap test before a digit pattern runs. */
  static boolean hasDigits(String text, int atLeast) {
    int n = 0;
    for (int i = 0, len = text.length(); i < len; i++) {
      char c = text.charAt(i);
      if (c >= '0' && c <= '9' && ++n >= atLeast) return true;
    }
    return false;
  }

  static boolean mayHoldEmail(String text) {
    return text.indexOf('@') >= 0 || text.indexOf("%40") >= 0;
  }

  /**
   * What an identifier looks like when it looks like PII ("a phone number", "an ID card number", "an
   * e-mail address"), else null. A canonical UUID is opaque by construction and never refused: its
   * hex groups may hold phone-shaped digit runs by chance (about one UUID in a thousand).
   */
  public static String looksLike(String id) {
    if (id == null || id.isEmpty() || UUID.matcher(id).matches()) return null;
    String f = fold(id);
    if (hasDigits(f, 15) && ID_CARD.matcher(f).find()) return "an ID card number";
    if (hasDigits(f, 7) && PHONE.matcher(f).find()) return "a phone number";
    if (mayHoldEmail(f) && EMAIL.matcher(f).find()) return "an e-mail address";
    return null;
  }

  /** Whether a whole value is a canonical UUID (message and call ids): left as it is. */
  static boolean isUuid(String value) {
    return value.length() == 36 && UUID.matcher(value).matches();
  }
}
