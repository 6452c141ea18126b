package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class RecordWindowTest {
  @Test
  void batchesEnterWhileTheirRecordsFitAndWaitInOrderOtherwise() {
    RecordWindow window = new RecordWindow(10);
    assertTrue(done(window.acquire(4)));
    assertTrue(done(window.acquire(6)));
    CompletableFuture<?> third = window.acquire(3).toCompletableFuture();
    CompletableFuture<?> fourth = window.acquire(1).toCompletableFuture();
    assertFalse(third.isDone(), "10 of 10 held: the third batch waits");
    assertFalse(fourth.isDone(), "a later batch does not pass one waiting, though it would fit");
    window.release(4);
    assertTrue(third.isDone());
    assertTrue(fourth.isDone());
    assertEquals(10, window.held());
  }

  @Test
  void aBatchLargerThanTheWindowEntersAloneOnceTheWindowIsEmpty() {
    RecordWindow window = new RecordWindow(10);
    assertTrue(done(window.acquire(2)));
    CompletableFuture<?> big = window.acquire(25).toCompletableFuture();
    assertFalse(big.isDone());
    window.release(2);
    assertTrue(big.isDone(), "never stuck behind its own size");
    assertEquals(25, window.held());
    CompletableFuture<?> next = window.acquire(1).toCompletableFuture();
    assertFalse(next.isDone());
    window.release(25);
    assertTrue(next.isDone());
  }

  private static boolean done(java.util.concurrent.CompletionStage<?> s) {
    return s.toCompletableFuture().isDone();
  }
}
