package io.otl.persistence.export;

/**
 * The held-out evaluation set of an agent (issue #16): a session is held out when a hash of its id
 * falls below {@code eval-fraction}. The choice depends on the session id only, so a held-out
 * session stays held out in every job (never in a training file, never replayed), and the gate
 * always compares checkpoints on prompts no checkpoint was trained on.
 */
public final class HeldOut {
  private HeldOut() {}

  /** True when {@code sessionId} belongs to the evaluation set for {@code evalFraction} (0..1). */
  public static boolean isHeldOut(String sessionId, double evalFraction) {
    if (evalFraction <= 0) return false;
    return Hashes.unit("eval-set:" + sessionId) < evalFraction;
  }
}
