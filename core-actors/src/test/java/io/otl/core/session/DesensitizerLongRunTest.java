package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A text with an '@' anywhere and a long run of letters and digits (a hex dump, a token without
 * punctuation) is desensitized in time linear in its length. The e-mail pattern tried a local part from
 * every position of such a run, quadratic: a 24 KB message took 12 s, and at the default
 * max-text-length (64 KB) minutes, inside the session, whose writes timed out as 503s (trial t66).
 */
class DesensitizerLongRunTest {
  private final Desensitizer d = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());

  @Test
  void aLongRunBesideAnAtSignIsScannedInLinearTime() {
    String run = "y".repeat(64_000);
    for (String text : List.of("@ " + run, run + " @", "reach me at jo@example.com, dump: " + run,
        "%40 " + run, "@ " + "0123456789abcdef".repeat(4_000))) {
      long start = System.nanoTime();
      String out = d.apply(text);
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertTrue(ms < 3_000, "took " + ms + " ms for a text of " + text.length() + " characters");
      assertEquals(text.replace("jo@example.com", "[EMAIL]"), out);
    }
  }

  @Test
  void addressesAreStillFoundWhereTheirRunStarts() {
    assertEquals("mail [EMAIL] now", d.apply("mail jo.doe+x@example.com now"));
    assertEquals("to:[EMAIL]", d.apply("to:jo@example.com"));
    assertEquals("[EMAIL]", d.apply("alice%40example%2Ecom"));
    assertEquals("say [EMAIL]", d.apply("say \"jane doe\"@example.com"));
  }
}
