package io.otl.persistence.export;

import io.otl.core.Sha256;
import io.otl.core.session.Desensitizer;
import java.util.List;
import java.util.Optional;

/**
 * Which task a trajectory answers (design §6): DPO pairs only compare answers to the same task.
 * The client's own id when the session was started with metadata {@code taskId}; else a hash of the
 * first user message, normalised ({@link JsonlFormats#normalisePrompt}: NFKC, lower case, whitespace
 * runs collapsed) so that trivially different spellings of one question are one task. A taskId that
 * held personal data is stored with it replaced ({@code alice@example.com} and {@code bob@example.com}
 * both as {@code [EMAIL]}), so it no longer tells tasks apart: such an id names no task and the prompt
 * does (trial t148: Bob's "No." was paired with Alice's question).
 */
public final class TaskKey {
  /** The session start metadata key a client sets to name its task. */
  public static final String METADATA_KEY = "taskId";

  private static final List<String> PLACEHOLDERS = List.of(Desensitizer.PHONE_PLACEHOLDER,
      Desensitizer.ID_CARD_PLACEHOLDER, Desensitizer.EMAIL_PLACEHOLDER, Desensitizer.BANK_CARD_PLACEHOLDER,
      Desensitizer.IBAN_PLACEHOLDER, Desensitizer.SECRET_PLACEHOLDER, Desensitizer.CUSTOM_PLACEHOLDER);

  private TaskKey() {}

  /**
   * {@code task:<client id>} or {@code prompt:<sha-256 hex>}; both, {@code task:<id>|prompt:<hex>}, for a
   * client id with a placeholder: what is left of it still parts tickets ({@code ticket-42-[EMAIL]} from
   * {@code ticket-43-[EMAIL]}), and the prompt parts customers (review t152: the prompt alone made two
   * tickets asking "Where is my refund?" one task). Empty without either; with only a placeholder id, none.
   */
  public static Optional<String> of(Trajectory t) {
    String client = t.state().metadata() == null ? null : t.state().metadata().get(METADATA_KEY);
    Optional<String> prompt = t.prompt().map(p -> "prompt:" + Sha256.hex(JsonlFormats.normalisePrompt(p)));
    if (client == null || client.isBlank()) return prompt;
    String task = "task:" + client.strip();
    if (PLACEHOLDERS.stream().noneMatch(client::contains)) return Optional.of(task);
    return prompt.map(p -> task + "|" + p);
  }
}
