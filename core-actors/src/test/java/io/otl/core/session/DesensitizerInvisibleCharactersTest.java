package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An invisible format character (zero-width space, soft hyphen, word joiner, BOM, a bidi mark) inside
 * an e-mail address or a number hid it from every rule, and the journal kept it raw although a reader
 * sees {@code alice@example.com} (trial t2; text pasted from web pages and chat apps carries them).
 */
class DesensitizerInvisibleCharactersTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  @ParameterizedTest
  @ValueSource(strings = {"\u200B", "\u200C", "\u00AD", "\u2060", "\uFEFF", "\u200E", "\u202E"})
  void aFormatCharacterInsidePersonalDataDoesNotHideIt(String hidden) {
    assertEquals("mail [EMAIL] now", d.apply("mail alice" + hidden + "@example.com now"));
    assertEquals("mail [EMAIL] now", d.apply("mail alice@example" + hidden + ".com now"));
    assertEquals("call [PHONE]", d.apply("call 1381" + hidden + "2345678"));
    assertEquals("card [BANK_CARD]", d.apply("card 4111" + hidden + "1111" + hidden + "1111" + hidden + "1111"));
    assertEquals("id [ID_CARD]", d.apply("id 110105" + hidden + "19491231002X"));
    assertTrue(Desensitizer.builtInScanner().findings("alice" + hidden + "@example.com").contains("email"));
  }

  @Test
  void aTextWithoutPersonalDataKeepsItsFormatCharacters() {
    String family = "family \uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67 soft\u00ADhyphen v1.2\u200B3";
    assertEquals(family, d.apply(family));
    // An emoji's zero-width joiner stays joined beside a finding: only one between ASCII characters goes.
    assertEquals("\uD83D\uDC68\u200D\uD83D\uDC69 [EMAIL]", d.apply("\uD83D\uDC68\u200D\uD83D\uDC69 a\u200B@example.com"));
  }
}
