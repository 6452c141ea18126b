package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The resend of a timed-out idempotent call shared by the Kafka ingest and the gateway's recordings. */
class RetryOnTimeoutTest {

  private static CompletableFuture<String> timeout() {
    return CompletableFuture.failedFuture(new TimeoutException("ask timed out"));
  }

  @Test
  void aCallThatTimesOutIsSentAgainUntilItIsAnswered() throws Exception {
    AtomicInteger sent = new AtomicInteger();
    List<Integer> told = new ArrayList<>();
    String answer = RetryOnTimeout.<String>call(() -> sent.incrementAndGet() <= 3 ? timeout()
        : CompletableFuture.completedFuture("stored"), 6, 1, told::add).toCompletableFuture().get();
    assertEquals("stored", answer);
    assertEquals(4, sent.get());
    assertEquals(List.of(1, 2, 3), told);
  }

  @Test
  void afterTheLastResendTheTimeoutIsTheAnswer() {
    AtomicInteger sent = new AtomicInteger();
    ExecutionException e = assertThrows(ExecutionException.class, () -> RetryOnTimeout.<String>call(() -> {
      sent.incrementAndGet();
      return timeout();
    }, 2, 1, n -> { }).toCompletableFuture().get());
    assertInstanceOf(TimeoutException.class, e.getCause());
    assertEquals(3, sent.get(), "the call and two resends");
  }

  @Test
  void anotherFailureIsNotSentAgain() {
    AtomicInteger sent = new AtomicInteger();
    ExecutionException e = assertThrows(ExecutionException.class, () -> RetryOnTimeout.<String>call(() -> {
      sent.incrementAndGet();
      return CompletableFuture.failedFuture(new IllegalStateException("refused"));
    }, 6, 1, n -> { }).toCompletableFuture().get());
    assertInstanceOf(IllegalStateException.class, e.getCause());
    assertEquals(1, sent.get());
  }
}
