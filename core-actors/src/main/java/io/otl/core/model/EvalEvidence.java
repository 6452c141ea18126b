package io.otl.core.model;

import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.VersionState;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The offline gate needs evidence (issue #16): a candidate trained by a batch job is compared with
 * the stable on the agent's held-out evaluation set only when the job's evaluation (Trinity
 * {@code bench} of the checkpoint and of the stable on the job's held-out file, read from
 * {@code bench_scores.json} by the ray-jobs backend) produced at least one of the configured
 * evaluation metrics; the stable's scores of that same run are the gate's baseline ({@link
 * #baseline}). An empty held-out set is no evidence either, and the reason says so. Without any, the
 * gate has nothing to decide on: the version goes to NO_EVIDENCE instead of READY, never starts a
 * canary by itself, and an operator's promote is needed (and accepted) to roll it out.
 *
 * <p>Candidates of the Trinity proxy ({@code proxy-<n>}, online RL) are measured online only and
 * keep the gate as before.
 */
public final class EvalEvidence {
  private EvalEvidence() {}

  /**
   * Offline metric keys of bench evidence (ray-jobs): the stable's score of the same bench run as
   * the candidate's, e.g. {@code bench-stable.task-success-rate}. Plain entries of the candidate's
   * metrics map, so the persisted events keep their shape.
   */
  public static final String BASELINE_PREFIX = "bench-stable.";

  /** Offline metric key: how many held-out tasks the bench scored (0: the eval set was empty). */
  public static final String EVAL_COUNT = "bench-eval-count";

  /** The gate ran without evidence: the version waits for a manual promote. */
  public record GateWithoutEvidence(String version, String reason, Instant at)
      implements ModelEvents.TransitionEvent {}

  /** Why a job's candidate has no evidence, or empty when it has some (or needs none). */
  static Optional<String> missing(String version, String sourceJobId, Map<String, Double> offlineMetrics,
      List<Metric> configured, Models models) {
    if (sourceJobId == null || version.startsWith("proxy-")) return Optional.empty();
    boolean any = configured.stream().anyMatch(m -> offlineMetrics.get(m.key()) != null);
    String against = models.stable() == null ? "" : " against stable " + models.stable();
    Double evalCount = offlineMetrics.get(EVAL_COUNT);
    if (evalCount != null && evalCount == 0) {
      return Optional.of("no offline evidence" + against + ": the held-out eval set of job " + sourceJobId
          + " is empty (raise eval-fraction or wait for more sessions), so nothing was benchmarked;"
          + " no automatic canary, a manual promote is needed");
    }
    if (any) return Optional.empty();
    return Optional.of("no offline evidence" + against + ": job " + sourceJobId + " reported none of "
        + configured.stream().map(Metric::key).toList()
        + " (no evaluation of the held-out set); no automatic canary, a manual promote is needed");
  }

  /**
   * Why a candidate whose job continued {@code trainedFrom}'s checkpoint must not roll out by itself:
   * that version was rolled back while the job trained (trial t3: v4 rolled back for complaints, and
   * v5, trained on v4's weights and benchmarked against v4, went into a canary 3 s later). Its weights
   * continue what an operator or the canary refused, and its bench baseline is no longer the stable,
   * so the gate has no evidence that counts; an operator may still promote it. Empty otherwise.
   */
  static Optional<String> originRolledBack(String trainedFrom, Models models) {
    if (trainedFrom == null) return Optional.empty();
    return models.find(trainedFrom).filter(v -> v.state() == VersionState.ROLLED_BACK)
        .map(v -> "trained from " + trainedFrom + "'s checkpoint, and " + trainedFrom
            + " was rolled back while the job ran: the candidate continues a rolled-back version and was"
            + " benchmarked against it, not against stable " + models.stable()
            + "; no automatic canary, a manual promote is needed");
  }

  /**
   * The baseline the gate compares a candidate with: the stable's score of the same bench run when
   * the candidate carries one, else the stable's own registration metrics (earlier evidence).
   */
  static Double baseline(Map<String, Double> candidate, Map<String, Double> stableRegistration, Metric m) {
    Double sameRun = candidate.get(BASELINE_PREFIX + m.key());
    return sameRun != null ? sameRun : stableRegistration.get(m.key());
  }

  static String historyReason(GateWithoutEvidence e) {
    return e.reason();
  }
}
