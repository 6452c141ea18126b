package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An e-mail address with its '@' (and perhaps its dots) written in brackets to fool harvesters
 * ({@code alice(at)example.com}, {@code alice [at] example [dot] com}): stored as sent before trial t162.
 * The words "at" and "dot" without brackets are prose ("look at example dot com") and stay.
 */
class DesensitizerObfuscatedEmailTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  @Test
  void aBracketedAtIsAnAddress() {
    assertEquals("mail [EMAIL] please", d.apply("mail alice(at)example.com please"));
    assertEquals("[EMAIL]", d.apply("alice[at]example[dot]com"));
    assertEquals("write to [EMAIL].", d.apply("write to alice [at] example [dot] com."));
    assertEquals("[EMAIL]", d.apply("j.doe{AT}mail.example.co.uk"));
    assertEquals("[EMAIL]", d.apply("alice (at) example (dot) com"));
    assertEquals("[EMAIL]", d.apply("alice<at>example.com"));
    assertEquals("[EMAIL]", d.apply("alice@example[dot]com"));
    assertEquals("[EMAIL]", d.apply("alice[@]example.com"));
    assertEquals("联系[EMAIL]谢谢", d.apply("联系alice(at)example.com谢谢"));
    assertTrue(d.findings("bob(at)corp.example.org").contains("email"));
  }

  @Test
  void proseStays() {
    for (String prose : new String[] {
        "look at example dot com", "alice at example dot com", "meet (at) noon", "the value (at) index 3",
        "see [at] the end", "press (dot) to continue", "f(a)(b)", "arr[i][at]", "price (at) cost, 5 units"}) {
      assertEquals(prose, d.apply(prose), prose);
    }
  }

  /** A hang and stack guard, not a speed target: long runs of labels, brackets and '@'s (as DesensitizerLongRunTest). */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void longTextsAreScannedInLinearTimeWithoutOverflowingTheStack() {
    long overflows = StackOverflows.count();
    for (String text : List.of("x(at)" + "a.".repeat(32_000), "x [at] " + "a [dot] ".repeat(8_000), "(at)".repeat(16_000),
        "y(at)".repeat(12_000), "@ " + "y".repeat(64_000) + " (at) ", "a@".repeat(32_000))) {
      d.apply(text);
    }
    assertEquals(overflows, StackOverflows.count());
    assertEquals("[EMAIL] " + "(at) ".repeat(1_000), d.apply("x(at)a.com " + "(at) ".repeat(1_000)));
  }
}
