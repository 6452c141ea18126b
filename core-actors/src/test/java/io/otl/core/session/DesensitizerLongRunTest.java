package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A text with an '@' anywhere and a long run of letters and digits (a hex dump, a token without
 * punctuation) is desensitized in time linear in its length. The e-mail pattern tried a local part from
 * every position of such a run, quadratic: a 24 KB message took 12 s, and at the default
 * max-text-length (64 KB) minutes, inside the session, whose writes timed out as 503s (trial t66).
 */
class DesensitizerLongRunTest {
  private final Desensitizer d = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());

  /**
   * A hang guard, not a speed target (those are benchmarks): before the fix these five texts took many
   * minutes together; linear, they take milliseconds.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aLongRunBesideAnAtSignIsScannedInLinearTime() {
    String run = "y".repeat(64_000);
    for (String text : List.of("@ " + run, run + " @", "reach me at jo@example.com, dump: " + run,
        "%40 " + run, "@ " + "0123456789abcdef".repeat(4_000))) {
      assertEquals(text.replace("jo@example.com", "[EMAIL]"), d.apply(text));
    }
  }

  /**
   * An operator's custom pattern may repeat a group, which Java's regex runs by recursion: on a long
   * text it overflowed the stack, and the error, fatal to Pekko, stopped the node. What the rule could
   * not scan, from where its search began, is stored as its placeholder (never raw), and the scan reports it as a finding.
   */
  @Test
  void aCustomPatternThatOverflowsTheStackRedactsTheRestOfTheText() {
    Desensitizer custom = new Desensitizer(true, Desensitizer.BUILT_IN, List.of("(?:a|b)+c"));
    String text = "order 7 notes: " + "ab".repeat(200_000);
    long before = StackOverflows.count();
    String out = custom.apply(text);
    assertTrue(StackOverflows.count() > before, "the pattern did overflow here: the test proves nothing otherwise");
    // from where the rule's search began: here the start of the text
    assertEquals(Desensitizer.CUSTOM_PLACEHOLDER, out);
    assertTrue(custom.findings(text).contains("custom"), custom.findings(text).toString());
    assertEquals("order 7: [REDACTED]", custom.apply("order 7: abababc"), "short texts match as before");
  }

  /**
   * Java's regex recurses once per repetition of a group: digit groups "1 1 1 …" (the card candidate) and
   * labels "x@a.a.a.…" (the e-mail's domain) in one 40-64 KB message overflowed the stack, and the
   * StackOverflowError, fatal to Pekko, stopped the node's JVM: one request from any client (trial t66).
   */
  @Test
  void longRepeatedGroupsDoNotOverflowTheStack() {
    long overflows = StackOverflows.count();
    for (String text : List.of("1 ".repeat(32_000), "1-".repeat(32_000), "x@" + "a.".repeat(32_000),
        "x@" + "a.".repeat(32_000) + "com", "x%40" + "a%2E".repeat(16_000))) {
      d.apply(text);
      PiiRules.looksLike(text);
    }
    // the built-in patterns themselves no longer overflow: the guard for custom ones did not step in
    assertEquals(overflows, StackOverflows.count());
    assertEquals("1 ".repeat(32_000), d.apply("1 ".repeat(32_000)));
    assertEquals("[EMAIL]", d.apply("x@" + "a.".repeat(100) + "com"));
  }

  /** The linear patterns find what the backtracking ones found (review t70). */
  @Test
  void aCardBeforeAWordWithDigitsAndAnAddressGluedToAnotherAreStillFound() {
    assertEquals("card [BANK_CARD] 3D-Secure", d.apply("card 4111 1111 1111 1111 3D-Secure"));
    assertEquals("[BANK_CARD]-2fa ok", d.apply("4242-4242-4242-4242-2fa ok"));
    assertEquals("cc=[EMAIL][EMAIL]", d.apply("cc=jo@example.com%20alice@corp.com"));
    for (String glue : List.of("%2C", "-", "+", "_", ".")) {
      String out = d.apply("jo@example.com" + glue + "alice@corp.com");
      assertTrue(!out.contains("alice") && !out.contains("jo@"), glue + ": " + out);
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
