package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.otl.core.Persisted;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The state of {@link ModelVersion}, also its snapshot: the phase ({@link Idle} or {@link
 * RollingOut}), the versions of the agent and the rollout in progress. An interface only as a
 * namespace: {@link ModelVersion} implements it so that {@code ModelVersion.State} and the like
 * keep resolving. Snapshots are named by logical names in {@code PersistedTypes}; the JSON field
 * names are the record components (docs/schema-evolution.md).
 */
public interface ModelState {

  /**
   * State of one version. the design's "PROMOTED (100 %, becomes STABLE)" is the {@link
   * ModelEvents.VersionPromoted} event; the version's state is then STABLE. The stable it replaced
   * becomes RETIRED, restorable by a manual rollback until its {@code retainedUntil}.
   */
  enum VersionState {
    REGISTERED,
    EVALUATING,
    READY,
    REJECTED,
    /** Being loaded into serving (intent recorded, load not confirmed): serves nothing. */
    DEPLOYING,
    /** The serving backend refused or never confirmed the load: serves nothing. */
    DEPLOY_FAILED,
    CANARY,
    RAMP,
    PAUSED,
    STABLE,
    RETIRED,
    ROLLED_BACK,
    /** A job's candidate whose offline gate had no evidence: waits for a manual promote. */
    NO_EVIDENCE
  }

  sealed interface State extends Persisted permits Idle, RollingOut {
    Models models();
  }

  /** No candidate in rollout. */
  record Idle(Models models) implements State {}

  /** Exactly one candidate in CANARY, RAMP or PAUSED. */
  record RollingOut(Models models, Rollout rollout) implements State {
    /**
     * When this rollout began: the candidate's last CANARY entered from outside a rollout (a
     * resume's CANARY follows PAUSED). From the history, so snapshots need no new field; null if
     * the history has none.
     */
    Instant rolloutStartedAt() {
      Optional<VersionRecord> v = models.find(rollout.candidate());
      if (v.isEmpty()) return null;
      Instant started = null;
      VersionState before = null;
      for (HistoryEntry h : v.get().history()) {
        boolean inRollout = before == VersionState.CANARY || before == VersionState.RAMP || before == VersionState.PAUSED;
        if (h.state() == VersionState.CANARY && !inRollout) started = h.at();
        before = h.state();
      }
      return started;
    }
  }

  /** One entry of a version's history; ratio is set for states that serve traffic. */
  record HistoryEntry(VersionState state, Double ratio, Instant at, String reason) {}

  /**
   * All versions of the agent, in registration order, the stable one, the deployment of each
   * version that has one, and the last run-time change of the rollout settings (null when none; a
   * snapshot written before run-time rollout settings existed reads as null).
   */
  record Models(
      List<VersionRecord> versions,
      String stable,
      Map<String, Deployment> deployments,
      @JsonInclude(JsonInclude.Include.NON_NULL) RolloutPolicy.RolloutPolicyChanged policyChange) {
    public static final Models EMPTY = new Models(List.of(), null, Map.of());

    @JsonCreator
    public Models {
      versions = List.copyOf(versions);
      deployments = deployments == null ? Map.of() : Map.copyOf(deployments);
    }

    public Models(List<VersionRecord> versions, String stable, Map<String, Deployment> deployments) {
      this(versions, stable, deployments, null);
    }

    Models withDeployments(Map<String, Deployment> next) {
      return new Models(versions, stable, next, policyChange);
    }

    Models withPolicyChange(RolloutPolicy.RolloutPolicyChanged change) {
      return new Models(versions, stable, deployments, change);
    }

    Optional<VersionRecord> deploying() {
      return versions.stream().filter(v -> v.state() == VersionState.DEPLOYING).findFirst();
    }

    Optional<VersionRecord> find(String version) {
      return versions.stream().filter(v -> v.version().equals(version)).findFirst();
    }

    VersionRecord require(String version) {
      return find(version).orElseThrow(() -> new IllegalStateException("unknown version " + version));
    }

    Models with(VersionRecord updated) {
      List<VersionRecord> next = new ArrayList<>(versions.size() + 1);
      boolean replaced = false;
      for (VersionRecord v : versions) {
        if (v.version().equals(updated.version())) {
          next.add(updated);
          replaced = true;
        } else {
          next.add(v);
        }
      }
      if (!replaced) {
        next.add(updated);
      }
      return new Models(next, stable, deployments, policyChange);
    }

    Models withStable(String newStable) {
      return new Models(versions, newStable, deployments, policyChange);
    }

    Optional<VersionRecord> oldestReady() {
      return versions.stream().filter(v -> v.state() == VersionState.READY).findFirst();
    }

    /**
     * Whether a rollback may restore {@code v} at some time before its {@code retainedUntil} ({@link
     * #restorablePrevious}): RETIRED with a retention, still deployed, and no version retired after it
     * retained as long. A version that can never be restored promises no restore (the view shows no
     * {@code retainedUntil}): its adapter was unloaded, or a newer stable retired since.
     */
    boolean mayBeRestored(VersionRecord v) {
      if (v.state() != VersionState.RETIRED || v.retainedUntil() == null || v.retiredAt() == null) return false;
      Deployment d = deployments.get(v.version());
      if (d != null && d.status() != Deployments.Status.CONFIRMED) return false;
      return versions.stream()
          .filter(w -> w.state() == VersionState.RETIRED && w.retainedUntil() != null && w.retiredAt() != null)
          .filter(w -> w.retiredAt().isAfter(v.retiredAt()))
          .allMatch(w -> w.retainedUntil().isBefore(v.retainedUntil()));
    }

    /**
     * The most recently retired version, if it may still be restored at {@code now}: within its
     * retention and still deployed (no deployment recorded, or a confirmed one). An older stable is
     * unloaded once a newer one retires; restoring it made an unloaded adapter STABLE, and every
     * call of the agent got 502 with nothing to load it again (trial t85).
     */
    Optional<VersionRecord> restorablePrevious(Instant now) {
      return versions.stream()
          .filter(v -> v.state() == VersionState.RETIRED && v.retainedUntil() != null)
          .filter(v -> now.isBefore(v.retainedUntil()))
          .max((a, b) -> a.retiredAt().compareTo(b.retiredAt()))
          .filter(v -> deployments.get(v.version()) == null
              || deployments.get(v.version()).status() == Deployments.Status.CONFIRMED);
    }
  }

  record VersionRecord(
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      boolean manual,
      Map<String, Double> offlineMetrics,
      VersionState state,
      Instant registeredAt,
      Instant retiredAt,
      Instant retainedUntil,
      OutcomeAggregates online,
      List<HistoryEntry> history,
      // Optional (a snapshot written before it reads null): the name a hand version named.
      @JsonInclude(JsonInclude.Include.NON_NULL) String servedModel) {

    @JsonCreator
    public VersionRecord {
      offlineMetrics =
          offlineMetrics == null
              ? Map.of()
              : Collections.unmodifiableMap(new LinkedHashMap<>(offlineMetrics));
      history = List.copyOf(history);
    }

    public VersionRecord(String version, String artifact, String endpoint, String sourceJobId, boolean manual,
        Map<String, Double> offlineMetrics, VersionState state, Instant registeredAt, Instant retiredAt,
        Instant retainedUntil, OutcomeAggregates online, List<HistoryEntry> history) {
      this(version, artifact, endpoint, sourceJobId, manual, offlineMetrics, state, registeredAt, retiredAt,
          retainedUntil, online, history, null);
    }

    VersionRecord moveTo(VersionState next, Double ratio, Instant at, String reason) {
      List<HistoryEntry> h = new ArrayList<>(history);
      h.add(new HistoryEntry(next, ratio, at, reason));
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          next, registeredAt, retiredAt, retainedUntil, online, h, servedModel);
    }

    VersionRecord retire(Instant at, Instant until, String reason) {
      VersionRecord moved = moveTo(VersionState.RETIRED, null, at, reason);
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          moved.state, registeredAt, at, until, online, moved.history, servedModel);
    }

    /** Back in service after a rollback restored it: no longer retired, no retention deadline. */
    VersionRecord unretired() {
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          state, registeredAt, null, null, online, history, servedModel);
    }

    VersionRecord withOutcome(OutcomeRecorded o) {
      return withOnline(o.addTo(online));
    }

    VersionRecord withRevision(ModelEvents.OutcomeRevised o) {
      return withOnline(o.addTo(online));
    }

    private VersionRecord withOnline(OutcomeAggregates next) {
      return new VersionRecord(version, artifact, endpoint, sourceJobId, manual, offlineMetrics,
          state, registeredAt, retiredAt, retainedUntil, next, history, servedModel);
    }
  }

  /**
   * The rollout in progress: the plan, the current step and what it has measured, and the
   * session ids already counted (for deduplication, for the whole rollout).
   */
  record Rollout(
      String candidate,
      String stableVersion,
      List<Double> plan,
      int step,
      Instant stepStartedAt,
      boolean paused,
      OutcomeAggregates candidateStep,
      OutcomeAggregates stableStep,
      SessionSet candidateSessions,
      SessionSet stableSessions,
      // true in every rollout this build starts; null in one restored from a snapshot written before
      // the sets kept scored marks (see SessionSet#containsScored)
      Boolean scoredMarks) {

    public Rollout {
      plan = List.copyOf(plan);
    }

    /** The first step of a rollout just started: nothing measured, nobody counted yet. */
    static Rollout start(String candidate, String stableVersion, List<Double> plan, Instant at) {
      return new Rollout(candidate, stableVersion, plan, 0, at, false,
          OutcomeAggregates.EMPTY, OutcomeAggregates.EMPTY, SessionSet.EMPTY, SessionSet.EMPTY, Boolean.TRUE);
    }

    double ratio() {
      return plan.get(step);
    }

    VersionState servingState() {
      return step == 0 ? VersionState.CANARY : VersionState.RAMP;
    }

    Rollout toStep(int next, Instant at) {
      return new Rollout(candidate, stableVersion, plan, next, at, false, OutcomeAggregates.EMPTY,
          OutcomeAggregates.EMPTY, candidateSessions, stableSessions, scoredMarks);
    }

    Rollout paused(boolean p, Instant stepStart) {
      return new Rollout(candidate, stableVersion, plan, step, stepStart, p, candidateStep,
          stableStep, candidateSessions, stableSessions, scoredMarks);
    }

    Rollout withOutcome(OutcomeRecorded o) {
      boolean scored = OutcomeAggregates.satisfactionScore(o.rating(), o.thumbsUp(), o.thumbsDown()) != null;
      if (o.modelVersion().equals(candidate)) {
        return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused,
            added(o, candidateStep),
            stableStep, counted(candidateSessions, o.sessionId(), scored), stableSessions, scoredMarks);
      }
      return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused, candidateStep,
          added(o, stableStep),
          candidateSessions, counted(stableSessions, o.sessionId(), scored), scoredMarks);
    }

    /** The step's figures with {@code o}'s session, marked as carried over when it started before the step. */
    private OutcomeAggregates added(OutcomeRecorded o, OutcomeAggregates step) {
      OutcomeAggregates next = o.addTo(step);
      return o.startedBefore(stepStartedAt) ? next.carriedOverOne() : next;
    }

    /** Late feedback of a counted session: its score joins the current step's figures. */
    Rollout withRevision(ModelEvents.OutcomeRevised o) {
      if (o.modelVersion().equals(candidate)) {
        return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused, o.addTo(candidateStep),
            stableStep, candidateSessions.addScored(o.sessionId()), stableSessions, scoredMarks);
      }
      return new Rollout(candidate, stableVersion, plan, step, stepStartedAt, paused, candidateStep,
          o.addTo(stableStep), candidateSessions, stableSessions.addScored(o.sessionId()), scoredMarks);
    }

    /** The sessions of one version's side, as the command handler reads them. */
    SessionSet sessionsOf(String version) {
      return version.equals(candidate) ? candidateSessions : version.equals(stableVersion) ? stableSessions : null;
    }

    /** Whether its session sets keep scored marks for every session (false: restored from an older snapshot). */
    boolean marksKept() {
      return Boolean.TRUE.equals(scoredMarks);
    }

    private SessionSet counted(SessionSet sessions, String sessionId, boolean scored) {
      SessionSet next = marksKept() ? sessions.add(sessionId) : sessions.addAfterUpgrade(sessionId);
      return scored ? next.addScored(sessionId) : next;
    }
  }
}
