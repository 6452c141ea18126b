package io.otl.core.coordinator;

import static io.otl.core.coordinator.PortCalls.call;
import static io.otl.core.coordinator.PortCalls.describe;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.ProxyRestarted;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorProtocol.ForwardRetryTick;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverRetry;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsPolled;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsTick;
import io.otl.core.coordinator.CoordinatorProtocol.RewardForwardFinished;
import io.otl.core.coordinator.CoordinatorState.PendingReward;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.StepKey.Step;
import io.otl.core.entity.Plan;
import java.time.Duration;
import java.util.List;

/**
 * The trinity-proxy loop: rewards are forwarded to the proxy as they arrive (retried until they
 * are), its metrics are polled, and each new proxy model is handed over to ModelVersion as a
 * candidate. Handlers return a {@link Plan} that {@code TrainingCoordinator} runs.
 */
final class ProxyLoop {
  static final String FORWARD_TIMER = "forward-retry";
  static final String METRICS_TIMER = "proxy-metrics";
  static final String PROXY_HANDOVER_TIMER = "proxy-handover";
  /** Most pending rewards forwarded per retry round. */
  private static final int FORWARD_BATCH = 256;

  private final CoordinatorRuntime rt;

  ProxyLoop(CoordinatorRuntime rt) {
    this.rt = rt;
  }

  /** After recovery: poll the metrics, forward what is pending, hand over a pending candidate. */
  void resume(State st) {
    rt.timers.startTimerWithFixedDelay(METRICS_TIMER, ProxyMetricsTick.INSTANCE, rt.policy.pollInterval());
    forwardPending(st);
    handOverPending(st);
  }

  void handOverPending(State st) {
    if (st.pendingProxyCandidate() != null) {
      handOver(st.pendingProxyCandidate());
    }
  }

  void forward(String sessionId, PendingReward pending) {
    if (pending == null || rt.ports.onlineBackend() == null || !rt.inFlight.add(StepKey.of(Step.FORWARD, sessionId))) {
      return;
    }
    rt.ctx.pipeToSelf(
        call(() -> rt.ports.onlineBackend().forwardReward(pending.msgIds(), pending.reward(), sessionId, 0)),
        (ok, error) -> new RewardForwardFinished(sessionId, error == null ? null : describe(error),
            error != null && PortCalls.refusedForGood(error)));
  }

  void forwardPending(State s) {
    int[] sent = {0};
    s.pendingRewards().forEach((id, pending) -> {
      if (sent[0] < FORWARD_BATCH && !rt.inFlight.contains(StepKey.of(Step.FORWARD, id))) {
        forward(id, pending);
        sent[0]++;
      }
    });
  }

  Plan<State, Event> onRewardForwardFinished(State s, RewardForwardFinished c) {
    rt.inFlight.remove(StepKey.of(Step.FORWARD, c.sessionId()));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    StepKey failures = StepKey.of(Step.FORWARD);
    if (c.refused() && s.pendingRewards().containsKey(c.sessionId())) {
      // Retried forever, it held every commit whose job holds this session (ProxyRules.commitMustWait):
      // the agent's online training stopped on one reward (trial t77).
      rt.log().warn("agent {}: the Trinity proxy refused the reward of session {} ({}); it is not sent again",
          rt.agentId, c.sessionId(), c.error());
      p.add(new RewardForwarded(c.sessionId(), rt.now(), c.error()));
      return p;
    }
    if (c.error() != null) {
      Duration backoff = rt.failed(failures);
      if (!rt.timers.isTimerActive(FORWARD_TIMER)) {
        rt.log().warn("agent {}: forwarding rewards to the Trinity proxy failed; retrying", rt.agentId);
        rt.timers.startSingleTimer(FORWARD_TIMER, ForwardRetryTick.INSTANCE, backoff);
      }
      return p;
    }
    rt.failures.remove(failures);
    if (s.pendingRewards().containsKey(c.sessionId())) {
      p.add(new RewardForwarded(c.sessionId(), rt.now()));
    }
    return p;
  }

  Plan<State, Event> onMetricsTick(State s) {
    if (rt.ports.onlineBackend() != null && rt.inFlight.add(StepKey.of(Step.METRICS))) {
      rt.ctx.pipeToSelf(call(() -> rt.ports.onlineBackend().metrics()), (m, error) ->
          new ProxyMetricsPolled(error == null ? m : null, error == null ? null : describe(error)));
    }
    return new Plan<>(s, CoordinatorEventHandler::applyEvent);
  }

  Plan<State, Event> onMetricsPolled(State s, ProxyMetricsPolled c) {
    rt.inFlight.remove(StepKey.of(Step.METRICS));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    if (c.error() != null || c.metrics() == null) {
      rt.log().debug("agent {}: reading the proxy's metrics failed: {}", rt.agentId, c.error());
      return p;
    }
    List<Event> events = ProxyRules.observed(s, c.metrics(), rt.now());
    for (Event e : events) {
      if (e instanceof ProxyRestarted r) {
        rt.log().info("agent {}: the Trinity proxy's model version went back from {} to {}: it restarted; "
            + "its versions count from there", rt.agentId, s.proxyModelVersion(), r.modelVersion());
      }
      p.add(e);
    }
    if (events.stream().anyMatch(e -> e instanceof ProxyModelObserved)) {
      p.after(this::handOverPending);
    }
    return p;
  }

  private void handOver(ProxyModelObserved o) {
    if (!rt.inFlight.add(StepKey.of(Step.PROXY_HAND_OVER, o.version()))) {
      return;
    }
    String endpoint = rt.policy.trinityEndpoint();
    String artifact = artifact(endpoint, o);
    String openAiBase = openAiBaseUrl(endpoint);
    rt.ctx.pipeToSelf(CandidateNames.registerUnderFreeName(o.version(), name -> rt.ports.candidateSink().register(
            rt.agentId, name, artifact, openAiBase, o.jobId(), o.metrics(), null)),
        (as, error) -> new ProxyHandOverFinished(o.version(), as, error == null ? null : describe(error)));
  }

  /**
   * The proxy's model reference. After a restart the proxy's model versions repeat, so the run is
   * part of it: ModelVersion takes a registration with the same artifact and source job as the one
   * it already has, and would take a restarted proxy's version 1 for the first run's proxy-1.
   */
  static String artifact(String endpoint, ProxyModelObserved o) {
    return endpoint + "#model_version=" + o.modelVersion() + (o.restartsSeen() == 0 ? "" : "&restarts=" + o.restartsSeen());
  }

  /**
   * The candidate's endpoint: the proxy's OpenAI base URL, which the route answers to agents that
   * call models themselves (design §1) and which their OpenAI client appends {@code /chat/completions}
   * to. The Trinity proxy serves {@code /v1/chat/completions} beside {@code /feedback},
   * {@code /commit} and {@code /metrics} (design §5), which the node calls under
   * {@code trinity-endpoint}: so that URL plus {@code /v1}. Before trial t169 the endpoint itself
   * was registered: the gateway added the {@code /v1} to a URL without a path, but a client given
   * the route's endpoint as its {@code base_url} got the proxy's 404. The artifact keeps the
   * endpoint as it was, the version's identity in journals written before.
   */
  static String openAiBaseUrl(String trinityEndpoint) {
    String base = trinityEndpoint.endsWith("/")
        ? trinityEndpoint.substring(0, trinityEndpoint.length() - 1) : trinityEndpoint;
    return base.isEmpty() || base.endsWith("/v1") ? base : base + "/v1";
  }

  Plan<State, Event> onHandOverFinished(State s, ProxyHandOverFinished c) {
    rt.inFlight.remove(StepKey.of(Step.PROXY_HAND_OVER, c.version()));
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    ProxyModelObserved pending = s.pendingProxyCandidate();
    if (pending == null || !pending.version().equals(c.version())) {
      return p;
    }
    StepKey failures = StepKey.of(Step.PROXY_HAND_OVER);
    if (c.error() != null) {
      Duration backoff = rt.failed(failures);
      rt.log().warn("agent {}: handing over {} failed; retrying", rt.agentId, c.version());
      rt.timers.startSingleTimer(PROXY_HANDOVER_TIMER, ProxyHandOverRetry.INSTANCE, backoff);
      return p;
    }
    rt.failures.remove(failures);
    p.add(JobSteps.handedOver(pending.jobId(), pending.version(), c.handedOverAs(), rt.now()));
    return p;
  }
}
