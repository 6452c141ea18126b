package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The names a candidate is offered under when its own is taken, and that a retry ends on the same one. */
class CandidateNamesTest {

  /** ModelVersion's names: who holds each (an artifact); a repeat of the same artifact is done, not taken. */
  private final Map<String, String> held = new HashMap<>();
  private final List<String> tried = new ArrayList<>();

  private CompletionStage<Void> register(String name, String artifact) {
    tried.add(name);
    String holder = held.putIfAbsent(name, artifact);
    return holder == null || holder.equals(artifact)
        ? CompletableFuture.completedFuture(null)
        : CompletableFuture.failedFuture(new CandidateSink.NameTaken(name, "held by " + holder));
  }

  @Test
  void theNextNameCountsOnFromTheTrailingNumber() {
    assertEquals("v2", CandidateNames.next("v1"));
    assertEquals("v10", CandidateNames.next("v9"));
    assertEquals("proxy-4", CandidateNames.next("proxy-3"));
    assertEquals("custom-2", CandidateNames.next("custom"));
  }

  @Test
  void aTakenNameMovesOnAndARetryEndsOnTheSameName() throws Exception {
    held.put("v1", "file:///hand/v1");
    held.put("v2", "file:///hand/v2");
    String first = CandidateNames.registerUnderFreeName("v1", n -> register(n, "file:///job-1")).toCompletableFuture().get();
    assertEquals("v3", first);
    assertEquals(List.of("v1", "v2", "v3"), tried);
    String again = CandidateNames.registerUnderFreeName("v1", n -> register(n, "file:///job-1")).toCompletableFuture().get();
    assertEquals("v3", again, "a retry after a crash finds its own candidate, not a fresh name");
    assertEquals("file:///hand/v1", held.get("v1"));
    assertEquals("file:///hand/v2", held.get("v2"));
  }

  @Test
  void otherFailuresAreNotRenames() {
    ExecutionException e = assertThrows(ExecutionException.class, () -> CandidateNames.registerUnderFreeName("v1",
        n -> CompletableFuture.<Void>failedFuture(new IllegalStateException("unreachable"))).toCompletableFuture().get());
    assertInstanceOf(IllegalStateException.class, e.getCause());
  }
}
