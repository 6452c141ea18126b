package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The desensitizer's skip rules at their thresholds: a rule skipped one digit too early lets the
 * shortest number of its kind through unredacted, and a number node one digit too short is never
 * looked at. Also what comes back when nothing matched (the original text, not its folded form).
 */
class DesensitizerThresholdsTest {
  private static final Desensitizer ALL = new Desensitizer(true, List.of("id_card", "phone", "email"), List.of());

  /** A rule as the desensitizer builds it: a built-in name with its own pattern, or a custom one. */
  private static Desensitizer.Rule rule(String name) {
    java.util.regex.Pattern pattern = switch (name) {
      case "phone" -> PiiRules.PHONE;
      case "id_card" -> PiiRules.ID_CARD;
      case "email" -> PiiRules.EMAIL;
      default -> java.util.regex.Pattern.compile("x");
    };
    return new Desensitizer.Rule(name, pattern, "[X]");
  }

  @Test
  void eachBuiltInRuleRunsFromTheShortestTextItCanMatch() {
    assertTrue(rule("phone").mayMatch(PiiRules.scan("+1234567")));
    assertFalse(rule("phone").mayMatch(PiiRules.scan("+123456")));
    assertTrue(rule("id_card").mayMatch(PiiRules.scan("123456789012345")));
    assertFalse(rule("id_card").mayMatch(PiiRules.scan("12345678901234")));
    assertTrue(rule("email").mayMatch(PiiRules.scan("a@b")));
    assertFalse(rule("email").mayMatch(PiiRules.scan("ab")));
    assertTrue(rule("custom").mayMatch(PiiRules.scan("")));

    assertEquals("call [PHONE]", ALL.apply("call +1234567"));
    assertEquals("id [ID_CARD]", ALL.apply("id 110105900307123"));
    assertEquals(List.of("phone"), ALL.findings("call +1234567"));
    assertEquals(List.of("id_card"), ALL.findings("id 110105900307123"));
    assertEquals(List.of(), ALL.findings("call +123456"));
    assertEquals(List.of(), ALL.findings(null));
  }

  @Test
  void integersFromSevenDigitsAreScannedShorterOnesAreLeftAsNumbers() {
    Desensitizer sixDigits = new Desensitizer(true, List.of(), List.of("\\d{6}"));
    JsonNode six = IntNode.valueOf(123456);
    assertSame(six, sixDigits.apply(six), "a number of fewer than 7 digits is not looked at");
    assertEquals("[REDACTED]7", sixDigits.apply(IntNode.valueOf(1234567)).textValue());
    JsonNode clean = LongNode.valueOf(1234567L);
    assertSame(clean, ALL.apply(clean), "a number no rule matches stays a number");
    assertEquals("[PHONE]", ALL.apply(LongNode.valueOf(13889012345L)).textValue());
  }

  @Test
  void aTextWithoutMatchComesBackAsSentAndOneWithAMatchComesBackFolded() {
    String fullWidth = "价格：１２３元";
    assertSame(fullWidth, ALL.apply(fullWidth));
    // Full-width forms are folded one for one for matching only: the text around the finding as sent (trial t102).
    assertEquals("电话：[PHONE]", ALL.apply("电话：１３８８９０１２３４５"));
    assertEquals("①:[PHONE]", ALL.apply("①：１３８８９０１２３４５").replace("1", "①"), "NFKC where more than these");
    assertSame(fullWidth, new Desensitizer(false, List.of("phone"), List.of()).apply(fullWidth));
    assertEquals("", ALL.apply(""));
    String uuid = "13889012-3456-4abc-8def-138890123456";
    assertSame(uuid, ALL.applyToId(uuid));
    assertEquals("m-[PHONE]", ALL.applyToId("m-13889012345"));
  }

  @Test
  void jsonIsCopiedWholeWithOnlyThePiiReplaced() throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode in = json.readTree("{\"k\": [\"a\", \"tel 13889012345\", 7, null, true, {\"x@y.com\": 1.5}]}");
    assertEquals(json.readTree("{\"k\": [\"a\", \"tel [PHONE]\", 7, null, true, {\"[EMAIL]\": 1.5}]}"),
        ALL.apply(in));
    Desensitizer off = new Desensitizer(false, List.of("phone"), List.of());
    assertFalse(off.enabled());
    assertTrue(ALL.enabled());
    assertSame(in, off.apply(in));
    Map<String, String> meta = Map.of("tel", "13889012345");
    assertSame(meta, off.apply(meta));
    assertEquals(Map.of("tel", "[PHONE]"), ALL.apply(meta));
  }
}
