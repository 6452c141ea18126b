package io.otl.core.entity;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * A command an entity refused; nothing was persisted. The three entities keep their own reply
 * records (their class names and fields are the wire format between nodes), and each implements
 * this, so an edge answers every refusal with one mapping from {@link Kind} (design §7.1: 400,
 * 404, 409).
 */
public interface Rejection {

  /** What kind of refusal it is, whatever the entity's own code says. */
  enum Kind {
    /** The request is malformed. */
    INVALID_INPUT,
    /** It names something that does not exist. */
    NOT_FOUND,
    /** It contradicts the entity's state (exists already, another job is running, …). */
    CONFLICT,
    /** A state transition the entity's machine does not allow from the current state. */
    INVALID_TRANSITION
  }

  // Not a record component: left out of the reply's JSON, which stays what earlier builds sent.
  @JsonIgnore
  Kind rejectionKind();

  /** What to fix, for the caller. */
  String message();
}
