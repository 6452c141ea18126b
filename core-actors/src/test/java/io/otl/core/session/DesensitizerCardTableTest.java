package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;

/**
 * A message holding a pasted table of card numbers ("4111 1111 1111 1111 4111 …", 3,250 cards in 65,000
 * characters: one card candidate, as the groups run on) is desensitized in time linear in its length.
 * Each card found sent the rest of the run back to the pattern and to {@link PaymentNumbers#bankCard},
 * which split all of it again: quadratic, seconds inside the session, and the request answered 503
 * (trial t105, over HTTP and Kafka alike). Measured as characters read, not as time.
 */
class DesensitizerCardTableTest {
  private static final String TABLE = "4111 1111 1111 1111 ".repeat(3_250).trim();

  /** A text that counts its reads. */
  private static final class Reads implements CharSequence {
    private final String text;
    long reads;

    Reads(String text) {
      this.text = text;
    }

    @Override
    public int length() {
      return text.length();
    }

    @Override
    public char charAt(int index) {
      reads++;
      return text.charAt(index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      reads += end - start;
      return text.subSequence(start, end);
    }

    @Override
    public String toString() {
      return text;
    }
  }

  @Test
  void theFirstCardOfALongRunIsFoundWithoutReadingTheRest() {
    Reads t = new Reads(TABLE);
    assertArrayEquals(new int[] {0, 19}, PaymentNumbers.bankCard(t, 0, TABLE.length()));
    assertTrue(t.reads < 200, "read " + t.reads + " characters of " + TABLE.length());
  }

  @Test
  void theRuleWalksATableOfCardsReadingEachCharacterABoundedNumberOfTimes() {
    Reads seen = new Reads(TABLE);
    Desensitizer.Rule rule = new Desensitizer.Rule("bank_card", PiiRules.BANK_CARD, "[BANK_CARD]",
        PaymentNumbers::bankCard);
    Matcher m = PiiRules.BANK_CARD.matcher(seen);
    int cards = 0;
    for (int[] span = rule.find(m, TABLE, 0); span != null; span = rule.findAfter(m, TABLE, span[1])) {
      assertEquals(cards * 20, span[0]);
      cards++;
    }
    assertEquals(3_250, cards);
    assertTrue(seen.reads < 10L * TABLE.length(), "the pattern read " + seen.reads + " characters of "
        + TABLE.length());
  }

  @Test
  void everyCardOfTheTableIsReplacedAndWhatSurroundsCardsStays() {
    Desensitizer d = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());
    assertEquals("[BANK_CARD] ".repeat(3_250).trim(), d.apply(TABLE));
    // A run's rest that holds no card ends the walk there; a card after it is still found.
    assertEquals("[BANK_CARD] 12 34 [BANK_CARD] x 5", d.apply("4111 1111 1111 1111 12 34 5500-0000-0000-0004 x 5"));
    assertEquals("[BANK_CARD]-99 and [BANK_CARD]",
        d.apply("4111-1111-1111-1111-99 and 4111111111111111"));
  }
}
