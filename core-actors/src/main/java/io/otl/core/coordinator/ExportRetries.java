package io.otl.core.coordinator;

/**
 * How long a job waits for its dataset export (issue #14: a job whose export failed for good stayed
 * REQUESTED and was retried forever, blocking every later job of its agent). Transient failures (a
 * busy database, a full disk being cleaned) get a few attempts with the submit backoff; after the
 * last one the job fails with the reason.
 */
final class ExportRetries {
  private ExportRetries() {}

  static final int MAX_ATTEMPTS = 5;

  static String reason(int attempts, String error) {
    return "the dataset export failed " + attempts + " times; last error: " + error;
  }
}
