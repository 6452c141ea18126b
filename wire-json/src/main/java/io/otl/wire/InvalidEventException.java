package io.otl.wire;

/**
 * An event object (design §7.1) that cannot be turned into a session input: wrong type of a
 * field, unknown field, unknown event type. The message names the field; nothing was stored.
 * Edges map it to their own error: HTTP answers 400, Kafka ingestion dead-letters the record.
 */
public final class InvalidEventException extends RuntimeException {
  public InvalidEventException(String message) {
    super(message, null, false, false);
  }
}
