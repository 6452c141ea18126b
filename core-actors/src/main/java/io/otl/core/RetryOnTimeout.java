package io.otl.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * An idempotent call sent again when it times out. A session's write that timed out may still land, or be
 * lost with a node that died; sending the same inputs again is safe because the session drops event ids it
 * already holds. Used by the Kafka ingest and the gateway's recordings, which both write what a client has
 * already been answered for and must not drop it on the first timeout of a fail-over.
 */
public final class RetryOnTimeout {
  private RetryOnTimeout() {}

  /**
   * @param attempt sends the call; called once, then again after each timeout
   * @param retries how many times a timed-out call is sent again
   * @param pauseMs the pause before each resend
   * @param beforeRetry told the number (1, 2, …) of each resend before it is sent, to count or log it
   * @return the first answer, or the failure of the last attempt (unwrapped from {@link CompletionException});
   *     a failure other than a timeout ends the attempts at once
   */
  public static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> attempt, int retries, long pauseMs,
      IntConsumer beforeRetry) {
    return call(attempt, retries, pauseMs, beforeRetry, 0);
  }

  private static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> attempt, int retries, long pauseMs,
      IntConsumer beforeRetry, int sent) {
    CompletableFuture<T> out = new CompletableFuture<>();
    attempt.get().whenComplete((reply, e) -> {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (e == null) {
        out.complete(reply);
      } else if (cause instanceof TimeoutException && sent < retries) {
        beforeRetry.accept(sent + 1);
        CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(pauseMs, TimeUnit.MILLISECONDS))
            .thenCompose(v -> call(attempt, retries, pauseMs, beforeRetry, sent + 1))
            .whenComplete((r, e2) -> {
              if (e2 == null) out.complete(r);
              else out.completeExceptionally(e2);
            });
      } else {
        out.completeExceptionally(cause);
      }
    });
    return out;
  }
}
