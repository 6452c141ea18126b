package io.otl.core.model;

import io.otl.core.JsonSerializable;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BinaryOperator;

/**
 * GET /v1/models/{agentId}: the view of a {@link ModelVersion} state, built the same way by the
 * live entity and by the audit from a replayed state. An interface as a namespace: {@link
 * ModelVersion} implements it so that {@code ModelVersion.ModelsView} keeps resolving.
 */
public interface ModelViews {

  record ModelsView(
      String agentId, String stable, String candidate, List<VersionView> versions)
      implements JsonSerializable {}

  /**
   * @param ratio share of sessions this version serves now
   * @param step index in the rollout plan while in rollout, else null
   * @param stepDeadline earliest time the current step may advance (null unless in rollout and
   *     not paused)
   * @param retainedUntil for a RETIRED version a rollback may restore: until when (null for one whose
   *     adapter was unloaded or that a newer retired stable replaced as the one restored)
   */
  record VersionView(
      String version,
      VersionState state,
      double ratio,
      String artifact,
      String endpoint,
      String sourceJobId,
      boolean manual,
      Instant registeredAt,
      Integer step,
      Instant stepStartedAt,
      Instant stepDeadline,
      Instant retainedUntil,
      MetricsView metrics,
      List<HistoryEntry> history,
      Deployment deployment) {}

  /**
   * @param offline the offline evaluation metrics given at registration
   * @param online everything measured for this version (all its rollouts)
   * @param currentStep what the current rollout step has measured for it (candidate or stable
   *     during a rollout, else null)
   */
  record MetricsView(
      Map<String, Double> offline, MetricSummary online, MetricSummary currentStep) {}

  record MetricSummary(
      long sessions,
      Double taskSuccessRate,
      long taskSuccessSamples,
      Double userSatisfaction,
      long userSatisfactionSamples,
      Double responseLatencyP95Ms,
      long responseLatencySamples) {

    static MetricSummary of(OutcomeAggregates a) {
      return new MetricSummary(
          a.sessions(),
          a.value(Metric.TASK_SUCCESS_RATE),
          a.samples(Metric.TASK_SUCCESS_RATE),
          a.value(Metric.USER_SATISFACTION),
          a.samples(Metric.USER_SATISFACTION),
          a.value(Metric.RESPONSE_LATENCY),
          a.samples(Metric.RESPONSE_LATENCY));
    }
  }

  /**
   * The view of a state.
   *
   * @param stepDuration {@code model-update.step-duration}, which sets the current step's deadline
   */
  static ModelsView of(String agentId, State s, Duration stepDuration) {
    return of(agentId, s, stepDuration, (version, recorded) -> recorded);
  }

  /**
   * @param endpointOf where a version is served now, from its recorded endpoint: the live view names
   *     the address the gateway calls (the base model's or vLLM's URL may change between restarts),
   *     the audit's replayed view the one recorded
   */
  static ModelsView of(String agentId, State s, Duration stepDuration,
      BinaryOperator<String> endpointOf) {
    Rollout rollout = s instanceof RollingOut r ? r.rollout() : null;
    List<VersionView> versions = new ArrayList<>();
    for (VersionRecord v : s.models().versions()) {
      boolean isCandidate = rollout != null && v.version().equals(rollout.candidate());
      boolean isStableInRollout = rollout != null && v.version().equals(rollout.stableVersion());
      MetricSummary step = isCandidate ? MetricSummary.of(rollout.candidateStep())
          : isStableInRollout ? MetricSummary.of(rollout.stableStep()) : null;
      Instant deadline = isCandidate && !rollout.paused()
          ? rollout.stepStartedAt().plus(stepDuration) : null;
      // The version's endpoint stays as registered (a trained version's is its checkpoint, api.md);
      // only where it is served follows the server's address, and v0's, registered at that address.
      Deployment deployment = s.models().deployments().get(v.version());
      String endpoint = v.endpoint();
      if (deployment != null && deployment.endpoint() != null) {
        String current = endpointOf.apply(v.version(), deployment.endpoint());
        if (deployment.endpoint().equals(v.endpoint())) endpoint = current;
        if (!current.equals(deployment.endpoint())) {
          deployment = new Deployment(deployment.backend(), current, deployment.servedModel(),
              deployment.status(), deployment.detail(), deployment.at());
        }
      }
      versions.add(new VersionView(v.version(), v.state(), ratioOf(s, v), v.artifact(), endpoint,
          v.sourceJobId(), v.manual(), v.registeredAt(),
          isCandidate ? rollout.step() : null,
          isCandidate ? rollout.stepStartedAt() : null,
          deadline,
          s.models().mayBeRestored(v) ? v.retainedUntil() : null,
          new MetricsView(v.offlineMetrics(), MetricSummary.of(v.online()), step),
          v.history(), deployment));
    }
    return new ModelsView(agentId, s.models().stable(), rollout == null ? null : rollout.candidate(),
        List.copyOf(versions));
  }

  /** The share of sessions {@code v} serves in state {@code s}. */
  static double ratioOf(State s, VersionRecord v) {
    if (s instanceof RollingOut r) {
      if (v.version().equals(r.rollout().candidate())) {
        return r.rollout().ratio();
      }
      if (v.version().equals(s.models().stable())) {
        // In decimal: 1.0 - 0.7 in binary is 0.30000000000000004, which the API, the audit and the
        // timeline showed as the stable's share of a 70 % step (a client comparing it with 0.3 failed).
        return BigDecimal.ONE.subtract(BigDecimal.valueOf(r.rollout().ratio())).doubleValue();
      }
      return 0.0;
    }
    return v.version().equals(s.models().stable()) ? 1.0 : 0.0;
  }
}
