package io.otl.core.training;

/**
 * Failure of a training backend call. The {@link Kind} tells the caller what to do next: retry
 * later ({@code UNAVAILABLE}), give up on this request ({@code REJECTED}), or treat the job as
 * unknown to the backend ({@code NOT_FOUND}).
 */
public class TrainingBackendException extends RuntimeException {

  public enum Kind {
    /** The backend could not be reached, timed out, or answered 5xx: retry with backoff. */
    UNAVAILABLE,
    /** The backend refused the request (4xx other than 404): retrying the same request won't help. */
    REJECTED,
    /** The backend does not know the job (404). */
    NOT_FOUND
  }

  private final Kind kind;
  private final int statusCode;

  /**
   * @param statusCode the HTTP status, or 0 when no response was received
   */
  public TrainingBackendException(Kind kind, int statusCode, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.statusCode = statusCode;
  }

  public Kind kind() {
    return kind;
  }

  public int statusCode() {
    return statusCode;
  }

  public boolean retryable() {
    return kind == Kind.UNAVAILABLE;
  }
}
