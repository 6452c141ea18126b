package io.otl.persistence.export;

import io.otl.core.session.SessionModel.Status;
import java.util.Set;

/**
 * The per-trajectory rules of design §6 for one export, each refusal counted in
 * {@link ExportExclusions} under its reason. A trajectory is checked in a fixed order (completed,
 * then the format's rules) and counted once, under the first rule it fails.
 */
final class ExportSelection {
  private final String agentId;
  private final ExportFilters filters;
  private final Set<String> rolledBack;
  private final ExportExclusions exclusions;
  private final boolean referencesMustPass;

  /**
   * @param referencesMustPass RL tasks keep only answers good enough to be the reference a rollout
   *     is scored against (reward ≥ sft-min-reward): a PPO/GRPO job's training file
   */
  ExportSelection(String agentId, ExportFilters filters, Set<String> rolledBack, ExportExclusions exclusions,
      boolean referencesMustPass) {
    this.agentId = agentId;
    this.filters = filters;
    this.rolledBack = Set.copyOf(rolledBack);
    this.exclusions = exclusions;
    this.referencesMustPass = referencesMustPass;
  }

  /** Counts the trajectory as seen; false (counted) when it is not a completed session of the agent. */
  boolean completed(Trajectory t) {
    exclusions.seen();
    if (t.state().status() == Status.COMPLETED && agentId.equals(t.state().agentId())) return true;
    return excluded(t, ExportExclusions.NOT_COMPLETED);
  }

  /**
   * SFT: an answer and a prompt before it ({@link JsonlFormats#sftProblem}), reward ≥ sft-min-reward,
   * quality ≥ min-quality, something to train before the first response its user rated down, not
   * served by a rolled-back version.
   */
  boolean sft(Trajectory t) {
    java.util.Optional<String> problem = JsonlFormats.sftProblem(t);
    // A rated-down answer usually pulls the reward down too: such a session is counted as below the
    // filters (the reason a reader of the manifest knows), rated-down-answer only when it passed them.
    boolean ratedDown = problem.isPresent() && problem.get().equals(ExportExclusions.RATED_DOWN_ANSWER);
    if (problem.isPresent() && !ratedDown) return excluded(t, problem.get());
    if (t.reward() < filters.sftMinReward() || t.state().reward() == null) {
      return excluded(t, ExportExclusions.BELOW_SFT_MIN_REWARD);
    }
    if (!qualityOk(t)) return excluded(t, ExportExclusions.BELOW_MIN_QUALITY);
    if (ratedDown) return excluded(t, problem.get());
    if (servedByRolledBack(t)) return excluded(t, ExportExclusions.ROLLED_BACK_VERSION);
    return true;
  }

  /**
   * RL: a prompt and quality ≥ min-quality; for a PPO/GRPO job also a reference answer that passed
   * sft-min-reward (its rollouts are scored against it: a failed answer as the reference taught the
   * policy to fail again), that its user did not rate down ({@link Trajectory#referenceAnswer}), and
   * that no rolled-back version gave: the reference is the answer to reproduce, as an SFT line's is,
   * and design §6 never trains on what a rolled-back version said (trial t55 found a grpo job scoring
   * rollouts against a rolled-back version's answers).
   */
  boolean rl(Trajectory t) {
    if (t.prompt().isEmpty()) return excluded(t, ExportExclusions.NO_PROMPT);
    if (!qualityOk(t)) return excluded(t, ExportExclusions.BELOW_MIN_QUALITY);
    if (referencesMustPass && (t.state().reward() == null || t.reward() < filters.sftMinReward())) {
      return excluded(t, ExportExclusions.REFERENCE_BELOW_SFT_MIN_REWARD);
    }
    // Nothing to score a rollout against: no answer at all, or only answers the user rated down.
    if (referencesMustPass && t.referenceAnswer().isEmpty()) {
      return excluded(t, t.finalAnswer().isEmpty() ? ExportExclusions.NO_ANSWER : ExportExclusions.RATED_DOWN_ANSWER);
    }
    if (referencesMustPass && servedByRolledBack(t)) return excluded(t, ExportExclusions.ROLLED_BACK_VERSION);
    return true;
  }

  /** DPO: any answered task may be compared; counted later if it ends up in no pair. */
  boolean dpo(Trajectory t) {
    if (t.prompt().isEmpty()) return excluded(t, ExportExclusions.NO_PROMPT);
    if (t.finalAnswer().isEmpty()) return excluded(t, ExportExclusions.NO_ANSWER);
    return true;
  }

  /** Whether a DPO candidate may be the chosen answer (a rolled-back version's may only be rejected). */
  boolean canBeChosen(Trajectory t) {
    return qualityOk(t) && !servedByRolledBack(t);
  }

  double dpoMinMargin() {
    return filters.dpoMinMargin();
  }

  void exclude(String reason, java.util.Collection<String> sessionIds) {
    for (String id : sessionIds) exclusions.exclude(reason, id);
  }

  private boolean qualityOk(Trajectory t) {
    Double q = t.state().qualityScore();
    return q != null && q >= filters.minQuality();
  }

  /**
   * The session's version, or any version that gave one of its answers, was rolled back. A session keeps
   * the version it started on as its {@code modelVersion}, but once that version stops serving (a
   * promotion) it is routed by its bucket, so a later candidate can answer its next turns; when that
   * candidate is rolled back, those answers are still a rolled-back version's (trial t126: five of ten
   * sessions started on v0 had their second answer from the rolled-back vb, and SFT trained it). Each
   * gateway answer names the version that gave it ({@code inference.modelVersion}; a stable that
   * answered for a failing candidate names itself, the candidate only as {@code fallbackFrom}). A failed
   * call of that version (its {@code inference.error}, no answer) trained nothing of it: the session stays.
   */
  private boolean servedByRolledBack(Trajectory t) {
    if (rolledBack.isEmpty()) return false;
    String v = t.state().modelVersion();
    if (v != null && rolledBack.contains(v)) return true;
    return t.state().messages().stream()
        .anyMatch(m -> m.inference() != null && m.inference().modelVersion() != null
            && m.inference().error() == null && rolledBack.contains(m.inference().modelVersion()));
  }

  private boolean excluded(Trajectory t, String reason) {
    exclusions.exclude(reason, t.sessionId());
    return false;
  }
}
