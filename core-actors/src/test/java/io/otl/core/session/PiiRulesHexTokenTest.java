package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A standalone token of 16 or more hex digits is random, not someone's number: an upstream's response
 * id ({@code chatcmpl-<32 hex>}) held a phone-shaped run about once in a hundred, was stored with a
 * placeholder, and per-turn feedback forwarded to the Trinity proxy named an id it never gave; a
 * client's {@code secrets.token_hex(8)} event id held one once in 1,800, and its batch was refused
 * (trial t120: 24 hex digits were needed before).
 */
class PiiRulesHexTokenTest {
  private static final Desensitizer DEFAULT = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());

  @ParameterizedTest
  @ValueSource(strings = {
    "chatcmpl-e56b96ab1a13478386902c0d5beb3db6", // the id CI met: 13478386902 inside
    "e56b96ab1a13478386902c0d5beb3db6",
    "chatcmpl-tool-13812345678abcdef0123456789",
    "sha 6162c270b19592737038efc8315a0dd0c88cdbd9bc53642ec67d2c6af0494d58 ok",
    "object 5f13812345678aaaaaaaaaaa",
    "5f13812345678aaaaaaaaaa",
    "ev-7c0a18890303618e",
    "5f13812345678aaa",
  })
  void aPhoneShapedRunInsideAHexTokenStaysAsItIs(String text) {
    assertEquals(text, DEFAULT.apply(text));
    assertEquals(text, DEFAULT.applyToId(text));
    assertEquals(List.of(), DEFAULT.findings(text));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    // glued to a letter that is not hex: the token is not hex from end to end
    "tel_13889012345|tel_[PHONE]",
    "ID110107199003071288|ID[ID_CARD]",
    "g5f13812345678aaaaaaaaaaaa|g5f[PHONE]aaaaaaaaaaaa",
    // too short to be a random token
    "ab13812345678cd|ab[PHONE]cd",
    "c13812345678|c[PHONE]",
    "f18890303618|f[PHONE]",
    "abcd13812345678|abcd[PHONE]",
    // an ID card number with a few hex letters glued to it is not a random token of 20
    "fD222601198909138180|fD[ID_CARD]",
    "Fa496384195409269275|Fa[ID_CARD]",
    // digits only: no letter, so not a hex token (and the run is not cut from a longer one)
    "call 13812345678 now|call [PHONE] now",
    // a separated number is never inside a token
    "abcdef0123456789 138-1234-5678 abcdef0123456789|abcdef0123456789 [PHONE] abcdef0123456789",
    "chatcmpl-e56b96ab1a13478386902c0d5beb3db6 13812345678|chatcmpl-e56b96ab1a13478386902c0d5beb3db6 [PHONE]",
  })
  void digitsOutsideAStandaloneHexTokenAreStillFound(String text, String stored) {
    assertEquals(stored, DEFAULT.apply(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"sess-e56b96ab1a13478386902c0d5beb3db6", "e56b96ab1a13478386902c0d5beb3db6",
      "e13-a7f18890303618c4"})
  void anIdHoldingAHexTokenIsNotRefused(String id) {
    assertNull(PiiRules.looksLike(id));
  }

  @ParameterizedTest
  @ValueSource(strings = {"tel_13889012345", "sess-ab13812345678cd", "e13-f18890303618", "c13812345678"})
  void anIdWithAPhoneOutsideATokenStillIs(String id) {
    assertEquals("a phone number", PiiRules.looksLike(id));
  }
}
