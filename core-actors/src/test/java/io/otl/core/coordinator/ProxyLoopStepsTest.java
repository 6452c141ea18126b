package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsPolled;
import io.otl.core.coordinator.CoordinatorProtocol.RewardForwardFinished;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link ProxyLoop} (package-info "trinity-proxy"): each pooled reward is forwarded once and
 * retried until it is, the proxy's metrics are polled, and only the newest proxy model is handed
 * over as {@code proxy-<n>} with the proxy's OpenAI base URL (the trinity endpoint plus {@code /v1}),
 * the latest commit job and the counters.
 */
class ProxyLoopStepsTest {
  static final String PROXY = "backend = trinity-proxy, trinity-endpoint = \"http://proxy:8010\", "
      + "poll-interval = 5s, submit-retry { min-backoff = 1s, max-backoff = 60s }";

  static State pool(String... ids) {
    List<Event> events = new ArrayList<>();
    for (String id : ids) {
      events.add(PoolEventsTest.pooled(id, 0.5, 1, NOW, "m-" + id));
    }
    return CoordinatorEventHandler.replay(events);
  }

  @Test
  void aForwardedRewardIsRecordedOnceAndAFailureRetriesOnOneTimer() {
    StepsHarness h = new StepsHarness(PROXY);
    State s = pool("s1", "s2");
    h.proxy.forwardPending(s);
    h.proxy.forwardPending(s);
    assertEquals(2, h.online.forwards.size(), "one call per reward while it is in flight");
    assertEquals(2, h.piped().size());

    Plan<State, Event> ok = h.proxy.onRewardForwardFinished(s, new RewardForwardFinished("s1", null));
    assertEquals(List.of(new RewardForwarded("s1", NOW)), ok.events());
    assertTrue(h.proxy.onRewardForwardFinished(ok.state(), new RewardForwardFinished("s1", null)).isEmpty(),
        "already forwarded");

    assertTrue(h.proxy.onRewardForwardFinished(s, new RewardForwardFinished("s2", "down")).isEmpty());
    h.proxy.onRewardForwardFinished(s, new RewardForwardFinished("s2", "down"));
    assertEquals(List.of("forward-retry after PT1S: ForwardRetryTick"), h.timers(), "one retry timer at a time");
    h.proxy.forwardPending(s);
    assertEquals(4, h.online.forwards.size(), "both are retried: no longer in flight");
  }

  /**
   * A proxy that refuses a reward for good (a 4xx: it no longer knows the msg_ids after a restart, say)
   * had it sent again forever, and every commit whose job held the session waited for it: the agent's
   * online training stopped (trial t77). It is settled with the refusal; an outage is still retried.
   */
  @Test
  void aRewardTheProxyRefusesForGoodIsSettledNotRetried() {
    StepsHarness h = new StepsHarness(PROXY);
    State s = pool("s1", "s2", "s3");
    h.online.forward.then(Fakes.failWith(new TrainingBackendException(TrainingBackendException.Kind.REJECTED, 400,
        "POST /feedback answered 400: unknown msg_ids", null)));
    h.online.forward.then(Fakes.failWith(new TrainingBackendException(TrainingBackendException.Kind.UNAVAILABLE, 503,
        "POST /feedback answered 503", null)));
    h.online.forward.then(Fakes.failWith(new TrainingBackendException(TrainingBackendException.Kind.NOT_FOUND, 404,
        "POST /feedback answered 404", null)));
    h.proxy.forwardPending(s);
    List<RewardForwardFinished> finished = h.piped().stream().map(RewardForwardFinished.class::cast).toList();
    assertEquals(List.of(true, false, false), finished.stream().map(RewardForwardFinished::refused).toList(),
        "only the 400 is a refusal for good; a 503 is an outage, a 404 as likely a wrong endpoint");

    Plan<State, Event> refused = h.proxy.onRewardForwardFinished(s, finished.get(0));
    assertEquals(List.of(new RewardForwarded(finished.get(0).sessionId(), NOW, finished.get(0).error())),
        refused.events());
    assertTrue(refused.events().get(0) instanceof RewardForwarded r && r.refused().contains("answered 400"));
    assertTrue(!refused.state().pendingRewards().containsKey(finished.get(0).sessionId()), "no longer pending");
    assertEquals(List.of(), h.timers(), "nothing to retry");
    for (RewardForwardFinished f : finished.subList(1, 3)) {
      assertTrue(h.proxy.onRewardForwardFinished(s, f).isEmpty(), f.toString());
    }
    assertEquals(List.of("forward-retry after PT1S: ForwardRetryTick"), h.timers(), "the others are retried");
  }

  @Test
  void aRewardWithoutAProxyOrWithNothingPendingIsNotForwarded() {
    StepsHarness h = new StepsHarness(PROXY);
    h.proxy.forward("s1", null);
    assertEquals(List.of(), h.online.forwards);
    h.proxy.forward("s1", new CoordinatorState.PendingReward(List.of("m1"), 0.25));
    assertEquals(List.of(new Fakes.Forward(List.of("m1"), 0.25, "s1", 0)), h.online.forwards);
  }

  @Test
  void aNewerProxyModelIsObservedAndHandedOverAsACandidate() {
    StepsHarness h = new StepsHarness(PROXY);
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested("job-1-a", Backend.TRINITY_PROXY),
        new JobSubmitting("job-1-a", 1, NOW), new JobSucceeded("job-1-a", null, null, NOW)));
    h.online.metrics = new ProxyMetrics(Map.of(0, 1, 1, 2), 30, 12, 4); // model 1 serves version 2
    assertTrue(h.proxy.onMetricsTick(s).isEmpty());
    h.proxy.onMetricsTick(s);
    List<CoordinatorProtocol.Command> polled = h.piped();
    assertEquals(List.of(new ProxyMetricsPolled(h.online.metrics, null)), polled, "one metrics call in flight");

    Plan<State, Event> p = persisted(h.proxy.onMetricsPolled(s, (ProxyMetricsPolled) polled.get(0)));
    ProxyModelObserved observed = new ProxyModelObserved("job-1-a", 2, "proxy-2", Map.of("model_version", 2.0,
        "total_experience_count", 30.0, "ready_experience_count", 12.0, "explore_step_num", 4.0), NOW);
    assertEquals(List.of(observed), p.events());
    assertEquals(List.of(new Fakes.Registration("a", "proxy-2", "http://proxy:8010#model_version=2", "http://proxy:8010/v1",
        "job-1-a", observed.metrics())), h.sink.calls);
    assertEquals(List.of(new CoordinatorProtocol.ProxyHandOverFinished("proxy-2", "proxy-2", null)), h.piped());

    assertTrue(h.proxy.onMetricsPolled(p.state(), new ProxyMetricsPolled(h.online.metrics, null)).isEmpty(),
        "model version 2 was seen already");
    assertTrue(h.proxy.onMetricsPolled(s, new ProxyMetricsPolled(null, "down")).isEmpty());
  }

  @Test
  void aRestartedProxyWhoseVersionsCountFromTheStartAgainHasItsNewWeightsHandedOver() {
    // The proxy served version 1 (proxy-1 handed over), then restarted: its model_version counts
    // from 0 again. Before, its new version 1 was ignored as "not above 1" (and, registered, it
    // would have had the first run's proxy-1 artifact and source job, i.e. been taken for it).
    StepsHarness h = new StepsHarness(PROXY);
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested("job-1-a", Backend.TRINITY_PROXY),
        new JobSubmitting("job-1-a", 1, NOW), new JobSucceeded("job-1-a", null, null, NOW),
        new ProxyModelObserved("job-1-a", 1, "proxy-1", Map.of(), NOW), new CandidateHandedOver("job-1-a", "proxy-1", NOW)));
    assertTrue(h.proxy.onMetricsPolled(s, polled(1)).isEmpty(), "no sign of a restart: 1 was seen already");

    Plan<State, Event> back = persisted(h.proxy.onMetricsPolled(s, polled(0)));
    assertEquals(List.of(new CoordinatorEvents.ProxyRestarted(1, 0, NOW)), back.events());
    assertEquals(List.of(), h.sink.calls, "0: the weights the restarted proxy started with, no candidate");

    Plan<State, Event> first = persisted(h.proxy.onMetricsPolled(back.state(), polled(1)));
    ProxyModelObserved observed = (ProxyModelObserved) first.events().get(0);
    assertEquals(List.of(new ProxyModelObserved("job-1-a", 1, "proxy-r1-1", observed.metrics(), NOW, 1)), first.events());
    assertEquals(List.of(new Fakes.Registration("a", "proxy-r1-1", "http://proxy:8010#model_version=1&restarts=1",
        "http://proxy:8010/v1", "job-1-a", observed.metrics())), h.sink.calls,
        "an artifact of its own: the first run's version 1 is other weights");

    State handed = CoordinatorEventHandler.applyEvent(first.state(), new CandidateHandedOver("job-1-a", "proxy-r1-1", NOW));
    assertTrue(h.proxy.onMetricsPolled(handed, polled(1)).isEmpty(), "version 1 of this run was seen already");
    List<Event> next = persisted(h.proxy.onMetricsPolled(handed, polled(2))).events();
    assertEquals(1, next.size(), "the new run goes on: " + next);
    assertEquals("proxy-r1-2", ((ProxyModelObserved) next.get(0)).version());
    assertEquals(1, ((ProxyModelObserved) next.get(0)).restarts());
  }

  private static ProxyMetricsPolled polled(int modelVersion) {
    return new ProxyMetricsPolled(new ProxyMetrics(Map.of(0, modelVersion), 0, 0, 0), null);
  }

  @Test
  void theProxyCandidateIsRecordedUnderItsFinalNameOrRetried() {
    StepsHarness h = new StepsHarness(PROXY);
    ProxyModelObserved o = new ProxyModelObserved(null, 3, "proxy-3", Map.of(), NOW);
    State s = CoordinatorEventHandler.replay(List.of(o));
    assertEquals(List.of(new CandidateHandedOver(null, "proxy-4", NOW, "proxy-3")),
        h.proxy.onHandOverFinished(s, new ProxyHandOverFinished("proxy-3", "proxy-4", null)).events());
    assertTrue(h.proxy.onHandOverFinished(s, new ProxyHandOverFinished("proxy-3", null, "down")).isEmpty());
    h.proxy.onHandOverFinished(s, new ProxyHandOverFinished("proxy-3", null, "down"));
    assertEquals(List.of("proxy-handover after PT1S: ProxyHandOverRetry",
        "proxy-handover after PT2S: ProxyHandOverRetry"), h.timers());
    assertTrue(h.proxy.onHandOverFinished(s, new ProxyHandOverFinished("proxy-2", "proxy-2", null)).isEmpty(),
        "not the pending candidate");
    assertTrue(h.proxy.onHandOverFinished(State.EMPTY, new ProxyHandOverFinished("proxy-3", "proxy-3", null)).isEmpty());
  }

  @Test
  void afterRecoveryTheMetricsArePolledAndWhatIsPendingIsSentAgain() {
    StepsHarness h = new StepsHarness(PROXY);
    State s = CoordinatorEventHandler.applyEvent(pool("s1"), new ProxyModelObserved(null, 1, "proxy-1", Map.of(), NOW));
    h.proxy.resume(s);
    assertEquals(List.of("proxy-metrics after PT5S: ProxyMetricsTick"), h.timers());
    assertEquals(1, h.online.forwards.size());
    assertEquals(List.of("proxy-1"), h.sink.calls.stream().map(Fakes.Registration::version).toList());
    h.proxy.handOverPending(pool("s1"));
    assertEquals(1, h.sink.calls.size(), "no pending candidate");
  }
}
