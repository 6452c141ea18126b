package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.junit.jupiter.api.Test;

class SessionLanesTest {
  private final SessionLanes lanes = new SessionLanes(2);
  private final List<String> started = new ArrayList<>();

  /** A write of session {@code name.charAt(0)} that records when it starts and ends with {@code result}. */
  private CompletionStage<Done> write(String name, CompletableFuture<Done> result) {
    return lanes.after(name.substring(0, 1), () -> {
      started.add(name);
      return result;
    });
  }

  @Test
  void aSessionsWritesRunOneAfterTheOtherWhileOtherSessionsRunAtOnce() {
    CompletableFuture<Done> a1 = new CompletableFuture<>();
    CompletableFuture<Done> a2 = new CompletableFuture<>();
    CompletableFuture<Done> b1 = new CompletableFuture<>();
    write("a1", a1);
    CompletionStage<Done> a2Done = write("a2", a2);
    write("b1", b1);
    assertEquals(List.of("a1", "b1"), started, "a2 waits for a1; b1 does not wait for session a");
    assertEquals(2, lanes.busy());

    a1.complete(Done.getInstance());
    assertEquals(List.of("a1", "b1", "a2"), started);
    a2.complete(Done.getInstance());
    b1.complete(Done.getInstance());
    assertTrue(a2Done.toCompletableFuture().isDone());
    assertEquals(0, lanes.busy(), "finished lanes leave nothing behind");
  }

  @Test
  void aFailedWriteFailsTheSessionsLaterWritesWithoutRunningThem() {
    CompletableFuture<Done> a1 = new CompletableFuture<>();
    write("a1", a1);
    CompletionStage<Done> a2 = write("a2", CompletableFuture.completedFuture(Done.getInstance()));
    CompletionStage<Done> b1 = write("b1", CompletableFuture.completedFuture(Done.getInstance()));

    a1.completeExceptionally(new IllegalStateException("journal down"));
    assertEquals(List.of("a1", "b1"), started, "a2 is not written after a1 failed: the restart writes both, in order");
    assertTrue(a2.toCompletableFuture().isCompletedExceptionally());
    assertTrue(b1.toCompletableFuture().isDone() && !b1.toCompletableFuture().isCompletedExceptionally());
    assertEquals(0, lanes.busy());
  }

  @Test
  void atMostParallelismWritesRunAndAFinishedOneLetsTheNextIn() {
    CompletableFuture<Done> a1 = new CompletableFuture<>();
    CompletableFuture<Done> b1 = new CompletableFuture<>();
    CompletableFuture<Done> c1 = new CompletableFuture<>();
    write("a1", a1);
    write("b1", b1);
    CompletionStage<Done> c = write("c1", c1);
    assertEquals(List.of("a1", "b1"), started, "two slots: c1 waits for one");
    assertEquals(2, lanes.running());

    b1.complete(Done.getInstance());
    assertEquals(List.of("a1", "b1", "c1"), started);
    c1.complete(Done.getInstance());
    a1.complete(Done.getInstance());
    assertTrue(c.toCompletableFuture().isDone());
    assertEquals(0, lanes.running());
    assertEquals(0, lanes.busy());
  }
}
