package io.otl.http;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Asynchronous operations that run one after the other per key (an agent's policy PUTs, a session's
 * gateway recordings): each starts when the previous one of its key has ended, whatever its
 * outcome. Keys with nothing running hold no entry.
 */
public final class InTurn {
  private final ConcurrentHashMap<String, CompletableFuture<?>> last = new ConcurrentHashMap<>();

  /** Runs {@code operation} after the key's previous one; completes as it does. */
  public <T> CompletionStage<T> run(String key, Supplier<? extends CompletionStage<T>> operation) {
    CompletableFuture<T> done = new CompletableFuture<>();
    CompletableFuture<?> previous = last.put(key, done);
    CompletionStage<?> after = previous == null ? CompletableFuture.completedFuture(null) : previous;
    after.handle((x, e) -> null).thenCompose(x -> operation.get()).whenComplete((r, e) -> {
      last.remove(key, done);
      if (e != null) done.completeExceptionally(e); else done.complete(r);
    });
    return done;
  }
}
