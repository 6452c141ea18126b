package io.otl.core.model;

import io.otl.core.model.ModelEvents.EvaluationStarted;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.OfflineGateFailed;
import io.otl.core.model.ModelEvents.OfflineGatePassed;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutResumed;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelEvents.StepAdvanced;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRegistered;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import java.util.List;
import java.util.Optional;

/**
 * The pure event handler of {@link ModelVersion}: the live entity, recovery, a command's {@link
 * Plan} and the audit's "state as of T" all go through {@link #apply}. No clock, no settings: an
 * event's effect depends on the event and the state only, so replays of old journals are exact.
 */
final class ModelEventHandler {

  private ModelEventHandler() {}

  static State apply(State s, Event e) {
    Optional<State> deployed = Deployments.apply(s, e);
    if (deployed.isPresent()) {
      return deployed.get();
    }
    Models m = s.models();
    if (e instanceof RolloutPolicy.RolloutPolicyChanged c) {
      return withModels(s, m.withPolicyChange(c));
    }
    if (e instanceof OutcomeRecorded o) {
      RollingOut r = (RollingOut) s;
      return new RollingOut(m.with(m.require(o.modelVersion()).withOutcome(o)), r.rollout().withOutcome(o));
    }
    if (e instanceof ModelEvents.OutcomeRevised o) {
      RollingOut r = (RollingOut) s;
      return new RollingOut(m.with(m.require(o.modelVersion()).withRevision(o)), r.rollout().withRevision(o));
    }
    if (e instanceof VersionRegistered v) {
      String reason = v.manual() ? "registered by hand"
          : v.sourceJobId() == null ? "registered as candidate" : "registered from job " + v.sourceJobId();
      VersionRecord rec = new VersionRecord(v.version(), v.artifact(), v.endpoint(), v.sourceJobId(),
          v.manual(), v.offlineMetrics(), VersionState.REGISTERED, v.at(), null, null,
          OutcomeAggregates.EMPTY, List.of(new HistoryEntry(VersionState.REGISTERED, null, v.at(), reason)),
          v.servedModel());
      return withModels(s, m.with(rec));
    }
    if (e instanceof EvaluationStarted v) {
      String reason = v.baselineVersion() == null ? "offline evaluation (no stable yet)"
          : "offline evaluation against " + v.baselineVersion();
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.EVALUATING, null, v.at(), reason)));
    }
    if (e instanceof OfflineGatePassed v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.READY, null, v.at(), v.note())));
    }
    if (e instanceof EvalEvidence.GateWithoutEvidence v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.NO_EVIDENCE, null, v.at(),
          EvalEvidence.historyReason(v))));
    }
    if (e instanceof Supersession.CandidateSuperseded v) {
      return withModels(s, m.with(m.require(v.version()).retire(v.at(), null, Supersession.reason(v))));
    }
    if (e instanceof OfflineGateFailed v) {
      return withModels(s, m.with(m.require(v.version()).moveTo(VersionState.REJECTED, null, v.at(),
          "offline gate failed: " + String.join("; ", v.reasons()))));
    }
    if (e instanceof RolloutStarted v) {
      Rollout rollout = Rollout.start(v.version(), v.stableVersion(), v.plan(), v.at());
      return new RollingOut(m.with(m.require(v.version()).moveTo(VersionState.CANARY, rollout.ratio(),
          v.at(), v.reason() + ": canary against " + v.stableVersion())), rollout);
    }
    if (e instanceof StepAdvanced v) {
      Rollout rollout = ((RollingOut) s).rollout().toStep(v.toStep(), v.at());
      return new RollingOut(m.with(m.require(v.version()).moveTo(rollout.servingState(), v.ratio(), v.at(),
          "step " + v.fromStep() + " passed, step " + v.toStep() + " starts")), rollout);
    }
    if (e instanceof RolloutPaused v) {
      Rollout rollout = ((RollingOut) s).rollout();
      return new RollingOut(m.with(m.require(v.version()).moveTo(VersionState.PAUSED, rollout.ratio(),
          v.at(), v.reason())), rollout.paused(true, rollout.stepStartedAt()));
    }
    if (e instanceof RolloutResumed v) {
      Rollout rollout = ((RollingOut) s).rollout().paused(false, v.at());
      return new RollingOut(m.with(m.require(v.version()).moveTo(rollout.servingState(), rollout.ratio(),
          v.at(), "resumed at step " + rollout.step())), rollout);
    }
    if (e instanceof VersionPromoted v) {
      Models next = m.with(m.require(v.version()).moveTo(VersionState.STABLE, 1.0, v.at(), v.reason()));
      if (v.previousStable() != null) {
        next = next.with(next.require(v.previousStable()).retire(v.at(), v.previousRetainedUntil(),
            "superseded by " + v.version() + "; restorable until " + v.previousRetainedUntil()));
      }
      return new Idle(next.withStable(v.version()));
    }
    if (e instanceof VersionRolledBack v) {
      Models next = m.with(m.require(v.version()).moveTo(VersionState.ROLLED_BACK, 0.0, v.at(), v.reason()));
      if (v.restoredStable() == null) {
        return new Idle(next);
      }
      VersionRecord restored = next.require(v.restoredStable()).unretired()
          .moveTo(VersionState.STABLE, 1.0, v.at(), "restored by the rollback of " + v.version());
      return new Idle(next.with(restored).withStable(v.restoredStable()));
    }
    throw new IllegalStateException("unhandled event " + e.getClass().getName());
  }

  private static State withModels(State s, Models m) {
    if (s instanceof RollingOut r) {
      return new RollingOut(m, r.rollout());
    }
    return new Idle(m);
  }
}
