package io.otl.core.training;

import io.otl.core.JsonSerializable;
import java.util.Objects;

/**
 * A job's state as the backend reports it.
 *
 * @param message the backend's human-readable explanation (error text on FAILED)
 * @param outputModel present only when {@code state == SUCCEEDED}
 */
public record BackendJobStatus(State state, String message, OutputModel outputModel)
    implements JsonSerializable {

  /** The Ray Jobs states (design §5); the three last ones are terminal. */
  public enum State {
    PENDING,
    RUNNING,
    STOPPED,
    SUCCEEDED,
    FAILED;

    public boolean isTerminal() {
      return this == STOPPED || this == SUCCEEDED || this == FAILED;
    }
  }

  public BackendJobStatus {
    Objects.requireNonNull(state, "state");
    message = message == null ? "" : message;
    if (outputModel != null && state != State.SUCCEEDED) {
      throw new IllegalArgumentException("outputModel is only set for SUCCEEDED, state was " + state);
    }
  }

  public boolean isTerminal() {
    return state.isTerminal();
  }
}
