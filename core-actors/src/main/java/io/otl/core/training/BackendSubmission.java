package io.otl.core.training;

import io.otl.core.JsonSerializable;
import java.util.Objects;

/** Outcome of an accepted submission: the id under which the backend knows the job. */
public record BackendSubmission(String externalId) implements JsonSerializable {
  public BackendSubmission {
    Objects.requireNonNull(externalId, "externalId");
  }
}
