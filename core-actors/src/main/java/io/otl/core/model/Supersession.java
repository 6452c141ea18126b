package io.otl.core.model;

import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.VersionState;
import java.time.Instant;
import java.util.List;

/**
 * One rollout at a time: a READY candidate that a newer one supersedes is RETIRED (reason
 * {@code superseded}) instead of queueing behind the rollout in progress with stale weights. Only
 * the newest candidate that passed the offline gate waits for its turn.
 */
public final class Supersession {
  private Supersession() {}

  /**
   * A READY candidate retired because {@code supersededBy} passed its offline gate after it. Not
   * restorable by a rollback: it never served.
   */
  public record CandidateSuperseded(String version, String supersededBy, Instant at)
      implements ModelEvents.TransitionEvent {}

  /** The events retiring every READY version but {@code newest}, which has just become READY. */
  static List<CandidateSuperseded> olderReady(Models models, String newest, Instant at) {
    return models.versions().stream()
        .filter(v -> v.state() == VersionState.READY && !v.version().equals(newest))
        .map(v -> new CandidateSuperseded(v.version(), newest, at))
        .toList();
  }

  static String reason(CandidateSuperseded e) {
    return "superseded by " + e.supersededBy() + " (one rollout at a time: only the newest READY candidate waits)";
  }
}
