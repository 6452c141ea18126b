package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The scanner's cheap pre-checks on their own: what it counts, when it folds (NFKC) and when it
 * deliberately does not, and the identifier rule at the pre-checks' thresholds. A wrong count or a
 * missed fold would let PII through {@link Desensitizer} and the id checks without any pattern
 * ever seeing it; the desensitizer tests reach these branches only with typical samples.
 */
class PiiRulesTest {

  @Test
  void theScanCountsAsciiDigitsAndSeesAtAndPercent() {
    PiiRules.Scan s = PiiRules.scan("a0b9/:@%");
    assertEquals("a0b9/:@%", s.text());
    assertEquals(2, s.digits(), "'0' and '9' count, '/' and ':' next to them do not");
    assertTrue(s.at());
    assertTrue(s.percent());

    PiiRules.Scan none = PiiRules.scan("plain text");
    assertEquals(0, none.digits());
    assertFalse(none.at());
    assertFalse(none.percent());
    assertFalse(none.mayHoldEmail());
  }

  @Test
  void anEmailIsPossibleOnlyWithAnAtOrAnEncodedOne() {
    assertTrue(PiiRules.scan("x@y").mayHoldEmail());
    assertTrue(PiiRules.scan("x%40y").mayHoldEmail());
    assertFalse(PiiRules.scan("50% off").mayHoldEmail());
    assertFalse(PiiRules.scan("40 percent").mayHoldEmail());
  }

  @Test
  void fullWidthAndSmallFormsFoldToTheAsciiThePatternsLookFor() {
    assertEquals("0123456789", PiiRules.fold("０１２３４５６７８９"));
    PiiRules.Scan digits = PiiRules.scan("tel １３８");
    assertEquals(3, digits.digits());
    assertEquals("a@b", PiiRules.fold("a＠b"));
    assertTrue(PiiRules.scan("a＠b").at());
    assertTrue(PiiRules.scan("５０％").percent());
    assertEquals("+86", PiiRules.fold("＋86"));
    assertEquals("a@b", PiiRules.fold("a﹫b"));
    assertEquals("50%", PiiRules.fold("50﹪"));
    assertEquals("+1", PiiRules.fold("﹢1"));
  }

  @Test
  void digitsOfOtherFormsFoldToo() {
    // Circled (OTHER_NUMBER) and mathematical bold digits (outside the BMP, a surrogate pair).
    assertEquals("138", PiiRules.fold("①③⑧"));
    assertEquals("138", PiiRules.fold("\uD835\uDFCF\uD835\uDFD1\uD835\uDFD6"));
    assertEquals(3, PiiRules.scan("\uD835\uDFCF\uD835\uDFD1\uD835\uDFD6").digits());
    // An emoji is a surrogate pair that is no digit: nothing to fold, the text is kept as it is.
    String emoji = "ok \uD83D\uDE00 ﬁ";
    assertEquals(emoji, PiiRules.fold(emoji));
    // A lone high surrogate at the very end must not be read past the text.
    assertEquals("x\uD835", PiiRules.fold("x\uD835"));
  }

  @Test
  void chineseProseAndItsPunctuationAreNotNormalisedWithoutAnAt() {
    // U+FF0C full-width comma, U+FF01 '!' and U+FF5E '~' (the ends of the full-width range): kept
    // without an '@' (normalising them would cost time on every Chinese message for nothing)...
    String prose = "你好，世界！～㐀鿿";
    assertEquals(prose, PiiRules.fold(prose));
    // ...but folded next to an '@', where a full-width '．' could hide an e-mail's domain.
    assertEquals("张@例子.中国", PiiRules.fold("张@例子．中国"));
    assertEquals("a@b!", PiiRules.fold("a@b！"));
    assertEquals("a@b~", PiiRules.fold("a@b～"));
    // Just outside the range: U+FF00 and U+FF5F are no full-width ASCII, nothing to fold for.
    assertEquals("a@b\uFF5F", PiiRules.fold("a@b\uFF5F"));
  }

  @Test
  void identifiersAreRefusedOnlyWhenAPatternMatchesAfterThePreChecks() {
    assertNull(PiiRules.looksLike(null));
    assertNull(PiiRules.looksLike(""));
    assertNull(PiiRules.looksLike("session-42"));
    // Exactly 15 digits: the old ID card form passes the pre-check.
    assertEquals("an ID card number", PiiRules.looksLike("110105900307123"));
    assertEquals("an ID card number", PiiRules.looksLike("ID11010519900307127X"));
    // Exactly 7 digits: the shortest E.164 number passes the pre-check.
    assertEquals("a phone number", PiiRules.looksLike("+1234567"));
    assertEquals("a phone number", PiiRules.looksLike("tel_13889012345"));
    assertEquals("a phone number", PiiRules.looksLike("tel １３８８９０１２３４５"));
    assertEquals("an e-mail address", PiiRules.looksLike("a.b@example.com"));
    assertEquals("an e-mail address", PiiRules.looksLike("a.b%40example.com"));
    assertEquals("an e-mail address", PiiRules.looksLike("a.b＠example.com"));
    assertNull(PiiRules.looksLike("50%-off"));
    assertNull(PiiRules.looksLike("user@localhost"));
  }

  @Test
  void aCanonicalUuidIsOpaqueEvenWithAPhoneShapedRun() {
    String uuid = "13889012-3456-4abc-8def-138890123456";
    assertNull(PiiRules.looksLike(uuid));
    assertNull(PiiRules.looksLike(uuid.toUpperCase()));
    assertTrue(PiiRules.isUuid(uuid));
    assertFalse(PiiRules.isUuid(uuid.substring(1)));
    assertFalse(PiiRules.isUuid(uuid + "0"));
    assertFalse(PiiRules.isUuid("13889012-3456-4abc-8def-13889012345g"));
    // Not canonical (no dashes): its digits are read like any other id's.
    assertEquals("a phone number", PiiRules.looksLike("x13889012345x"));
  }
}
