package io.otl.core.coordinator;

import io.otl.core.training.TrainingBackendException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Calls to the coordinator's ports and what their failures mean. A port that throws instead of
 * failing its stage is treated the same, so every result comes back through {@code pipeToSelf}.
 */
final class PortCalls {
  private PortCalls() {}

  /** The port's stage, or a failed one when building the call or the call itself threw. */
  static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The message (at most 500 characters) recorded in events and logs. */
  static String describe(Throwable t) {
    Throwable u = unwrap(t);
    String msg = u.getMessage() == null ? u.getClass().getSimpleName() : u.getMessage();
    return msg.length() > 500 ? msg.substring(0, 500) + "…" : msg;
  }

  /** Retryable unless the backend said it won't help (REJECTED, NOT_FOUND) or the request is invalid. */
  static boolean isRetryable(Throwable t) {
    Throwable u = unwrap(t);
    if (u instanceof TrainingBackendException b) {
      return b.retryable();
    }
    return !(u instanceof IllegalArgumentException);
  }

  /** The backend's kind of failure, null when the failure did not come from the backend. */
  static TrainingBackendException.Kind kindOf(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof TrainingBackendException b ? b.kind() : null;
  }
}
