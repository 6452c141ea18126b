package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingTarget;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * ModelVersion's decisions about deployment, as events added to a command's plan (pure: no call,
 * no timer), and where a route sends a deployed version. The rollout side of a start is {@link
 * RolloutPlanner}'s; {@link DeploymentCalls} makes the calls these events announce.
 */
final class DeploymentPlanner {

  private final String agentId;
  private final Serving serving;

  DeploymentPlanner(String agentId, Serving serving) {
    this.agentId = agentId;
    this.serving = serving;
  }

  /**
   * READY (or DEPLOY_FAILED, promoted again) → DEPLOYING: the intent, before the load call. A
   * served name names one set of weights forever, so a name another version already used fails
   * the deployment at once, without a call.
   */
  void requestDeployment(Plan<State, Event> p, String version, String why, Instant now) {
    VersionRecord v = p.state().models().require(version);
    ServingTarget t = serving.backend().target(agentId, version, v.artifact(), v.endpoint());
    Optional<String> taken = p.state().models().deployments().entrySet().stream()
        .filter(d -> !d.getKey().equals(version))
        .filter(d -> t.servedModel() != null && t.servedModel().equals(d.getValue().servedModel()))
        .map(Map.Entry::getKey).findFirst();
    p.add(new Deployments.DeploymentRequested(version, serving.backend().name(), t.endpoint(),
        t.servedModel(), why, now));
    if (taken.isPresent()) {
      p.add(new Deployments.DeploymentFailed(version, t.servedModel(), "served model name "
          + t.servedModel() + " is already used by version " + taken.get(), 0, now));
    }
  }

  /**
   * READY → DEPLOYING → CANARY in one write for a version served at its own endpoint (every version
   * under the {@code static} backend; under one that loads, {@link Serving#servesAtOwnEndpoint}):
   * nothing to load, so the intent and its confirmation are recorded together, backend {@code
   * static}, which no load, reload or unload call ever touches. The served name recorded is the
   * registration's, else {@code serving.static.served-model}'s; none ("") stays none, so the agent's
   * own name keeps passing through.
   */
  void deployAtOwnEndpoint(Plan<State, Event> p, String version, String why, List<Double> steps, Instant now) {
    VersionRecord v = p.state().models().require(version);
    ServingTarget t = serving.ownEndpoints().target(agentId, version, v.artifact(), v.endpoint());
    String served = v.servedModel() != null ? v.servedModel() : t.servedModel();
    p.add(new Deployments.DeploymentRequested(version, serving.ownEndpoints().name(), t.endpoint(),
        served, why, now));
    confirm(p, version, p.state().models().deployments().get(version), steps, now);
  }

  /** The load is confirmed: the rollout the deployment was requested for starts in the same write. */
  void confirm(Plan<State, Event> p, String version, Deployment dep, List<Double> steps, Instant now) {
    p.add(new Deployments.DeploymentConfirmed(version, dep.endpoint(), dep.servedModel(), now));
    String stable = p.state().models().stable();
    if (p.state() instanceof Idle && stable != null) {
      p.add(new RolloutStarted(version, stable, steps, dep.detail(), now));
    }
  }

  /**
   * A ROLLED_BACK version, and a RETIRED one a rollback can no longer restore, is unloaded: the
   * intent goes into the same write as the transition. The most recently retired stable stays
   * loaded while it may be restored, so that its rollback serves at once.
   */
  void planUndeploys(Plan<State, Event> p, Instant now) {
    if (!p.isEmpty()) {
      planDueUndeploys(p, now);
    }
  }

  /**
   * The unloads due at {@code now} whether or not anything else is written: when a retention ends
   * ({@link RetentionTimer}) nothing else happens to the agent.
   */
  void planDueUndeploys(Plan<State, Event> p, Instant now) {
    if (!serving.backend().callsServer()) {
      return;
    }
    Models m = p.state().models();
    Optional<VersionRecord> restorable = m.restorablePrevious(now);
    for (VersionRecord v : m.versions()) {
      Deployment dep = m.deployments().get(v.version());
      if (dep == null || dep.status() != Deployments.Status.CONFIRMED
          || !serving.backend().name().equals(dep.backend())) {
        continue;
      }
      boolean rolledBack = v.state() == VersionState.ROLLED_BACK;
      boolean retiredForGood = v.state() == VersionState.RETIRED
          && (restorable.isEmpty() || !restorable.get().version().equals(v.version()));
      if (rolledBack || retiredForGood) {
        p.add(new Deployments.UndeployRequested(v.version(), dep.servedModel(),
            rolledBack ? "rolled back" : "retired and no longer restorable", now));
      }
    }
  }

  /** When the earliest retention of a retired version still loaded by this backend ends (empty: none). */
  Optional<Instant> nextRetentionEnd(Models m) {
    if (!serving.backend().callsServer()) {
      return Optional.empty();
    }
    return m.versions().stream()
        .filter(v -> v.state() == VersionState.RETIRED && v.retainedUntil() != null)
        .filter(v -> {
          Deployment d = m.deployments().get(v.version());
          return d != null && d.status() == Deployments.Status.CONFIRMED && serving.backend().name().equals(d.backend());
        })
        .map(VersionRecord::retainedUntil)
        .min(Instant::compareTo);
  }

  /**
   * Where a confirmed deployment is served according to the current configuration: the served
   * name identifies the weights, the server's address may change between restarts (the base
   * model's URL in the model section, the vLLM server's URL).
   */
  String currentEndpoint(Models m, String version, String recorded) {
    Deployment d = m.deployments().get(version);
    if (d == null || d.status() != Deployments.Status.CONFIRMED) {
      return recorded;
    }
    Optional<BaseModel> base = serving.baseModel();
    if (BaseModel.VERSION.equals(version) && base.isPresent() && base.get().model().equals(d.servedModel())) {
      return base.get().endpoint();
    }
    if (serving.backend().name().equals(d.backend()) && serving.backend().callsServer()) {
      VersionRecord v = m.require(version);
      return serving.backend().target(agentId, version, v.artifact(), v.endpoint()).endpoint();
    }
    return recorded;
  }

  /** The model name a route sends upstream (null: the agent's own). */
  String servedModel(Models m, String version) {
    String recorded = recordedServedModel(m, version);
    if (recorded != null) return recorded;
    VersionRecord v = m.require(version);
    return serving.backend().callsServer() ? null
        : serving.backend().target(agentId, version, v.artifact(), v.endpoint()).servedModel();
  }

  /**
   * The served model name the journal holds for {@code version}: its confirmed deployment's, else the
   * one named at registration (versions the static backend rolled out before it recorded their
   * deployment have none); null when neither
   * names one (then the serving settings decide) or there is no such version.
   */
  static String recordedServedModel(Models m, String version) {
    Deployment d = m.deployments().get(version);
    if (d != null && d.status() == Deployments.Status.CONFIRMED) return d.servedModel();
    return m.find(version).map(VersionRecord::servedModel).orElse(null);
  }
}
