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

  /**
   * Java's regex recurses once per repetition of a group: digit groups "1 1 1 …" (the card candidate) and
   * labels "x@a.a.a.…" (the e-mail's domain) in one 40-64 KB message overflowed the stack, and the
   * StackOverflowError, fatal to Pekko, stopped the node's JVM: one request from any client (trial t66).
   */
  @Test
  void longRepeatedGroupsDoNotOverflowTheStack() {
    for (String text : List.of("1 ".repeat(32_000), "1-".repeat(32_000), "x@" + "a.".repeat(32_000),
        "x@" + "a.".repeat(32_000) + "com", "x%40" + "a%2E".repeat(16_000))) {
      d.apply(text);
      PiiRules.looksLike(text);
    }
    assertEquals("[EMAIL]", d.apply("x@" + "a.".repeat(100) + "com"));
  }

  @Test
  void addressesAreStillFoundWhereTheirRunStarts() {
    assertEquals("mail [EMAIL] now", d.apply("mail jo.doe+x@example.com now"));
    assertEquals("to:[EMAIL]", d.apply("to:jo@example.com"));
    assertEquals("[EMAIL]", d.apply("alice%40example%2Ecom"));
    assertEquals("say [EMAIL]", d.apply("say \"jane doe\"@example.com"));
  }
}
