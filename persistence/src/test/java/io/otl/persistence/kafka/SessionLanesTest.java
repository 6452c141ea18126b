package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.junit.jupiter.api.Test;

class SessionLanesTest {
  /** Writes started, as the items each held, e.g. "a1+a2"; the writes' ends are in {@link #results}. */
  private final List<String> started = new ArrayList<>();
  /** A write's result, by the items it held; one the test has not given yet stays open. */
  private final Map<String, CompletableFuture<Done>> results = new LinkedHashMap<>();
  private final SessionLanes<String> lanes = new SessionLanes<>(2, 3, (sessionId, items) -> {
    String name = String.join("+", items);
    items.forEach(i -> assertEquals(sessionId, i.substring(0, 1), "a write holds its own session's items only"));
    started.add(name);
    return results.computeIfAbsent(name, n -> new CompletableFuture<>());
  });

  /** Adds items of session {@code items[0].charAt(0)}. */
  private CompletionStage<Done> add(String... items) {
    return lanes.add(items[0].substring(0, 1), List.of(items));
  }

  private void succeed(String write) {
    results.computeIfAbsent(write, n -> new CompletableFuture<>()).complete(Done.getInstance());
  }

  @Test
  void aSessionsWritesRunOneAfterTheOtherWhileOtherSessionsRunAtOnce() {
    add("a1");
    CompletionStage<Done> a2 = add("a2");
    add("b1");
    assertEquals(List.of("a1", "b1"), started, "a2 waits for a1; b1 does not wait for session a");
    assertEquals(2, lanes.busy());

    succeed("a1");
    assertEquals(List.of("a1", "b1", "a2"), started);
    succeed("a2");
    succeed("b1");
    assertTrue(a2.toCompletableFuture().isDone());
    assertEquals(0, lanes.busy(), "finished lanes leave nothing behind");
  }

  @Test
  void whatASessionGetsWhileItWaitsIsWrittenTogetherInOrderAndCompletesTogether() {
    add("a1");
    CompletionStage<Done> a2 = add("a2", "a3");
    CompletionStage<Done> a4 = add("a4");
    CompletionStage<Done> a5 = add("a5");
    assertEquals(List.of("a1"), started);

    succeed("a1");
    assertEquals(List.of("a1", "a2+a3+a4"), started, "up to 3 items a write; a5 would make 4");
    assertFalse(a2.toCompletableFuture().isDone(), "nothing completes before its write");
    succeed("a2+a3+a4");
    assertTrue(a2.toCompletableFuture().isDone() && a4.toCompletableFuture().isDone());
    assertEquals(List.of("a1", "a2+a3+a4", "a5"), started);
    succeed("a5");
    assertTrue(a5.toCompletableFuture().isDone());
    assertEquals(0, lanes.busy());
  }

  @Test
  void anAddLargerThanAWriteIsNotSplit() {
    add("a1");
    add("a2", "a3", "a4", "a5");
    add("a6");
    succeed("a1");
    assertEquals(List.of("a1", "a2+a3+a4+a5"), started);
    succeed("a2+a3+a4+a5");
    assertEquals(List.of("a1", "a2+a3+a4+a5", "a6"), started);
  }

  @Test
  void aLaneWaitingForASlotTakesWhatItGotMeanwhile() {
    add("a1");
    add("b1");
    CompletionStage<Done> c1 = add("c1");
    CompletionStage<Done> c2 = add("c2");
    assertEquals(List.of("a1", "b1"), started, "two slots");

    succeed("b1");
    assertEquals(List.of("a1", "b1", "c1+c2"), started);
    succeed("c1+c2");
    assertTrue(c1.toCompletableFuture().isDone() && c2.toCompletableFuture().isDone());
  }

  @Test
  void aFailedWriteFailsTheSessionsLaterAddsWithoutWritingThem() {
    add("a1");
    CompletionStage<Done> a2 = add("a2");
    CompletionStage<Done> b1 = add("b1");
    succeed("b1");

    results.computeIfAbsent("a1", n -> new CompletableFuture<>())
        .completeExceptionally(new IllegalStateException("journal down"));
    assertEquals(List.of("a1", "b1"), started, "a2 is not written after a1 failed: the restart writes both, in order");
    assertTrue(a2.toCompletableFuture().isCompletedExceptionally());
    assertTrue(b1.toCompletableFuture().isDone() && !b1.toCompletableFuture().isCompletedExceptionally());
    assertEquals(0, lanes.busy());

    add("a3");
    assertEquals(List.of("a1", "b1", "a3"), started, "what is added after the failure is written: the restart's records");
  }

  @Test
  void atMostParallelismWritesRunAndAFinishedOneLetsTheNextIn() {
    add("a1");
    add("b1");
    CompletionStage<Done> c = add("c1");
    assertEquals(List.of("a1", "b1"), started, "two slots: c1 waits for one");
    assertEquals(2, lanes.running());

    succeed("b1");
    assertEquals(List.of("a1", "b1", "c1"), started);
    succeed("c1");
    succeed("a1");
    assertTrue(c.toCompletableFuture().isDone());
    assertEquals(0, lanes.running());
    assertEquals(0, lanes.busy());
  }

  @Test
  void aSessionWithMoreQueuedWaitsBehindTheLanesAlreadyWaiting() {
    add("a1");
    add("b1");
    add("c1");
    add("a2");
    succeed("a1");
    assertEquals(List.of("a1", "b1", "c1"), started, "c waited for a slot before a's second write was due");
    succeed("c1");
    assertEquals(List.of("a1", "b1", "c1", "a2"), started);
  }

  @Test
  void aWriterThatThrowsFailsItsAdd() {
    SessionLanes<String> throwing = new SessionLanes<>(1, 10, (s, items) -> {
      throw new IllegalStateException("bug");
    });
    CompletionStage<Done> a = throwing.add("a", List.of("a1"));
    assertTrue(a.toCompletableFuture().isCompletedExceptionally());
    assertEquals(0, throwing.running());
    assertEquals(0, throwing.busy());
  }
}
