package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.LongNode;
import com.typesafe.config.ConfigFactory;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * bank_card, iban and secret (a trial found cards, IBANs and API keys stored raw): what each finds,
 * and the look-alikes each must leave alone (Luhn-invalid numbers, millisecond timestamps, ISBNs,
 * UUIDs, order ids, an IBAN with a wrong check, "sk-" inside words). Keys are assembled at run time
 * so that no token-shaped literal sits in the source.
 */
class DesensitizerFinanceAndSecretsTest {
  /** What a node runs with when the configuration does not list patterns (reference.conf). */
  private static final Desensitizer DEFAULT = SessionSettings.fromConfig(
      ConfigFactory.load().getConfig("agentscope.training")).desensitizer();

  private static String repeat(String s, int n) {
    return s.repeat(n);
  }

  @Test
  void theDefaultPatternsAreAllSixBuiltIns() {
    assertEquals(List.of("phone", "id_card", "email", "bank_card", "iban", "secret"),
        ConfigFactory.load().getStringList("agentscope.training.data-collector.desensitize.patterns"));
    assertEquals("pay [BANK_CARD], [IBAN], key [SECRET]",
        DEFAULT.apply("pay 4111 1111 1111 1111, DE89 3704 0044 0532 0130 00, key " + openAiKey()));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    // cards: an issuer's prefix and a valid Luhn digit
    "card 4111 1111 1111 1111 ok|card [BANK_CARD] ok",
    "card 4111111111111111.|card [BANK_CARD].",
    "card 4111-1111-1111-1111|card [BANK_CARD]",
    "visa13 4222222222222|visa13 [BANK_CARD]",
    "mc 5555 5555 5555 4444|mc [BANK_CARD]",
    "mc2 2223 0031 2200 3222|mc2 [BANK_CARD]",
    "amex 3782 822463 10005|amex [BANK_CARD]",
    "discover 6011 1111 1111 1117|discover [BANK_CARD]",
    "unionpay 6200000000000005|unionpay [BANK_CARD]",
    "unionpay19 6212 3456 7890 1234 569|unionpay19 [BANK_CARD]",
    "jcb 3530 1113 3330 0000|jcb [BANK_CARD]",
    "diners 3056 9309 0259 04|diners [BANK_CARD]",
    "diners 3056 930902 5904|diners [BANK_CARD]",
    "card_4111111111111111_end|card_[BANK_CARD]_end",
    "order 12 4111 1111 1111 1111 cvv 123|order 12 [BANK_CARD] cvv 123",
    "two 4111 1111 1111 1111 5555 5555 5555 4444|two [BANK_CARD] [BANK_CARD]",
    "card 4111 1111 1111 1111 123|card [BANK_CARD] 123",
    "卡号４１１１１１１１１１１１１１１１|卡号[BANK_CARD]",
    // IBANs: a known country and a valid check
    "iban DE89 3704 0044 0532 0130 00 EUR|iban [IBAN] EUR",
    "iban DE89370400440532013000.|iban [IBAN].",
    "GB82 WEST 1234 5698 7654 32|[IBAN]",
    "nl NL91ABNA0417164300|nl [IBAN]",
    "fr FR14 2004 1010 0505 0001 3M02 606|fr [IBAN]",
    "no NO9386011117947|no [IBAN]",
    "be BE68 5390 0754 7034 THEN done|be [IBAN] THEN done",
    "mt MT84MALT011000012345MTLCAST001S|mt [IBAN]"
  })
  void cardsAndIbansWithAValidCheckAreReplaced(String in, String out) {
    assertEquals(out, DEFAULT.apply(in));
  }

  @ParameterizedTest
  @ValueSource(strings = {
    // cards
    "card 4111 1111 1111 1112",            // Luhn digit wrong
    "ts 1733126400000 ms",                   // millisecond timestamp, no issuer starts with 1
    "ts 1733126400000000000 ns",
    "isbn 9783161484100",
    "isbn 978-3-16-148410-0",
    "id 0f1e2d3c-aaaa-bbbb-4111-111111111111", // a UUID whose last groups read as a valid Visa
    "req 550e8400-e29b-41d4-a716-446655440000",
    "order ORD-20241202-000123 shipped",
    "order 4111111111111112 shipped",
    "sha 9f2c4111111111111111ab77",            // digits inside a hex hash are not a card
    "scores 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",   // small numbers do not add up to a card
    "visa 4111111111111111111111 too long",
    "amex length 3782822463100050",
    // IBANs
    "iban DE88 3704 0044 0532 0130 00",   // check digits wrong
    "iban DE89 3704 0044 0532 0130 01",   // account changed
    "code ZZ89370400440532013000",        // no such country
    "lower de89370400440532013000",
    "glued XDE89370400440532013000",
    "sku AB12CD34EF56GH78IJ90",
    "req 550E8400-E29B-41D4-A716-446655440000",
    // keys: prose and prefixes too short to be one
    "a task-based approach with risk-adjusted scores",
    "use sk-learn-compatible-pipelines-for-everyone today",
    "sk-short1",
    "desk-12345678901234567890abcdef",
    "AKIA is not a key, AKIAIOSFODNN7 neither",
    "ghp_short",
    "eyJ alone, eyJhbGci.x",
    "the xoxb-token-placeholder-here"
  })
  void lookAlikesOfCardsIbansAndKeysStayAsSentAndAreNotFindings(String text) {
    assertSame(text, DEFAULT.apply(text));
    assertEquals(List.of(), Desensitizer.builtInScanner().findings(text));
  }

  private static String openAiKey() {
    return "sk-" + "proj-" + "Ab3dEf7hIjK1mNoPqR5tUvWxYz_0123456789-AbCdEfGhIjKlMnOpQr";
  }

  @Test
  void keysOfTheKnownFormatsAreReplaced() {
    List<String> keys = List.of(
        openAiKey(),
        "sk-" + "Ab3dEf7hIjK1mNoPqR5tUvWxYz0123456789AbCdEfGhIjKl",
        "sk-" + "ant-api03-" + repeat("aB3dEf7hIjK1mNoP_", 5) + "AA",
        "sk-" + repeat("0f3a", 8),
        "sk_" + "live_" + repeat("Ab1", 9),
        "AKIA" + "IOSFODNN7EXAMPLE",
        "ghp_" + repeat("aB3d", 9),
        "github_" + "pat_" + repeat("aB3d", 14),
        "xoxb-" + "123456789012-1234567890123-" + repeat("AbCd", 6),
        "xapp-" + "1-A0123456789-" + repeat("0a1b", 4),
        "AIza" + "SyA" + repeat("bC1d", 8),
        "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c");
    for (String key : keys) {
      assertEquals("Authorization: Bearer [SECRET] sent", DEFAULT.apply("Authorization: Bearer " + key + " sent"), key);
      assertEquals("key=[SECRET]", DEFAULT.apply("key=" + key), key);
      assertEquals(List.of("secret"), Desensitizer.builtInScanner().findings("k " + key), key);
    }
  }

  @Test
  void aKeyIsReplacedWholeEvenWhenItHoldsAPhoneShapedRun() {
    String key = "sk-" + "AbCdEf13812345678GhIjKlMnOp";
    assertEquals("[SECRET]", DEFAULT.apply(key));
  }

  @Test
  void aConfigListingPatternsGetsExactlyThose() {
    Desensitizer three = new Desensitizer(true, List.of("phone", "id_card", "email"), List.of());
    String text = "4111 1111 1111 1111 DE89 3704 0044 0532 0130 00 " + openAiKey();
    assertSame(text, three.apply(text));
    assertEquals("[BANK_CARD] DE89 3704 0044 0532 0130 00 " + openAiKey(),
        new Desensitizer(true, List.of("bank_card"), List.of()).apply(text));
    assertEquals(List.of("secret", "bank_card", "iban"), Desensitizer.builtInScanner().findings(text),
        "the export's final scan knows all six, whatever the configuration");
  }

  @Test
  void anUnknownPatternNameListsTheSixAllowed() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> new Desensitizer(true, List.of("phone", "credit_card"), List.of()));
    assertEquals("desensitize.patterns contains 'credit_card'; allowed: phone, id_card, email, bank_card, iban, secret",
        e.getMessage());
  }

  @Test
  void aCardAsAJsonIntegerBecomesThePlaceholder() {
    assertEquals("[BANK_CARD]", DEFAULT.apply(LongNode.valueOf(4111111111111111L)).textValue());
    assertTrue(DEFAULT.apply(LongNode.valueOf(1733126400000L)).isIntegralNumber(), "a timestamp stays a number");
  }

  @Test
  void idsThatHoldACardAreRefusedOthersPass() {
    assertEquals("a bank card number", PiiRules.looksLike("order-4111111111111111"));
    assertEquals("a bank card number", PiiRules.looksLike("4111-1111-1111-1111"));
    assertNull(PiiRules.looksLike("order-4111111111111112"));
    assertNull(PiiRules.looksLike("run-1733126400000"));
    assertNull(PiiRules.looksLike("0f1e2d3c-aaaa-bbbb-4111-111111111111"));
    assertNull(PiiRules.looksLike("sess-0f1e2d3c-aaaa-bbbb-4111-111111111111-retry"));
    // IBAN-shaped ids pass: one upper-case id in 97 would fail the checksum by chance and be refused.
    assertNull(PiiRules.looksLike("DE89370400440532013000"));
  }

  /** {@code body} (digits) with the Luhn digit that makes it valid, or with a wrong one. */
  private static String withLuhn(String body, boolean valid) {
    for (char c = '0'; c <= '9'; c++) {
      String n = body + c;
      if (PaymentNumbers.isCard(n, 0, n.length()) == valid && (valid || PaymentNumbers.isCard(body + (char) ('0' + (c - '0' + 1) % 10), 0, n.length()))) {
        return n;
      }
    }
    throw new AssertionError(body);
  }

  /**
   * 2,000 generated cards (seeded): issuers and lengths of every brand, bare, grouped 4-4-4-4 by
   * spaces or dashes, in prose, next to CJK text or punctuation. Every valid one is replaced and its
   * digits are gone; the same number with a wrong Luhn digit is left as the other rules leave it (a
   * 15-digit Amex number can also read as an old 15-digit ID number, which the ID rule takes first).
   */
  @Test
  void generatedCardsAreAllReplacedAndTheirWrongDigitTwinsAllKept() {
    java.util.Random r = new java.util.Random(20261202L);
    String[][] brands = {{"4", "16"}, {"4", "13"}, {"4", "19"}, {"51", "16"}, {"55", "16"}, {"2221", "16"},
        {"2720", "16"}, {"34", "15"}, {"37", "15"}, {"6011", "16"}, {"65", "19"}, {"644", "16"}, {"62", "17"},
        {"3528", "16"}, {"3589", "19"}, {"36", "14"}, {"305", "14"}, {"38", "16"}};
    String[] left = {"card ", "卡号", "(", "no.", "", "\"", "pay: "};
    String[] right = {" ok", "。", ")", ".", "", "\"", " exp 12/27"};
    Desensitizer noCards = new Desensitizer(true, List.of("phone", "id_card", "email", "iban", "secret"), List.of());
    List<String> problems = new java.util.ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      String[] b = brands[r.nextInt(brands.length)];
      StringBuilder body = new StringBuilder(b[0]);
      int len = Integer.parseInt(b[1]);
      while (body.length() < len - 1) body.append((char) ('0' + r.nextInt(10)));
      for (boolean valid : new boolean[] {true, false}) {
        String digits = withLuhn(body.toString(), valid);
        String shown = digits;
        if (len == 16 && r.nextBoolean()) {
          String sep = r.nextBoolean() ? " " : "-";
          shown = String.join(sep, digits.substring(0, 4), digits.substring(4, 8), digits.substring(8, 12),
              digits.substring(12));
        }
        String text = left[r.nextInt(left.length)] + shown + right[r.nextInt(right.length)];
        String out = DEFAULT.apply(text);
        boolean ok = valid ? !out.replaceAll("[^0-9]", "").contains(digits) : out.equals(noCards.apply(text));
        if (!ok) problems.add((valid ? "kept: " : "taken: ") + text + " -> " + out);
      }
    }
    assertEquals(List.of(), problems.subList(0, Math.min(10, problems.size())), problems.size() + " problems");
  }

  @Test
  void theSecretPreCheckSeesEachPrefix() {
    for (String t : List.of("sk-", "sk_", "rk_", "ghp_", "github_pat_", "xoxb-", "xapp-", "eyJ", "AKIA", "ASIA", "AIza")) {
      assertTrue(PiiRules.scan("x " + t).secretHint(), t);
    }
    assertFalse(PiiRules.scan("a task-based plan, risk_free, eye, AKI").secretHint());
  }
}
