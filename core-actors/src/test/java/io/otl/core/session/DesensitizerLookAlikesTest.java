package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * PII written with look-alike characters (found by a new-user trial): digit groups split by a
 * no-break, thin, narrow or ideographic space or by a typographic dash, digits of the Arabic-Indic
 * scripts, an e-mail domain split by an ideographic full stop. Each must become the placeholder its
 * ASCII form becomes, including past the pre-checks that skip a rule when the text "cannot match".
 */
class DesensitizerLookAlikesTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  private static final String[] SPACES = {"\u00A0", "\u2009", "\u202F", "\u3000"};
  private static final String[] DASHES = {"\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"};

  static Stream<Arguments> lookAlikes() {
    Stream.Builder<Arguments> b = Stream.builder();
    for (String sep : concat(SPACES, DASHES)) {
      String name = String.format("U+%04X", (int) sep.charAt(0));
      b.add(Arguments.of("card " + name, "4111" + sep + "1111" + sep + "1111" + sep + "1111", "4111111111111111",
          "[BANK_CARD]"));
      b.add(Arguments.of("mobile " + name, "138" + sep + "1234" + sep + "5678", "13812345678", "[PHONE]"));
      b.add(Arguments.of("E.164 " + name, "+1" + sep + "415" + sep + "555" + sep + "2671", "14155552671", "[PHONE]"));
      b.add(Arguments.of("ID " + name, "110106" + sep + "19900307" + sep + "127X", "11010619900307127X",
          "[ID_CARD]"));
    }
    for (char zero : new char[] {'\u0660', '\u06F0', '\uFF10'}) {
      String name = String.format("digits from U+%04X", (int) zero);
      b.add(Arguments.of("card " + name, digits("4111111111111111", zero), "4111111111111111", "[BANK_CARD]"));
      b.add(Arguments.of("mobile " + name, digits("13812345678", zero), "13812345678", "[PHONE]"));
      b.add(Arguments.of("ID " + name, digits("110101199003077578", zero), "110101199003077578", "[ID_CARD]"));
      b.add(Arguments.of("card grouped " + name, digits("4111 1111 1111 1111", zero), "4111111111111111",
          "[BANK_CARD]"));
    }
    // Arabic-Indic digits and a no-break space together: both folds at once.
    b.add(Arguments.of("mobile Arabic-Indic with NBSP", digits("138\u00A01234\u00A05678", '\u0660'), "13812345678",
        "[PHONE]"));
    for (String stop : new String[] {"\u3002", "\uFF0E", "\uFF61"}) {
      String name = String.format("e-mail U+%04X", (int) stop.charAt(0));
      b.add(Arguments.of(name, "john.doe@example" + stop + "com", "john.doe", "[EMAIL]"));
      b.add(Arguments.of(name + " twice", "jane@mail" + stop + "example" + stop + "co" + stop + "uk", "jane",
          "[EMAIL]"));
    }
    return b.build();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lookAlikes")
  void aLookAlikeFormBecomesTheSamePlaceholderAsItsAsciiForm(String name, String text, String secret,
      String placeholder) {
    String out = d.apply("please use " + text + " today");
    assertEquals("please use " + placeholder + " today", out, name);
    assertFalse(PiiRules.fold(out).replaceAll("[^0-9A-Za-z.]", "").contains(secret), out);
    assertEquals(List.of(), d.findings(out));
    // Alone (the pre-checks count digits and '@' of the whole text) and as an identifier.
    assertEquals(placeholder, d.apply(text), name);
    assertNotNull(PiiRules.looksLike(text), name);
  }

  @Test
  void lookAlikesAwayFromPiiStayAsTheyWere() {
    // An ideographic full stop ends Chinese sentences; after an @-mention it is no e-mail's dot.
    String mention = "回复@张三。好的，收到。";
    assertEquals(mention, d.apply(mention));
    assertEquals(List.of(), d.findings(mention));
    // Typographic dashes and spaces in prose, dates and short numbers are no finding.
    for (String s : List.of("pages 12\u201334", "2019\u20132020 season", "price\u00A0100\u00A0EUR",
        "٢٠٢٤ عام", "room ١٢٣")) {
      assertEquals(s, d.apply(s), s);
    }
    // A finding beside look-alikes replaces the finding and keeps the rest of the text as sent.
    assertEquals("电话 [PHONE]。谢谢\u00A0!", d.apply("电话 138\u00A01234\u00A05678。谢谢\u00A0!"));
  }

  private static String digits(String ascii, char zero) {
    StringBuilder b = new StringBuilder();
    for (char c : ascii.toCharArray()) b.append(c >= '0' && c <= '9' ? (char) (zero + c - '0') : c);
    return b.toString();
  }

  private static String[] concat(String[] a, String[] b) {
    String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }
}
