package io.otl.core.coordinator;

import io.otl.core.entity.PortCall;
import io.otl.core.training.TrainingBackendException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The coordinator's calls to its ports ({@link PortCall}, shared with ModelVersion) and what
 * their failures mean here: the training backend's kinds of failure decide retries.
 */
final class PortCalls {
  private PortCalls() {}

  /** The length of an error message recorded in the coordinator's events (they are kept forever). */
  private static final int MAX_MESSAGE = 500;

  static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> call) {
    return PortCall.call(call);
  }

  static Throwable unwrap(Throwable t) {
    return PortCall.unwrap(t);
  }

  /** The message (at most 500 characters) recorded in events and logs. */
  static String describe(Throwable t) {
    return PortCall.describe(t, MAX_MESSAGE);
  }

  /** Retryable unless the backend said it won't help (REJECTED, NOT_FOUND) or the request is invalid. */
  static boolean isRetryable(Throwable t) {
    Throwable u = unwrap(t);
    if (u instanceof TrainingBackendException b) {
      return b.retryable();
    }
    return !(u instanceof IllegalArgumentException);
  }

  /**
   * The backend answered and refused the request itself (a 4xx other than 404, 408, 429): sent again,
   * it would be refused again. A 404 is not: it is as likely a wrong endpoint as an unknown request,
   * and giving up on a misconfiguration would drop every reward.
   */
  static boolean refusedForGood(Throwable t) {
    return kindOf(t) == TrainingBackendException.Kind.REJECTED;
  }

  /** The backend's kind of failure, null when the failure did not come from the backend. */
  static TrainingBackendException.Kind kindOf(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof TrainingBackendException b ? b.kind() : null;
  }
}
