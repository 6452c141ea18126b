package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Test;

/**
 * An ID card number typed with ASCII digits and a full-width check character ({@code Ｘ}, U+FF38, as an
 * IME in full-width mode types the letter after the digits were pasted or typed half-width). Only
 * full-width digits, '＠', '％' and '＋' made the text be read through NFKC, so the number did not
 * match and was journaled, answered and exported as sent (trial t159).
 */
class DesensitizerFullWidthCheckCharacterTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  @Test
  void anIdNumberEndingInAFullWidthXIsTaken() {
    assertEquals("v [ID_CARD] end", d.apply("v 11010519491231002Ｘ end"));
    assertEquals("v [ID_CARD] end", d.apply("v 11010519491231002ｘ end"));
    assertEquals("身份证号：[ID_CARD]，谢谢", d.apply("身份证号：11010519491231002Ｘ，谢谢"));
    assertEquals("v [ID_CARD] end", d.apply("v 110105 19491231 002Ｘ end"));
  }

  @Test
  void anIdWithAFullWidthXIsRefusedAsAnId() {
    assertNotNull(PiiRules.looksLike("id-11010519491231002Ｘ"));
  }

  @Test
  void aFullWidthXWithoutSuchANumberChangesNothing() {
    assertEquals("型号：ＸＬ，数量 12", d.apply("型号：ＸＬ，数量 12"));
    assertEquals("订单 1234567 尺码Ｘ", d.apply("订单 1234567 尺码Ｘ"));
  }
}
