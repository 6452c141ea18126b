package io.otl.core.api;

import io.otl.core.entity.Rejection;

/**
 * An entity refused a command of the embedding API (design §7.3); nothing was persisted. {@link
 * #kind()} is what the HTTP API answers with 400, 404 or 409 for the same command.
 */
public final class RefusedException extends RuntimeException {
  private final Rejection.Kind kind;

  public RefusedException(Rejection.Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  static RefusedException of(Rejection r) {
    return new RefusedException(r.rejectionKind(), r.message());
  }

  public Rejection.Kind kind() {
    return kind;
  }
}
