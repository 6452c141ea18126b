package io.otl.core.model;

import io.otl.core.JsonSerializable;
import io.otl.core.entity.Rejection;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The protocol of {@link ModelVersion}: its commands and their replies (design §3.3). An interface
 * only as a namespace: {@link ModelVersion} implements it so that {@code ModelVersion.Promote} and
 * the like keep resolving. Every command and reply is {@link JsonSerializable}: a command may
 * travel to the node that hosts the agent's entity.
 */
public interface ModelProtocol {

  // ------------------------------------------------------------------------------------------
  // Commands
  // ------------------------------------------------------------------------------------------

  sealed interface Command extends JsonSerializable
      permits RegisterCandidate,
          RegisterManual,
          Promote,
          Rollback,
          Pause,
          Resume,
          RecordOutcome,
          StepTick,
          Get,
          Route,
          SetRolloutPolicy,
          GetRolloutPolicy,
          ServingLost,
          DeploymentCalls.DeployCall,
          DeploymentCalls.DeployOutcome,
          DeploymentCalls.UndeployCall,
          DeploymentCalls.UndeployOutcome,
          RetentionTimer.RetentionEnded {}

  /**
   * A trained model from a job: REGISTERED → EVALUATING → offline gate → READY or REJECTED, and
   * with auto-deploy on into CANARY (or straight to STABLE for an agent's first version). A repeat
   * with the same artifact and job is answered with the version's status (idempotent hand-over).
   *
   * @param offlineMetrics the job's evaluation metrics, by metric key (other keys are kept)
   * @param trainedFrom the version whose checkpoint the job continued (its weights and its bench
   *     baseline), null when the job started from the base model
   */
  record RegisterCandidate(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      Map<String, Double> offlineMetrics,
      String trainedFrom,
      ActorRef<TransitionReply> replyTo)
      implements Command {
    public RegisterCandidate(String version, String artifact, String endpoint, String sourceJobId,
        Map<String, Double> offlineMetrics, ActorRef<TransitionReply> replyTo) {
      this(version, artifact, endpoint, sourceJobId, offlineMetrics, null, replyTo);
    }
  }

  /**
   * POST /v1/models/{agentId}/versions: a version registered by hand (offline gate skipped).
   *
   * @param servedModel optional: the model name sent upstream; a version that names one is served at
   *     its own endpoint (docs/serving.md "Versions registered by hand")
   * @param actor who asks, as {@link io.otl.core.api.OperatorNames} names it, recorded in the events; null: unnamed
   */
  record RegisterManual(String version, String artifact, String endpoint, String servedModel, String actor,
      ActorRef<TransitionReply> replyTo) implements Command {
    public RegisterManual(String version, String artifact, String endpoint, ActorRef<TransitionReply> replyTo) {
      this(version, artifact, endpoint, null, null, replyTo);
    }

    public RegisterManual(
        String version, String artifact, String endpoint, String servedModel, ActorRef<TransitionReply> replyTo) {
      this(version, artifact, endpoint, servedModel, null, replyTo);
    }
  }

  /**
   * READY → CANARY (or → STABLE when the agent has no stable yet); CANARY/RAMP/PAUSED → STABLE at
   * once, skipping the remaining steps (an operator's override). The {@code actor} of this and the
   * other operator commands ({@link io.otl.core.api.OperatorNames}; null: unnamed) is recorded in the
   * events they write, so the journal answers who did it.
   */
  record Promote(String version, String actor, ActorRef<TransitionReply> replyTo) implements Command {
    public Promote(String version, ActorRef<TransitionReply> replyTo) {
      this(version, null, replyTo);
    }
  }

  /**
   * CANARY/RAMP/PAUSED → ROLLED_BACK; STABLE → ROLLED_BACK with the previous stable restored (if
   * still retained and no rollout is in progress).
   */
  record Rollback(String version, String reason, String actor, ActorRef<TransitionReply> replyTo)
      implements Command {
    public Rollback(String version, String reason, ActorRef<TransitionReply> replyTo) {
      this(version, reason, null, replyTo);
    }
  }

  /** CANARY/RAMP → PAUSED: holds the ratio, no step advances (degradation still rolls back). */
  record Pause(String version, String actor, ActorRef<TransitionReply> replyTo) implements Command {
    public Pause(String version, ActorRef<TransitionReply> replyTo) {
      this(version, null, replyTo);
    }
  }

  /** PAUSED → CANARY/RAMP at the same step; the step's duration restarts from the resume. */
  record Resume(String version, String actor, ActorRef<TransitionReply> replyTo) implements Command {
    public Resume(String version, ActorRef<TransitionReply> replyTo) {
      this(version, null, replyTo);
    }
  }

  /**
   * One completed trajectory's outcome, deduplicated by sessionId per version during a rollout.
   *
   * @param success task result, null when unknown
   * @param rating 1–5, null when the user did not rate
   * @param latencyP95Ms the session's p95 assistant latency, null when unknown
   * @param modelCalls, upstreamErrors, tokens the inference gateway's figures of the session
   *     (guardrails), null when its calls did not go through the gateway
   * @param revision the session's outcome after feedback that came later (its reward was revised):
   *     only its satisfaction is taken, once, for a session counted in this rollout; null = false
   * @param completedAt when the session's completion was written (the server's clock), null when
   *     unknown: a completion written before the rollout began is not this rollout's, however late
   *     it arrives (a restarted feed redelivers its last minutes; before this it joined the stable's
   *     figures of the running step and tripped the sample-ratio guardrail)
   * @param sessionStartedAt when the session started, null when unknown: one that started before the
   *     current step keeps the version an earlier ratio gave it, and the sample-ratio check leaves it out
   */
  record RecordOutcome(
      String sessionId,
      String modelVersion,
      Boolean success,
      Double rating,
      int thumbsUp,
      int thumbsDown,
      Double latencyP95Ms,
      ActorRef<OutcomeReply> replyTo,
      Integer modelCalls,
      Integer upstreamErrors,
      Long tokens,
      Boolean revision,
      Instant completedAt,
      Instant sessionStartedAt)
      implements Command {
    @com.fasterxml.jackson.annotation.JsonCreator
    public RecordOutcome {}

    public RecordOutcome(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, ActorRef<OutcomeReply> replyTo,
        Integer modelCalls, Integer upstreamErrors, Long tokens, Boolean revision, Instant completedAt) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, replyTo,
          modelCalls, upstreamErrors, tokens, revision, completedAt, null);
    }

    public RecordOutcome(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, ActorRef<OutcomeReply> replyTo,
        Integer modelCalls, Integer upstreamErrors, Long tokens, Boolean revision) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, replyTo,
          modelCalls, upstreamErrors, tokens, revision, null);
    }

    public RecordOutcome(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, ActorRef<OutcomeReply> replyTo) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, replyTo,
          null, null, null, null);
    }

    public RecordOutcome(String sessionId, String modelVersion, Boolean success, Double rating,
        int thumbsUp, int thumbsDown, Double latencyP95Ms, ActorRef<OutcomeReply> replyTo,
        Integer modelCalls, Integer upstreamErrors, Long tokens) {
      this(sessionId, modelVersion, success, rating, thumbsUp, thumbsDown, latencyP95Ms, replyTo,
          modelCalls, upstreamErrors, tokens, null);
    }

    boolean isRevision() {
      return Boolean.TRUE.equals(revision);
    }
  }

  /** Internal timer: the current step's deadline may have passed. No reply. */
  enum StepTick implements Command {
    INSTANCE
  }

  /** GET /v1/models/{agentId}. */
  record Get(ActorRef<ModelViews.ModelsView> replyTo) implements Command {}

  /** GET /v1/models/{agentId}/route?sessionId=. */
  /**
   * @param pinnedVersion the version the session started on (its {@code SessionStarted}'s), null for
   *     a session that has not started: the session stays on it while that version still serves
   *     (design §3.3: a session never flips between versions mid-conversation)
   */
  record Route(String sessionId, String pinnedVersion, ActorRef<RouteReply> replyTo) implements Command {
    @com.fasterxml.jackson.annotation.JsonCreator
    public Route {}

    public Route(String sessionId, ActorRef<RouteReply> replyTo) {
      this(sessionId, null, replyTo);
    }
  }

  /**
   * {@code PUT /v1/training/{agentId}/policy}'s {@code model-update.*} keys: the agent's whole set of
   * run-time rollout overrides ({@link RolloutPolicy}; empty clears them). Persisted only when it
   * differs from the set in force.
   */
  record SetRolloutPolicy(Map<String, Object> overrides, String requestedBy, ActorRef<RolloutPolicyReply> replyTo)
      implements Command {
    public SetRolloutPolicy {
      overrides = io.otl.core.PlainValues.plain(overrides); // from another node: JSON arrays as Scala lists
    }
  }

  /** The rollout settings in force and the run-time overrides. */
  record GetRolloutPolicy(ActorRef<RolloutPolicyReply> replyTo) implements Command {}

  /**
   * The gateway found that the model server no longer serves {@code version}'s served model (a
   * vLLM server restarted and lost its runtime-loaded adapters): the entity loads its routable
   * adapters again, as after its own recovery. Nothing is recorded; no reply.
   */
  record ServingLost(String version) implements Command {}

  // ------------------------------------------------------------------------------------------
  // Replies
  // ------------------------------------------------------------------------------------------

  /**
   * Why a command was refused; HTTP mapping: NOT_FOUND → 404, ALREADY_EXISTS → 409,
   * INVALID_TRANSITION → 409, INVALID_INPUT → 400, NO_VERSION → 404.
   */
  enum ErrorCode {
    NOT_FOUND,
    ALREADY_EXISTS,
    INVALID_TRANSITION,
    INVALID_INPUT,
    NO_VERSION
  }

  sealed interface TransitionReply extends JsonSerializable permits VersionStatus, Failure {}

  sealed interface RouteReply extends JsonSerializable permits RouteDecision, Failure {}

  sealed interface OutcomeReply extends JsonSerializable permits OutcomeAck, Failure {}

  sealed interface RolloutPolicyReply extends JsonSerializable permits RolloutPolicyView, Failure {}

  /**
   * @param policy every model-update key with the value in force (file, then run-time overrides)
   * @param overrides the run-time overrides only, {@code model-update.<key>} (empty: the file's)
   * @param changedBy who set them last, null when never
   * @param changedAt when, null when never
   */
  record RolloutPolicyView(String agentId, Map<String, Object> policy, Map<String, Object> overrides,
      String changedBy, java.time.Instant changedAt) implements RolloutPolicyReply {
    public RolloutPolicyView {
      // answered from another node: JSON arrays (steps, evaluation-metrics) arrive as Scala lists
      policy = io.otl.core.PlainValues.plain(policy);
      overrides = io.otl.core.PlainValues.plain(overrides);
    }
  }

  /** A command was refused and nothing was persisted. */
  record Failure(ErrorCode code, String message)
      implements TransitionReply, RouteReply, OutcomeReply, RolloutPolicyReply, Rejection {

    @Override
    public Rejection.Kind rejectionKind() {
      return switch (code) {
        case NOT_FOUND, NO_VERSION -> Rejection.Kind.NOT_FOUND;
        case ALREADY_EXISTS -> Rejection.Kind.CONFLICT;
        case INVALID_TRANSITION -> Rejection.Kind.INVALID_TRANSITION;
        case INVALID_INPUT -> Rejection.Kind.INVALID_INPUT;
      };
    }

    static Failure invalidInput(String message) {
      return new Failure(ErrorCode.INVALID_INPUT, message);
    }

    static Failure notFound(String version) {
      return new Failure(ErrorCode.NOT_FOUND, "version " + version + " is not registered");
    }

    static Failure alreadyExists(ModelState.VersionRecord v) {
      return new Failure(ErrorCode.ALREADY_EXISTS,
          "version " + v.version() + " already exists (it is " + v.state() + ")");
    }

    static Failure invalidTransition(String verb, ModelState.VersionRecord v) {
      // DEPLOYING is the short wait between a promote's 202 and CANARY: say when to ask again.
      String when = v.state() == ModelState.VersionState.DEPLOYING
          ? " (the serving backend is loading it; it becomes CANARY, or DEPLOY_FAILED, once the load is answered:"
              + " ask to " + verb + " again then)"
          : "";
      return new Failure(ErrorCode.INVALID_TRANSITION,
          "cannot " + verb + " " + v.version() + ": it is " + v.state() + when);
    }
  }

  /**
   * The version's state after an accepted command.
   *
   * @param created true when this command registered the version (HTTP 201)
   * @param reasons e.g. the offline gate's reasons for a REJECTED version
   */
  record VersionStatus(
      String agentId,
      String version,
      ModelState.VersionState state,
      double ratio,
      boolean created,
      List<String> reasons)
      implements TransitionReply {}

  /**
   * @param endpoint the serving endpoint of the version (its confirmed deployment's)
   * @param servedModel the model name to send upstream; null: pass the agent's own name on
   */
  record RouteDecision(
      String agentId, String sessionId, String version, String endpoint, String servedModel)
      implements RouteReply {}

  enum Disposition {
    /** Persisted and counted. */
    RECORDED,
    /** This session was already counted for this version. */
    DUPLICATE,
    /** Not measured (no rollout in progress, or the version is neither candidate nor stable). */
    IGNORED
  }

  record OutcomeAck(
      String sessionId, String modelVersion, Disposition disposition, String detail)
      implements OutcomeReply {}
}
