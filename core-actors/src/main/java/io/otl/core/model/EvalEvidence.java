package io.otl.core.model;

import io.otl.core.model.ModelVersion.Models;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The offline gate needs evidence (issue #16): a candidate trained by a batch job is compared with
 * the stable on the agent's held-out evaluation set only when the job's evaluation (Trinity
 * {@code bench} of the checkpoint on {@code <jobId>.eval.jsonl}, written as {@code
 * eval_metrics.json}) produced at least one of the configured evaluation metrics. Without any, the
 * gate has nothing to decide on: the version goes to NO_EVIDENCE instead of READY, never starts a
 * canary by itself, and an operator's promote is needed (and accepted) to roll it out.
 *
 * <p>Candidates of the Trinity proxy ({@code proxy-<n>}, online RL) are measured online only and
 * keep the gate as before.
 */
public final class EvalEvidence {
  private EvalEvidence() {}

  /** The gate ran without evidence: the version waits for a manual promote. */
  public record GateWithoutEvidence(String version, String reason, Instant at)
      implements ModelVersion.TransitionEvent {}

  /** Why a job's candidate has no evidence, or empty when it has some (or needs none). */
  static Optional<String> missing(String version, String sourceJobId, Map<String, Double> offlineMetrics,
      List<Metric> configured, Models models) {
    if (sourceJobId == null || version.startsWith("proxy-")) return Optional.empty();
    boolean any = configured.stream().anyMatch(m -> offlineMetrics.get(m.key()) != null);
    if (any) return Optional.empty();
    String against = models.stable() == null ? "" : " against stable " + models.stable();
    return Optional.of("no offline evidence" + against + ": job " + sourceJobId + " reported none of "
        + configured.stream().map(Metric::key).toList()
        + " (no evaluation of the held-out set); no automatic canary, a manual promote is needed");
  }

  static String historyReason(GateWithoutEvidence e) {
    return e.reason();
  }
}
