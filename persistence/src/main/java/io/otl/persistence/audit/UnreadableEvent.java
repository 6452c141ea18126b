package io.otl.persistence.audit;

/**
 * Stands in, in audit answers, for a stored event that cannot be deserialized (e.g. JSON nested
 * deeper than Jackson's {@code StreamReadConstraints} allow): the audit shows the gap with its
 * sequence number and the reason instead of failing the whole answer. The reason names the error
 * class only: Jackson's messages quote the payload, which may hold personal data.
 */
public record UnreadableEvent(long seqNr, String reason) {
  static UnreadableEvent of(long seqNr, Throwable cause) {
    return new UnreadableEvent(seqNr, "the stored event cannot be deserialized ("
        + rootCause(cause).getClass().getSimpleName() + "); skipped");
  }

  static Throwable rootCause(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) c = c.getCause();
    return c;
  }

  /** A database failure is not the event's fault: it must fail the read, not be skipped. */
  static boolean isDatabaseFailure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof java.sql.SQLException || c instanceof java.util.concurrent.TimeoutException) return true;
    }
    return false;
  }
}
