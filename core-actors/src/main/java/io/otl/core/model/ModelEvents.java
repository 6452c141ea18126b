package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.otl.core.Persisted;
import io.otl.core.model.CanaryStatistics.TestResult;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The events of {@link ModelVersion}: facts only; every one but {@link OutcomeRecorded} is a tagged
 * transition. An interface only as a namespace: {@link ModelVersion} implements it so that {@code
 * ModelVersion.VersionPromoted} and the like keep resolving. The journal names them by the logical
 * names of {@code io.otl.persistence.schema.PersistedTypes}, not by these classes, and their JSON
 * field names are the record components: renaming a component is a schema change
 * (docs/schema-evolution.md). The deployment events live in {@link Deployments}, the supersession
 * and no-evidence events in {@link Supersession} and {@link EvalEvidence}, the run-time rollout
 * settings in {@link RolloutPolicy}.
 */
public interface ModelEvents {

  /** Tag of every transition event (read by the model-updates publisher and the audit). */
  String TRANSITIONS_TAG = "model-transitions";

  sealed interface Event extends Persisted permits TransitionEvent, OutcomeRecorded, OutcomeRevised, RolloutPolicy.RolloutPolicyChanged {
    Instant at();
  }

  sealed interface TransitionEvent extends Event
      permits VersionRegistered,
          EvaluationStarted,
          OfflineGatePassed,
          OfflineGateFailed,
          RolloutStarted,
          StepAdvanced,
          RolloutPaused,
          RolloutResumed,
          VersionPromoted,
          VersionRolledBack,
          Deployments.BaseModelRegistered,
          Deployments.DeploymentRequested,
          Deployments.DeploymentConfirmed,
          Deployments.DeploymentFailed,
          Deployments.UndeployRequested,
          Deployments.Undeployed,
          Supersession.CandidateSuperseded,
          EvalEvidence.GateWithoutEvidence {
    String version();
  }

  /**
   * @param servedModel the model name sent upstream for a version registered by hand that named one
   *     (served at its own endpoint); optional, absent in events written before it
   * @param actor who registered it by hand ({@link io.otl.core.api.OperatorNames}); absent for a job's
   *     candidate and in events written before it (docs/operations.md "Who did it")
   */
  record VersionRegistered(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      Map<String, Double> offlineMetrics,
      boolean manual,
      Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String servedModel,
      @JsonInclude(JsonInclude.Include.NON_NULL) String actor)
      implements TransitionEvent {
    @JsonCreator
    public VersionRegistered {}

    public VersionRegistered(String version, String artifact, String endpoint, String sourceJobId,
        Map<String, Double> offlineMetrics, boolean manual, Instant at) {
      this(version, artifact, endpoint, sourceJobId, offlineMetrics, manual, at, null, null);
    }

    public VersionRegistered(String version, String artifact, String endpoint, String sourceJobId,
        Map<String, Double> offlineMetrics, boolean manual, Instant at, String servedModel) {
      this(version, artifact, endpoint, sourceJobId, offlineMetrics, manual, at, servedModel, null);
    }
  }

  /** @param baselineVersion the stable the candidate is compared with, null if none */
  record EvaluationStarted(String version, String baselineVersion, Instant at)
      implements TransitionEvent {}

  /** One metric of the offline gate ({@link OfflineGate}). */
  record GateCheck(
      Metric metric, Double candidate, Double baseline, double tolerance, boolean passed, String detail) {}

  record OfflineGatePassed(String version, List<GateCheck> checks, String note, Instant at)
      implements TransitionEvent {}

  record OfflineGateFailed(
      String version, List<GateCheck> checks, List<String> reasons, Instant at)
      implements TransitionEvent {}

  /**
   * @param stableVersion the stable the candidate is measured against
   * @param plan the ratios of the rollout, fixed for its whole duration
   * @param reason {@code auto-deploy}, or {@code manual promote by <actor>} (the actor is in the reason,
   *     as in the deployment's events, which a rollout may follow in a later write)
   */
  record RolloutStarted(
      String version, String stableVersion, List<Double> plan, String reason, Instant at)
      implements TransitionEvent {}

  /** @param tests the tests of the step that passed (the evidence for advancing) */
  record StepAdvanced(
      String version, int fromStep, int toStep, double ratio, List<TestResult> tests, Instant at)
      implements TransitionEvent {}

  /**
   * @param tests for an automatic pause (rollback-on-degradation off): the failing figures
   * @param actor the operator of a manual pause (null: automatic, and events written before it)
   */
  record RolloutPaused(
      String version, boolean automatic, String reason, List<TestResult> tests, Instant at, @JsonInclude(JsonInclude.Include.NON_NULL) String actor)
      implements TransitionEvent {
    @JsonCreator
    public RolloutPaused {}

    public RolloutPaused(String version, boolean automatic, String reason, List<TestResult> tests, Instant at) {
      this(version, automatic, reason, tests, at, null);
    }
  }

  /** @param actor the operator who resumed (null in events written before it) */
  record RolloutResumed(String version, Instant at, @JsonInclude(JsonInclude.Include.NON_NULL) String actor) implements TransitionEvent {
    @JsonCreator
    public RolloutResumed {}

    public RolloutResumed(String version, Instant at) {
      this(version, at, null);
    }
  }

  /**
   * @param previousStable the stable it replaces (null for an agent's first version)
   * @param previousRetainedUntil until when the previous stable may be restored
   * @param tests the last step's tests for an automatic promotion
   * @param actor the operator of a manual promotion (null: automatic, and events written before it)
   */
  record VersionPromoted(
      String version,
      String previousStable,
      Instant previousRetainedUntil,
      boolean automatic,
      String reason,
      List<TestResult> tests,
      Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String actor)
      implements TransitionEvent {
    @JsonCreator
    public VersionPromoted {}

    public VersionPromoted(String version, String previousStable, Instant previousRetainedUntil, boolean automatic,
        String reason, List<TestResult> tests, Instant at) {
      this(version, previousStable, previousRetainedUntil, automatic, reason, tests, at, null);
    }
  }

  /**
   * @param tests for an automatic rollback: every test run at that moment, the degraded ones with
   *     {@code degraded = true} (metric, both values, sample sizes, statistic, critical value,
   *     threshold, tolerance)
   * @param restoredStable for a rollback of the STABLE version: the previous stable restored
   * @param actor the operator of a manual rollback (null: automatic, and events written before it)
   */
  record VersionRolledBack(
      String version,
      boolean automatic,
      String reason,
      List<TestResult> tests,
      String restoredStable,
      Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String actor)
      implements TransitionEvent {
    @JsonCreator
    public VersionRolledBack {}

    public VersionRolledBack(String version, boolean automatic, String reason, List<TestResult> tests,
        String restoredStable, Instant at) {
      this(version, automatic, reason, tests, restoredStable, at, null);
    }
  }

  record OutcomeRecorded(
      String sessionId,
      String modelVersion,
      Boolean success,
      Double rating,
      int thumbsUp,
      int thumbsDown,
      Double latencyP95Ms,
      Instant at,
      // Guardrail figures (issue #19): optional, null in events written before them.
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer modelCalls,
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer upstreamErrors,
      @JsonInclude(JsonInclude.Include.NON_NULL) Long tokens,
      // When the session started (null in events written before it was carried): one that started
      // before the current step was routed at an earlier ratio (sessions keep their version).
      @JsonInclude(JsonInclude.Include.NON_NULL) Instant sessionStartedAt)
      implements Event {
    @JsonCreator
    public OutcomeRecorded {}

    public OutcomeRecorded(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, Instant at) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, at, null,
          null, null, null);
    }

    public OutcomeRecorded(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, Instant at, Integer modelCalls, Integer upstreamErrors,
        Long tokens) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, at, modelCalls,
          upstreamErrors, tokens, null);
    }

    /** Whether the session started before {@code stepStartedAt}; unknown start (older events): no. */
    boolean startedBefore(Instant stepStartedAt) {
      return sessionStartedAt != null && stepStartedAt != null && sessionStartedAt.isBefore(stepStartedAt);
    }

    OutcomeAggregates addTo(OutcomeAggregates a) {
      return a.add(success, rating, thumbsUp, thumbsDown, latencyP95Ms, modelCalls, upstreamErrors, tokens);
    }
  }

  /**
   * Feedback that reached a session after its outcome was counted (a rating or thumbs sent after the
   * result, the usual order): the session's satisfaction score joins the version's figures. Only a
   * session counted in this rollout without a score gets one; its later feedback changes its reward
   * and the training pool, not the canary's figures again.
   */
  record OutcomeRevised(String sessionId, String modelVersion, Double rating, int thumbsUp, int thumbsDown, Instant at)
      implements Event {
    OutcomeAggregates addTo(OutcomeAggregates a) {
      return a.addSatisfaction(rating, thumbsUp, thumbsDown);
    }
  }
}
