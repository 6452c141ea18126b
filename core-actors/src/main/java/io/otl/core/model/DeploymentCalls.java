package io.otl.core.model;

import io.otl.core.entity.PortCall;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.Deployments.Status;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelState.State;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls ModelVersion makes to its serving backend, after the intent is in the journal: one
 * call per version at a time, its outcome sent back to the entity as a command, retries after a
 * doubling backoff. What to record about an outcome is the entity's decision; this class only
 * calls. After a restart {@link #resume} calls again for every intent without an outcome (the
 * mirror of the coordinator's resumed submissions); the backend's calls are idempotent.
 */
final class DeploymentCalls {

  private static final Logger log = LoggerFactory.getLogger(DeploymentCalls.class);

  /** Internal: make (or retry) the load call of a version. */
  record DeployCall(String version, int attempt) implements Command {}

  /** Internal: a load call's outcome; {@code error} null on success. */
  record DeployOutcome(String version, String servedModel, int attempt, String error, boolean retryable)
      implements Command {}

  /** Internal: make (or retry) the unload call of a version. */
  record UndeployCall(String version, int attempt) implements Command {}

  record UndeployOutcome(String version, String servedModel, int attempt, String error) implements Command {}

  /** Which call a retry timer makes again. */
  private enum Call { DEPLOY, UNDEPLOY }

  /** Key of a retry timer: one per version and call, typed so two keys cannot collide by spelling. */
  private record RetryTimer(Call call, String version) {}

  private final String agentId;
  private final Serving serving;
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  /** Versions with a call in flight or a retry scheduled: never two calls for one version. */
  private final Set<String> busy = new HashSet<>();
  /**
   * When the last reload the gateway asked for started: every call routed to a lost adapter asks,
   * and one reload a while answers them all (a server that keeps losing them is not hammered).
   */
  private Instant lastReload = Instant.MIN;
  static final Duration RELOAD_PAUSE = Duration.ofSeconds(5);

  DeploymentCalls(String agentId, Serving serving, ActorContext<Command> context, TimerScheduler<Command> timers) {
    this.agentId = agentId;
    this.serving = serving;
    this.context = context;
    this.timers = timers;
  }

  /** Starts a call for every recorded intent that has none in flight. */
  void resume(State s) {
    for (Map.Entry<String, Deployment> e : s.models().deployments().entrySet()) {
      String version = e.getKey();
      if (busy.contains(version) || !serving.backend().name().equals(e.getValue().backend())) {
        continue;
      }
      if (e.getValue().status() == Status.REQUESTED) {
        busy.add(version);
        context.getSelf().tell(new DeployCall(version, 1));
      } else if (e.getValue().status() == Status.UNDEPLOYING) {
        busy.add(version);
        context.getSelf().tell(new UndeployCall(version, 1));
      }
    }
  }

  /**
   * After recovery (or when the gateway finds one missing): loads again, without recording
   * anything, every confirmed adapter a rollout or a rollback may route to, because a model server
   * that restarted has lost its runtime-loaded adapters. The load is idempotent; a failure is logged (the gateway then falls back to stable).
   */
  void ensureLoaded(State s) {
    if (!serving.backend().callsServer()) {
      return;
    }
    for (Map.Entry<String, Deployment> e : s.models().deployments().entrySet()) {
      Deployment d = e.getValue();
      ModelState.VersionState state = s.models().require(e.getKey()).state();
      boolean routable = switch (state) {
        case CANARY, RAMP, PAUSED, STABLE, RETIRED -> true;
        default -> false;
      };
      if (d.status() != Status.CONFIRMED || !routable || !serving.backend().name().equals(d.backend())) {
        continue;
      }
      String artifact = s.models().require(e.getKey()).artifact();
      PortCall.call(() -> serving.backend().deploy(new ServingTarget(d.endpoint(), d.servedModel()), artifact))
          .whenComplete((ok, failure) -> {
            if (failure != null) {
              log.warn("re-loading agent={} version={} served-model={} failed: {}", agentId,
                  e.getKey(), d.servedModel(), describe(failure));
            }
          });
    }
  }

  /**
   * The gateway found {@code version}'s adapter missing on the model server (a vLLM server that
   * restarted while this node ran): all routable adapters are loaded again, since such a server
   * lost every one of them. Only for a version this entity has confirmed, and at most once per
   * {@link #RELOAD_PAUSE}.
   */
  void reload(State s, String version, Instant now) {
    Deployment d = s.models().deployments().get(version);
    if (!serving.backend().callsServer() || d == null || d.status() != Status.CONFIRMED
        || !serving.backend().name().equals(d.backend()) || now.isBefore(lastReload.plus(RELOAD_PAUSE))) {
      return;
    }
    lastReload = now;
    log.info("agent={} version={} served-model={} is missing on the model server; loading the routable adapters again",
        agentId, version, d.servedModel());
    ensureLoaded(s);
  }

  void deploy(State s, DeployCall c) {
    Deployment d = s.models().deployments().get(c.version());
    if (d == null || d.status() != Status.REQUESTED) {
      busy.remove(c.version());
      resume(s);
      return;
    }
    String artifact = s.models().require(c.version()).artifact();
    ServingTarget target = new ServingTarget(d.endpoint(), d.servedModel());
    log.info("deploying agent={} version={} served-model={} backend={} attempt={}", agentId, c.version(),
        d.servedModel(), d.backend(), c.attempt());
    context.pipeToSelf(PortCall.call(() -> serving.backend().deploy(target, artifact)), (ok, failure) -> failure == null
        ? new DeployOutcome(c.version(), d.servedModel(), c.attempt(), null, false)
        : new DeployOutcome(c.version(), d.servedModel(), c.attempt(), describe(failure), retryable(failure)));
  }

  void undeploy(State s, UndeployCall c) {
    Deployment d = s.models().deployments().get(c.version());
    if (d == null || d.status() != Status.UNDEPLOYING) {
      busy.remove(c.version());
      resume(s);
      return;
    }
    log.info("undeploying agent={} version={} served-model={} attempt={}", agentId, c.version(),
        d.servedModel(), c.attempt());
    context.pipeToSelf(PortCall.call(() -> serving.backend().undeploy(new ServingTarget(d.endpoint(), d.servedModel()))),
        (ok, failure) -> new UndeployOutcome(c.version(), d.servedModel(), c.attempt(),
            failure == null ? null : describe(failure)));
  }

  void retryDeploy(String version, int attempt) {
    log.warn("deploy of agent={} version={} failed; attempt {} in {}", agentId, version, attempt,
        serving.backoff(attempt));
    busy.add(version);
    timers.startSingleTimer(new RetryTimer(Call.DEPLOY, version), new DeployCall(version, attempt),
        serving.backoff(attempt));
  }

  void retryUndeploy(String version, int attempt) {
    log.warn("undeploy of agent={} version={} failed; attempt {} in {}", agentId, version, attempt,
        serving.backoff(attempt));
    busy.add(version);
    timers.startSingleTimer(new RetryTimer(Call.UNDEPLOY, version), new UndeployCall(version, attempt),
        serving.backoff(attempt));
  }

  /** The outcome has arrived: the version may be called again. */
  void finished(String version) {
    busy.remove(version);
  }

  private static boolean retryable(Throwable t) {
    return !(PortCall.unwrap(t) instanceof ServingException se) || se.retryable();
  }

  private static String describe(Throwable t) {
    return PortCall.describe(t);
  }
}
