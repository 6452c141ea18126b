package io.otl.persistence.schema;

import io.otl.core.coordinator.CoordinatorEvents;
import io.otl.core.coordinator.CoordinatorState;
import io.otl.core.model.Deployments;
import io.otl.core.model.ModelEvents;
import io.otl.core.model.ModelState;
import io.otl.core.session.AgentSession;
import io.otl.persistence.kafka.KafkaPublisherOffset;
import io.otl.persistence.readside.FeedOffsetStore;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * THE registry of persisted types (design §4.1): every event and snapshot class an entity writes to
 * the journal, under a logical name that never changes, whatever the class is called or wherever it
 * lives. A new event is one line here: {@code PersistedType.of("model.deployment-started",
 * ModelEvents.DeploymentStarted.class)}. Renaming or moving a class changes only the class
 * reference; changing its fields adds a {@link PersistedType#migrate} step. {@code .legacy(...)}
 * names the class each type was stored under by release v0.1.0 (before logical names): those rows
 * keep being read through it forever, so those strings never change. See docs/schema-evolution.md.
 */
public final class PersistedTypes {
  private static final String S = "io.otl.core.session.AgentSession$";
  private static final String C = "io.otl.core.coordinator.TrainingCoordinator$";
  private static final String M = "io.otl.core.model.ModelVersion$";

  /** Every persisted type of the product. */
  public static final PersistedTypes ALL = new PersistedTypes(List.of(
      // AgentSession (persistence id AgentSession|<sessionId>)
      PersistedType.of("session.started", AgentSession.SessionStarted.class).legacy(S + "SessionStarted"),
      PersistedType.of("session.message-recorded", AgentSession.MessageRecorded.class).legacy(S + "MessageRecorded"),
      PersistedType.of("session.tool-call-recorded", AgentSession.ToolCallRecorded.class)
          .legacy(S + "ToolCallRecorded"),
      PersistedType.of("session.reasoning-step-recorded", AgentSession.ReasoningStepRecorded.class)
          .legacy(S + "ReasoningStepRecorded"),
      PersistedType.of("session.feedback-recorded", AgentSession.FeedbackRecorded.class)
          .legacy(S + "FeedbackRecorded"),
      PersistedType.of("session.task-result-recorded", AgentSession.TaskResultRecorded.class)
          .legacy(S + "TaskResultRecorded"),
      PersistedType.of("session.trajectory-completed", AgentSession.TrajectoryCompleted.class)
          .legacy(S + "TrajectoryCompleted"),
      PersistedType.of("session.reward-revised", AgentSession.RewardRevised.class).legacy(S + "RewardRevised"),
      PersistedType.of("session.message-details-added", AgentSession.MessageDetailsAdded.class),
      PersistedType.of("session.tool-result-recorded", AgentSession.ToolResultRecorded.class),
      PersistedType.of("session.state", AgentSession.State.class).legacy(S + "State"),
      // TrainingCoordinator (TrainingCoordinator|<agentId>)
      PersistedType.of("coordinator.trajectory-pooled", CoordinatorEvents.TrajectoryPooled.class)
          .legacy(C + "TrajectoryPooled"),
      PersistedType.of("coordinator.trajectory-filtered", CoordinatorEvents.TrajectoryFiltered.class)
          .legacy(C + "TrajectoryFiltered"),
      PersistedType.of("coordinator.reward-updated", CoordinatorEvents.RewardUpdated.class)
          .legacy(C + "RewardUpdated"),
      PersistedType.of("coordinator.reward-forwarded", CoordinatorEvents.RewardForwarded.class)
          .legacy(C + "RewardForwarded"),
      PersistedType.of("coordinator.schedule-armed", CoordinatorEvents.ScheduleArmed.class)
          .legacy(C + "ScheduleArmed"),
      PersistedType.of("coordinator.scheduled-slot-fired", CoordinatorEvents.ScheduledSlotFired.class)
          .legacy(C + "ScheduledSlotFired"),
      PersistedType.of("coordinator.scheduled-slot-skipped", CoordinatorEvents.ScheduledSlotSkipped.class)
          .legacy(C + "ScheduledSlotSkipped"),
      PersistedType.of("coordinator.job-requested", CoordinatorEvents.JobRequested.class)
          .legacy(C + "JobRequested"),
      PersistedType.of("coordinator.preflight-failed", CoordinatorEvents.PreflightFailed.class)
          .legacy(C + "PreflightFailed"),
      PersistedType.of("coordinator.dataset-exported", CoordinatorEvents.DatasetExported.class)
          .legacy(C + "DatasetExported"),
      PersistedType.of("coordinator.dataset-export-failed", CoordinatorEvents.DatasetExportFailed.class)
          .legacy(C + "DatasetExportFailed"),
      PersistedType.of("coordinator.job-submitting", CoordinatorEvents.JobSubmitting.class)
          .legacy(C + "JobSubmitting"),
      PersistedType.of("coordinator.job-submitted", CoordinatorEvents.JobSubmitted.class)
          .legacy(C + "JobSubmitted"),
      PersistedType.of("coordinator.job-submit-failed", CoordinatorEvents.JobSubmitFailed.class)
          .legacy(C + "JobSubmitFailed"),
      PersistedType.of("coordinator.job-status-changed", CoordinatorEvents.JobStatusChanged.class)
          .legacy(C + "JobStatusChanged"),
      PersistedType.of("coordinator.job-succeeded", CoordinatorEvents.JobSucceeded.class)
          .legacy(C + "JobSucceeded"),
      PersistedType.of("coordinator.job-failed", CoordinatorEvents.JobFailed.class).legacy(C + "JobFailed"),
      PersistedType.of("coordinator.job-cancel-requested", CoordinatorEvents.JobCancelRequested.class)
          .legacy(C + "JobCancelRequested"),
      PersistedType.of("coordinator.job-cancelled", CoordinatorEvents.JobCancelled.class)
          .legacy(C + "JobCancelled"),
      PersistedType.of("coordinator.candidate-handed-over", CoordinatorEvents.CandidateHandedOver.class)
          .legacy(C + "CandidateHandedOver"),
      PersistedType.of("coordinator.proxy-model-observed", CoordinatorEvents.ProxyModelObserved.class)
          .legacy(C + "ProxyModelObserved"),
      PersistedType.of("coordinator.policy-changed", CoordinatorEvents.PolicyChanged.class),
      PersistedType.of("coordinator.proxy-restarted", CoordinatorEvents.ProxyRestarted.class),
      PersistedType.of("coordinator.sessions-forgotten", CoordinatorEvents.SessionsForgotten.class),
      PersistedType.of("coordinator.state", CoordinatorState.State.class).legacy(C + "State"),
      // ModelVersion (ModelVersion|<agentId>)
      PersistedType.of("model.version-registered", ModelEvents.VersionRegistered.class)
          .legacy(M + "VersionRegistered"),
      PersistedType.of("model.evaluation-started", ModelEvents.EvaluationStarted.class)
          .legacy(M + "EvaluationStarted"),
      PersistedType.of("model.offline-gate-passed", ModelEvents.OfflineGatePassed.class)
          .legacy(M + "OfflineGatePassed"),
      PersistedType.of("model.offline-gate-failed", ModelEvents.OfflineGateFailed.class)
          .legacy(M + "OfflineGateFailed"),
      PersistedType.of("model.rollout-started", ModelEvents.RolloutStarted.class).legacy(M + "RolloutStarted"),
      PersistedType.of("model.step-advanced", ModelEvents.StepAdvanced.class).legacy(M + "StepAdvanced"),
      PersistedType.of("model.rollout-paused", ModelEvents.RolloutPaused.class).legacy(M + "RolloutPaused"),
      PersistedType.of("model.rollout-resumed", ModelEvents.RolloutResumed.class).legacy(M + "RolloutResumed"),
      PersistedType.of("model.version-promoted", ModelEvents.VersionPromoted.class)
          .legacy(M + "VersionPromoted"),
      PersistedType.of("model.version-rolled-back", ModelEvents.VersionRolledBack.class)
          .legacy(M + "VersionRolledBack"),
      PersistedType.of("model.outcome-recorded", ModelEvents.OutcomeRecorded.class)
          .legacy(M + "OutcomeRecorded"),
      PersistedType.of("model.outcome-revised", ModelEvents.OutcomeRevised.class),
      PersistedType.of("model.state-idle", ModelState.Idle.class).legacy(M + "Idle"),
      PersistedType.of("model.state-rolling-out", ModelState.RollingOut.class).legacy(M + "RollingOut"),
      // Added in 0.2.0 (deployment in the state machine): no 0.1.0 class name to read.
      PersistedType.of("model.base-model-registered", Deployments.BaseModelRegistered.class),
      PersistedType.of("model.deployment-requested", Deployments.DeploymentRequested.class),
      PersistedType.of("model.deployment-confirmed", Deployments.DeploymentConfirmed.class),
      PersistedType.of("model.deployment-failed", Deployments.DeploymentFailed.class),
      PersistedType.of("model.undeploy-requested", Deployments.UndeployRequested.class),
      PersistedType.of("model.undeployed", Deployments.Undeployed.class),
      // Added after 0.2.0 (one rollout at a time).
      PersistedType.of("model.candidate-superseded", io.otl.core.model.Supersession.CandidateSuperseded.class),
      PersistedType.of("model.gate-without-evidence", io.otl.core.model.EvalEvidence.GateWithoutEvidence.class),
      // Run-time rollout settings (PUT /v1/training/{agentId}/policy, model-update.*).
      PersistedType.of("model.rollout-policy-changed", io.otl.core.model.RolloutPolicy.RolloutPolicyChanged.class),
      // KafkaPublisherOffset (KafkaOffset|<topic>) and FeedOffsetStore (FeedOffset|<feed>)
      PersistedType.of("kafka-offset.stored", KafkaPublisherOffset.OffsetStored.class)
          .legacy("io.otl.persistence.kafka.KafkaPublisherOffset$OffsetStored"),
      PersistedType.of("kafka-offset.state", KafkaPublisherOffset.State.class)
          .legacy("io.otl.persistence.kafka.KafkaPublisherOffset$State"),
      PersistedType.of("feed-offset.advanced", FeedOffsetStore.OffsetAdvanced.class)
          .legacy("io.otl.persistence.readside.FeedOffsetStore$OffsetAdvanced"),
      PersistedType.of("feed-offset.state", FeedOffsetStore.State.class)
          .legacy("io.otl.persistence.readside.FeedOffsetStore$State")));

  private final Map<String, PersistedType> byName = new LinkedHashMap<>();
  private final Map<Class<?>, PersistedType> byClass = new LinkedHashMap<>();
  private final Map<String, PersistedType> byLegacy = new LinkedHashMap<>();

  /** A registry of {@code types}; names, classes and legacy names must each be unique. */
  public PersistedTypes(List<PersistedType> types) {
    for (PersistedType t : types) {
      if (byName.put(t.name(), t) != null) throw new IllegalArgumentException("logical name twice: " + t.name());
      if (byClass.put(t.type(), t) != null) throw new IllegalArgumentException("class twice: " + t.type());
      if (t.legacyManifest() != null && byLegacy.put(t.legacyManifest(), t) != null) {
        throw new IllegalArgumentException("legacy manifest twice: " + t.legacyManifest());
      }
    }
  }

  /**
   * A name to register {@code type} under, for error messages: the last segment of its package and
   * its simple name in kebab case ({@code io.otl.core.model.Deployments$DeploymentStarted} →
   * {@code model.deployment-started}). A suggestion: the registry's name is the one that counts.
   */
  public static String suggestedName(Class<?> type) {
    String pkg = type.getPackageName();
    String entity = pkg.substring(pkg.lastIndexOf('.') + 1);
    String kebab = type.getSimpleName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    return entity + "." + kebab;
  }

  /** The registry line for {@code type}, as error messages suggest it. */
  public static String suggestedLine(Class<?> type) {
    return "PersistedType.of(\"" + suggestedName(type) + "\", " + type.getName().replace('$', '.') + ".class),";
  }

  public Collection<PersistedType> all() {
    return byName.values();
  }

  public Optional<PersistedType> byClass(Class<?> type) {
    return Optional.ofNullable(byClass.get(type));
  }

  public Optional<PersistedType> byName(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** The type a v0.1.0 row names by its class name then. */
  public Optional<PersistedType> byLegacyManifest(String className) {
    return Optional.ofNullable(byLegacy.get(className));
  }
}
