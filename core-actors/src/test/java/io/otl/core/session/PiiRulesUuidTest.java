package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A canonical UUID is 8-4-4-4-12 hex digits of either case; one character off and it is text. */
class PiiRulesUuidTest {
  private static final String EDGES = "09afAF09-afAF-09af-AF09-afAF09afAF09";

  @Test
  void everyHexDigitAtTheEdgesOfItsRangeIsAccepted() {
    assertTrue(PiiRules.isUuid(EDGES));
  }

  @Test
  void theCharactersNextToTheHexRangesAreNot() {
    for (char c : new char[] {'/', ':', '`', 'g', '@', 'G', '-'}) {
      String one = c + EDGES.substring(1);
      assertFalse(PiiRules.isUuid(one), one);
    }
    assertFalse(PiiRules.isUuid("09afAF09a-afAF-09af-AF09-afAF09afAF0"), "a dash out of place");
  }
}
