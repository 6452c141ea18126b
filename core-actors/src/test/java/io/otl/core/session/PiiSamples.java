package io.otl.core.session;

import java.util.List;

/**
 * The 28 PII formats of issue #14 and 4 look-alike forms of a later trial (all invented values), each with what must never survive
 * desensitization: its digits (for numbers) or its local part (for e-mails). Shared by the unit
 * tests and the end-to-end tests (through the test jar).
 */
public final class PiiSamples {
  private PiiSamples() {}

  /**
   * @param text as a client would write it
   * @param secret the part that must not appear anywhere once stored (compared on NFKC-folded text,
   *     separators removed for digits)
   * @param placeholder what it becomes
   */
  public record Sample(String name, String text, String secret, String placeholder) {
    @Override
    public String toString() {
      return name;
    }

    /** Whether {@code stored} still holds the secret (folded; digits compared without separators). */
    public boolean leaksIn(String stored) {
      String f = PiiRules.fold(stored);
      if (secret.chars().allMatch(c -> Character.isDigit(c) || c == 'X')) {
        return f.replaceAll("[^0-9X]", "").contains(secret);
      }
      return f.contains(secret) || f.contains(secret.replace("@", "%40"));
    }
  }

  public static final List<Sample> ALL = List.of(
      new Sample("mobile", "13812345678", "13812345678", "[PHONE]"),
      new Sample("mobile spaced", "138 1234 5678", "13812345678", "[PHONE]"),
      new Sample("mobile dashed", "138-1234-5678", "13812345678", "[PHONE]"),
      new Sample("mobile dotted", "138.6789.0123", "13867890123", "[PHONE]"),
      new Sample("mobile +86 spaced", "+86 138 1234 5678", "13812345678", "[PHONE]"),
      new Sample("mobile +86 parenthesised", "+86 (139) 2345 6789", "13923456789", "[PHONE]"),
      new Sample("mobile 0086", "008613812345678", "13812345678", "[PHONE]"),
      new Sample("mobile +86 glued", "+8613812345678", "13812345678", "[PHONE]"),
      new Sample("mobile after tel_", "tel_13889012345", "13889012345", "[PHONE]"),
      new Sample("mobile glued to a word", "mobile13890123456", "13890123456", "[PHONE]"),
      new Sample("mobile full-width", "１３８１２３４５６７８", "13812345678", "[PHONE]"),
      new Sample("mobile glued both sides", "a13712345678b", "13712345678", "[PHONE]"),
      new Sample("mobile +86 dashed", "+86-150-1234-5678", "15012345678", "[PHONE]"),
      new Sample("E.164 US", "+1 415 555 2671", "14155552671", "[PHONE]"),
      new Sample("E.164 UK", "+44 20 7946 0958", "442079460958", "[PHONE]"),
      new Sample("ID card", "110101199003077578", "110101199003077578", "[ID_CARD]"),
      new Sample("ID card with X", "11010119900307757X", "11010119900307757X", "[ID_CARD]"),
      new Sample("ID card 15 digits", "110101900307757", "110101900307757", "[ID_CARD]"),
      new Sample("ID card spaced", "110106 19900307 127X", "11010619900307127X", "[ID_CARD]"),
      new Sample("ID card glued", "ID110107199003071288", "110107199003071288", "[ID_CARD]"),
      new Sample("ID card full-width", "１１０１０１１９９００３０７７５７８", "110101199003077578", "[ID_CARD]"),
      new Sample("e-mail", "john.doe@example.com", "john.doe", "[EMAIL]"),
      new Sample("e-mail tagged", "jane.roe+tag@mail.example.co.uk", "jane.roe+tag", "[EMAIL]"),
      new Sample("e-mail Chinese", "张三@例子.中国", "张三", "[EMAIL]"),
      new Sample("e-mail accented", "josé.núñez@correo.es", "josé.núñez", "[EMAIL]"),
      new Sample("e-mail %40", "userx%40example.com", "userx", "[EMAIL]"),
      new Sample("e-mail full-width at", "usery＠example.com", "usery", "[EMAIL]"),
      new Sample("e-mail full-width", "ｕｓｅｒｚ＠ｅｘａｍｐｌｅ．ｃｏｍ", "userz", "[EMAIL]"),
      // Look-alikes NFKC leaves alone (a new-user trial): folded one for one before matching.
      new Sample("mobile no-break spaces", "138\u00A01234\u00A05678", "13812345678", "[PHONE]"),
      new Sample("mobile en dashes", "138\u20131234\u20135678", "13812345678", "[PHONE]"),
      new Sample("ID card Arabic-Indic", "\u0661\u0661\u0660\u0661\u0660\u0661\u0661\u0669\u0669\u0660"
          + "\u0660\u0663\u0660\u0667\u0667\u0665\u0667\u0668", "110101199003077578", "[ID_CARD]"),
      new Sample("e-mail ideographic full stop", "usern@example\u3002com", "usern", "[EMAIL]"),
      new Sample("e-mail IP literal", "admin.ops@[10.20.30.40]", "admin.ops", "[EMAIL]"));
}
