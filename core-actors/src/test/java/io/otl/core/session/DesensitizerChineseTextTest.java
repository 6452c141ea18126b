package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Personal data in Chinese text, where nothing but the script separates a number or an address from
 * the words around it (trial t102). Before: {@code alice@xn--fsqu00a.xn--fiqs8s} (the punycode of
 * 例子.中国) was stored {@code [EMAIL]--fiqs8s}, the address's last label raw, and Chinese glued after
 * an address's ASCII top-level domain was taken for part of it.
 */
class DesensitizerChineseTextTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  @Test
  void numbersGluedToChineseWordsAreTaken() {
    assertEquals("我的电话是[PHONE]谢谢", d.apply("我的电话是13812345678谢谢"));
    assertEquals("电话[PHONE]", d.apply("电话+86 138 1234 5678"));
    assertEquals("身份证号[ID_CARD]，请核实", d.apply("身份证号11010519491231002X，请核实"));
    assertEquals("身份证[ID_CARD]号码", d.apply("身份证11010519491231002x号码"));
  }

  @Test
  void chinesePunctuationIsKeptWhenTheNumberIsFullWidth() {
    assertEquals("电话：[PHONE]，谢谢！", d.apply("电话：13812345678，谢谢！"));
    // Full-width digits (a Chinese IME's) were read through NFKC, which folded the whole text: 电话:[PHONE],谢谢!
    assertEquals("电话：[PHONE]，谢谢！", d.apply("电话：１３８１２３４５６７８，谢谢！"));
    assertEquals("（邮箱：[EMAIL]）", d.apply("（邮箱：ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ）"));
    assertEquals("身份证：[ID_CARD]。", d.apply("身份证：１１０１０５１９４９１２３１００２Ｘ。"));
    // Another character NFKC changes (① is "1") still folds the text as before.
    assertEquals("①电话:[PHONE],谢谢", d.apply("①电话：１３８１２３４５６７８，谢谢").replace("1", "①"));
  }

  @Test
  void aPunycodeDomainIsTakenWhole() {
    assertEquals("[EMAIL]", d.apply("alice@xn--fsqu00a.xn--fiqs8s"));
    assertEquals("发给 [EMAIL] 了", d.apply("发给 alice@mail.xn--fsqu00a.XN--FIQS8S 了"));
  }

  @Test
  void chineseAfterAnAsciiDomainIsNotPartOfTheAddress() {
    assertEquals("联系[EMAIL]谢谢", d.apply("联系 alice@example.com谢谢").replace(" ", ""));
    assertEquals("邮件 [EMAIL]好的", d.apply("邮件 bob.smith@mail.example.org好的"));
    // An internationalized domain is taken whole; where its Chinese top-level label ends, no rule can tell.
    assertEquals("[EMAIL]", d.apply("张三@例子.中国"));
    assertEquals("mail [EMAIL]", d.apply("mail δοκιμή@παράδειγμα.δοκιμή"));
    assertEquals("[EMAIL]", d.apply("alice@bücher.de"));
  }

  @Test
  void textBeforeAnAddressWithNoSpaceIsTakenWithIt() {
    // The local part starts where its run of letters starts: Chinese before it, with no space or
    // punctuation, cannot be told from a Chinese local part (张三@例子.中国), so it goes with it.
    assertEquals("[EMAIL]谢谢", d.apply("我的邮箱是alice@example.com谢谢"));
    assertEquals("我的邮箱是：[EMAIL]谢谢", d.apply("我的邮箱是：alice@example.com谢谢"));
  }

  /**
   * Beside full-width forms, characters NFKC reads as a digit, a letter or a stop still fold the text: the
   * one-for-one fold of full-width forms alone left them, and the finding with them (review of t102's change).
   */
  @Test
  void charactersNfkcReadsAsDigitsLettersOrStopsStillFold() {
    String id = d.apply("身份证：１１０１０５１９４９１２３１００２Ⅹ");   // Roman numeral ten as the check character
    assertTrue(id.contains("[ID_CARD]") && !id.contains("１１０１０５") && !id.contains("110105"), id);
    for (String stop : new String[] {"\uFE52", "\u2024"}) {         // small full stop, one dot leader
      String mail = d.apply("邮箱：alice@example" + stop + "com，谢谢");
      assertTrue(mail.contains("[EMAIL]") && !mail.contains("alice"), mail);
    }
    String phone = d.apply("电话：\uFE59１３９\uFE5A１２３４５６７８");     // small parentheses
    assertTrue(phone.contains("[PHONE]") && !phone.contains("１２３４５６７８") && !phone.contains("12345678"), phone);
  }

  @Test
  void aTopLevelLabelMixingScriptsIsStillALabel() {
    assertEquals("[EMAIL]", d.apply("alice@example.c\u043Em")); // a Cyrillic o
    assertFalse(d.apply("write to alice@example.c\u043Em now").contains("alice"));
  }
}
