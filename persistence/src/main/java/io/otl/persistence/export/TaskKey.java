package io.otl.persistence.export;

import io.otl.core.Sha256;
import java.util.Optional;

/**
 * Which task a trajectory answers (design §6): DPO pairs only compare answers to the same task.
 * The client's own id when the session was started with metadata {@code taskId}; else a hash of the
 * first user message, normalised ({@link JsonlFormats#normalisePrompt}: NFKC, lower case, whitespace
 * runs collapsed) so that trivially different spellings of one question are one task.
 */
public final class TaskKey {
  /** The session start metadata key a client sets to name its task. */
  public static final String METADATA_KEY = "taskId";

  private TaskKey() {}

  /** {@code task:<client id>} or {@code prompt:<sha-256 hex>}; empty without either. */
  public static Optional<String> of(Trajectory t) {
    String client = t.state().metadata() == null ? null : t.state().metadata().get(METADATA_KEY);
    if (client != null && !client.isBlank()) return Optional.of("task:" + client.strip());
    return t.prompt().map(p -> "prompt:" + Sha256.hex(JsonlFormats.normalisePrompt(p)));
  }
}
