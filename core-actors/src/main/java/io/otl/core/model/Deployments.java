package io.otl.core.model;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.TransitionEvent;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Deployment of model versions into serving (design §3.3): the facts ModelVersion records around
 * each call to the serving backend, their pure effect on the state, and the deployment record of
 * each version, in one file so the deployment lifecycle reads in one place.
 *
 * <p>Order of facts for a backend that calls a server: {@link DeploymentRequested} (the intent,
 * persisted before the call; the version is DEPLOYING and serves nothing), then {@link
 * DeploymentConfirmed} (with the rollout start in the same write) or {@link DeploymentFailed}
 * (DEPLOY_FAILED). Undeploying: {@link UndeployRequested} before the call, {@link Undeployed}
 * after it. A node that dies between intent and outcome calls again after recovery; the backend's
 * calls are idempotent.
 */
public final class Deployments {

  private Deployments() {}

  public enum Status {
    /** Intent recorded, the load call not yet confirmed: nothing routes here. */
    REQUESTED,
    CONFIRMED,
    FAILED,
    /** Intent to unload recorded, not yet confirmed. */
    UNDEPLOYING,
    UNDEPLOYED
  }

  /**
   * A version's deployment.
   *
   * @param endpoint the OpenAI base URL the gateway calls for this version
   * @param servedModel the model name sent upstream (null: the agent's own name is passed on)
   */
  public record Deployment(
      String backend, String endpoint, String servedModel, Status status, String detail, Instant at) {

    Deployment moveTo(Status next, String why, Instant when) {
      return new Deployment(backend, endpoint, servedModel, next, why, when);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Events
  // ------------------------------------------------------------------------------------------

  /**
   * The agent's configured base model registered as {@code v0}, STABLE from the start, served by
   * a static endpoint (no load call).
   */
  public record BaseModelRegistered(
      String version, String provider, String model, String endpoint, Instant at)
      implements TransitionEvent {}

  /** @param reason why the rollout is wanted (auto-deploy, manual promote); it starts on success */
  public record DeploymentRequested(
      String version, String backend, String endpoint, String servedModel, String reason, Instant at)
      implements TransitionEvent {}

  public record DeploymentConfirmed(String version, String endpoint, String servedModel, Instant at)
      implements TransitionEvent {}

  /** @param attempts how many load calls were made */
  public record DeploymentFailed(
      String version, String servedModel, String error, int attempts, Instant at)
      implements TransitionEvent {}

  public record UndeployRequested(String version, String servedModel, String reason, Instant at)
      implements TransitionEvent {}

  public record Undeployed(String version, String servedModel, Instant at) implements TransitionEvent {}

  // ------------------------------------------------------------------------------------------
  // Pure effects on the state (called from ModelEventHandler.apply)
  // ------------------------------------------------------------------------------------------

  /** The state after {@code e}, or empty when {@code e} is not a deployment event. */
  static Optional<State> apply(State s, Event e) {
    Models m = s.models();
    if (e instanceof BaseModelRegistered b) {
      String reason = "base model " + b.model() + " from configuration, stable from the start";
      VersionRecord rec = new VersionRecord(b.version(), "base:" + b.model(), b.endpoint(), null, false,
          Map.of(), VersionState.STABLE, b.at(), null, null, OutcomeAggregates.EMPTY,
          List.of(new HistoryEntry(VersionState.STABLE, 1.0, b.at(), reason)));
      Models next = m.with(rec).withStable(b.version());
      return Optional.of(with(s, put(next, b.version(),
          new Deployment("static", b.endpoint(), b.model(), Status.CONFIRMED, reason, b.at()))));
    }
    if (e instanceof DeploymentRequested d) {
      Models next = m.with(m.require(d.version()).moveTo(VersionState.DEPLOYING, 0.0, d.at(),
          d.reason() + ": deploying to " + d.backend() + " as "
              + (d.servedModel() == null ? "the agent's own model name" : d.servedModel())));
      return Optional.of(with(s, put(next, d.version(), new Deployment(d.backend(), d.endpoint(),
          d.servedModel(), Status.REQUESTED, d.reason(), d.at()))));
    }
    if (e instanceof DeploymentConfirmed d) {
      Deployment dep = m.deployments().get(d.version());
      return Optional.of(with(s, put(m, d.version(),
          new Deployment(dep == null ? null : dep.backend(), d.endpoint(), d.servedModel(),
              Status.CONFIRMED, confirmedDetail(dep), d.at()))));
    }
    if (e instanceof DeploymentFailed d) {
      Models next = m.with(m.require(d.version()).moveTo(VersionState.DEPLOY_FAILED, 0.0, d.at(),
          "deployment failed after " + d.attempts() + " attempt(s): " + d.error()));
      Deployment dep = m.deployments().get(d.version());
      return Optional.of(with(s, dep == null ? next
          : put(next, d.version(), dep.moveTo(Status.FAILED, d.error(), d.at()))));
    }
    if (e instanceof UndeployRequested u) {
      Deployment dep = m.deployments().get(u.version());
      return Optional.of(dep == null ? s
          : with(s, put(m, u.version(), dep.moveTo(Status.UNDEPLOYING, u.reason(), u.at()))));
    }
    if (e instanceof Undeployed u) {
      Deployment dep = m.deployments().get(u.version());
      return Optional.of(dep == null ? s
          : with(s, put(m, u.version(), dep.moveTo(Status.UNDEPLOYED, "unloaded", u.at()))));
    }
    return Optional.empty();
  }

  /** A static deployment loads nothing: it is served where it was registered. */
  private static String confirmedDetail(Deployment requested) {
    return requested != null && "static".equals(requested.backend())
        ? "served at its registered endpoint (nothing to load)" : "loaded";
  }

  private static Models put(Models m, String version, Deployment d) {
    Map<String, Deployment> next = new HashMap<>(m.deployments());
    next.put(version, d);
    return m.withDeployments(next);
  }

  private static State with(State s, Models m) {
    return s instanceof RollingOut r ? new RollingOut(m, r.rollout()) : new Idle(m);
  }
}
