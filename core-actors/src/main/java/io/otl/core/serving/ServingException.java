package io.otl.core.serving;

/** A serving backend's refusal or failure; {@code retryable} when trying again may succeed. */
public final class ServingException extends RuntimeException {
  private final boolean retryable;

  public ServingException(String message, boolean retryable) {
    super(message);
    this.retryable = retryable;
  }

  public boolean retryable() {
    return retryable;
  }
}
