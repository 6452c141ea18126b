package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The cut every door that cannot resend a text shorter makes (gateway, OpenTelemetry, AgentScope hook). */
class TextPrefixesTest {
  @Test
  void aPrefixNeverSplitsASurrogatePair() {
    String emoji = "ab\uD83D\uDE00cd";
    assertEquals("ab", TextPrefixes.prefix(emoji, 3), "the emoji's high surrogate alone is left out");
    assertEquals("ab\uD83D\uDE00", TextPrefixes.prefix(emoji, 4));
    assertEquals(emoji, TextPrefixes.prefix(emoji, 100));
  }

  @Test
  void aJsonStringFitsTheLimitWithItsQuotesAndEscapes() {
    assertEquals("\"abcd\"", TextPrefixes.jsonString("abcdefgh", 6).toString());
    // each quote renders as two characters: the whole text, 12 rendered, is cut to a start that fits
    String quoted = "a\"b\"c\"d";
    var cut = TextPrefixes.jsonString(quoted, 7);
    assertTrue(cut.toString().length() <= 7, cut.toString());
    assertTrue(quoted.startsWith(cut.textValue()) && !cut.textValue().isEmpty(), cut.textValue());
    assertEquals("\"\"", TextPrefixes.jsonString("abc", 2).toString());
    assertNull(TextPrefixes.jsonString("abc", 1), "not even \"\" fits");
  }
}
