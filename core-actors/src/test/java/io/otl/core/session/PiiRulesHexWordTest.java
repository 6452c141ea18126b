package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A phone or ID card number glued to an English word spelled only with the letters a-f ("Added", "Faded",
 * "Decade") forms a "hex token" of 16-23 characters with five or more beside the number: the rule for random
 * tokens of 16-23 hex digits (trial t120) let such a number through in clear, in text and in ids. A random
 * {@code secrets.token_hex(8)} holding a phone-shaped run nearly always has a digit beside it too; a word
 * glued to a number has none (review t122).
 */
class PiiRulesHexWordTest {
  private static final Desensitizer DEFAULT = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "Added13812345678 to your contacts|Added[PHONE] to your contacts",
    "Faded13812345678|Faded[PHONE]",
    "call 13812345678faced|call [PHONE]faced",
    "Added110105199003071234|Added[ID_CARD]",
  })
  void aNumberGluedToAWordOfHexLettersIsStillFound(String text, String stored) {
    assertEquals(stored, DEFAULT.apply(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Added13812345678", "decade13812345678"})
  void anIdOfAWordOfHexLettersAndAPhoneIsStillRefused(String id) {
    assertEquals("a phone number", PiiRules.looksLike(id));
  }
}
