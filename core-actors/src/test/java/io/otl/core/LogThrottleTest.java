package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
  @Test
  void theFirstOccurrenceIsDueThenOneLinePerIntervalCountingWhatItStandsFor() {
    AtomicLong now = new AtomicLong(5_000_000_000L);
    LogThrottle throttle = new LogThrottle(Duration.ofSeconds(60), now::get);
    assertEquals(1, throttle.occurred(), "the first occurrence is logged at once");
    for (int i = 0; i < 999; i++) assertEquals(0, throttle.occurred());
    now.addAndGet(Duration.ofSeconds(59).toNanos());
    assertEquals(0, throttle.occurred());
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    assertEquals(1001, throttle.occurred(), "the line counts the 1,000 unlogged ones and itself");
    assertEquals(0, throttle.occurred());
    assertEquals(60, throttle.intervalSeconds());
  }

  @Test
  void concurrentOccurrencesGiveOneLineAndLoseNoCount() throws InterruptedException {
    AtomicLong now = new AtomicLong(0);
    LogThrottle throttle = new LogThrottle(Duration.ofSeconds(1), now::get);
    throttle.occurred();
    AtomicLong lines = new AtomicLong();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 10_000; i++) if (throttle.occurred() > 0) lines.incrementAndGet();
      });
      threads[t].start();
    }
    for (Thread t : threads) t.join();
    assertEquals(0, lines.get(), "no line is due within the interval");
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    assertEquals(40_001, throttle.occurred());
  }
}
