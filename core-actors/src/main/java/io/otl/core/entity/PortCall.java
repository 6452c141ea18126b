package io.otl.core.entity;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Calls from an entity to one of its ports (training backend, exporter, serving backend, …). A
 * port may fail its stage or throw while building the call; both must come back to the entity as
 * a message through {@code pipeToSelf}, never as an exception in its command handler, so every
 * call goes through {@link #call}. What a failure means (retry or not) is each entity's own rule.
 */
public final class PortCall {
  private PortCall() {}

  /** The port's stage, or a failed one when building the call or the call itself threw. */
  public static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The failure itself, without the {@link CompletionException}s stages wrap it in. */
  public static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The failure's message (its class name when it has none), as recorded in events and logs. */
  public static String describe(Throwable t) {
    Throwable u = unwrap(t);
    return u.getMessage() == null ? u.getClass().getSimpleName() : u.getMessage();
  }

  /** {@link #describe(Throwable)} cut to {@code max} characters (and an ellipsis). */
  public static String describe(Throwable t, int max) {
    String msg = describe(t);
    return msg.length() > max ? msg.substring(0, max) + "…" : msg;
  }
}
