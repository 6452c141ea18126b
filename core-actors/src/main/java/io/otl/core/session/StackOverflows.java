package io.otl.core.session;

import io.otl.core.LogThrottle;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Texts a desensitizer rule could not scan (its regex overflowed the stack) and so replaced whole: one
 * WARN a minute at most, naming the rule and the length, never the text.
 */
final class StackOverflows {
  private static final Logger log = LoggerFactory.getLogger(Desensitizer.class);
  private static final LogThrottle throttle = new LogThrottle(Duration.ofMinutes(1));
  private static final AtomicLong count = new AtomicLong();

  private StackOverflows() {}

  static void seen(String rule, int length) {
    count.incrementAndGet();
    long n = throttle.occurred();
    if (n > 0) {
      log.warn("desensitize rule {} overflowed the stack on a text of {} characters: the rest of the text is "
          + "stored as the rule's placeholder ({} such texts since the last such line); a custom pattern with a "
          + "repeated group, e.g. (a|b)+, recurses once per repetition: write it with a character class or a "
          + "possessive quantifier", rule, length, n);
    }
  }

  /** Texts replaced so since the JVM started. */
  static long count() {
    return count.get();
  }
}
