package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.JobSummary;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.entity.Plan;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link TrainingCoordinator}'s own planning (package-info "Threshold", "Manual", "Pre-flight
 * checklist", "Jobs", "Tags") on the synchronous test context: what a started job records, when
 * the threshold starts one, which run-time policy is in force, and the training view.
 */
class CoordinatorPlansTest {
  static final Clock CLOCK = Clock.systemUTC();

  /** {@code n} pooled trajectories s0, s1, … of quality 1. */
  static State pool(int n) {
    List<Event> events = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(PoolEventsTest.pooled("s" + i, 1.0, 1.0, NOW));
    }
    return CoordinatorEventHandler.replay(events);
  }

  static Plan<State, Event> plan(State s) {
    return new Plan<>(s, CoordinatorEventHandler::applyEvent);
  }

  @Test
  void aBackendWithoutItsPortsIsRefusedAtCreation() {
    Fakes.Sink sink = new Fakes.Sink();
    TrainingPolicy ray = StepsHarness.policy("");
    assertEquals("backend ray-jobs needs a DatasetExporter and a TrainingBackend", assertThrows(
        IllegalArgumentException.class, () -> TrainingCoordinator.create("a", ray,
            TrainingCoordinator.Ports.batch(null, new Fakes.Backend(), sink), CLOCK)).getMessage());
    assertThrows(IllegalArgumentException.class, () -> TrainingCoordinator.create("a", ray,
        TrainingCoordinator.Ports.batch(new Fakes.Exporter(), null, sink), CLOCK));
    TrainingPolicy proxy = StepsHarness.policy("backend = trinity-proxy");
    assertEquals("backend trinity-proxy needs an OnlineTrainingBackend", assertThrows(IllegalArgumentException.class,
        () -> TrainingCoordinator.create("a", proxy, TrainingCoordinator.Ports.batch(new Fakes.Exporter(),
            new Fakes.Backend(), sink), CLOCK)).getMessage());
    TrainingCoordinator.create("a", proxy, TrainingCoordinator.Ports.online(new Fakes.Online(), sink), CLOCK);
    TrainingCoordinator.create("a", ray, TrainingCoordinator.Ports.batch(new Fakes.Exporter(), new Fakes.Backend(), sink),
        CLOCK);
  }

  @Test
  void portsWithoutAProbeAskNoOne() {
    Fakes.Sink sink = new Fakes.Sink();
    TrainingCoordinator.Ports online = TrainingCoordinator.Ports.online(new Fakes.Online(), sink);
    assertSame(RolloutProbe.NONE, online.rolloutProbe());
    assertNull(online.exporter());
    RolloutProbe probe = agent -> CompletableFuture.completedFuture(Optional.empty());
    TrainingCoordinator.Ports asking = online.withRolloutProbe(probe);
    assertSame(probe, asking.rolloutProbe());
    assertSame(online.onlineBackend(), asking.onlineBackend());
    assertSame(sink, asking.candidateSink());
    assertThrows(NullPointerException.class, () -> TrainingCoordinator.Ports.online(new Fakes.Online(), null));
  }

  @Test
  void theEntityIsKeyedByAgentAndTagsJobEventsOnly() {
    StepsHarness h = new StepsHarness("");
    assertEquals("TrainingCoordinator|a", TrainingCoordinator.persistenceId("a").id());
    assertSame(State.EMPTY, h.coordinator.emptyState());
    assertEquals(Set.of("coordinator-jobs"), h.coordinator.tagsFor(JobEventsTest.requested("job-1-a", Backend.RAY_JOBS)));
    assertEquals(Set.of(), h.coordinator.tagsFor(PoolEventsTest.pooled("s1", 1, 1, NOW)));
    assertEquals(Optional.of("a"), TrainingCoordinator.agentIdOf(TrainingCoordinator.jobId(3, "a")));
  }

  @Test
  void aManualJobTakesThePoolWithTheConfigurationItRunsWith() {
    StepsHarness h = new StepsHarness("algorithm = dpo, base-model = m, hyperparams.epochs = 2");
    Plan<State, Event> p = persisted(startManual(h, pool(2), null));
    JobRequested r = (JobRequested) p.events().get(0);
    assertEquals(new JobRequested("job-1-a", TriggerType.MANUAL, "alice", Backend.RAY_JOBS, "dpo", "m",
        h.coordinator.rt.policy.hyperparams(), List.of("s0", "s1"), NOW), r);
    assertEquals(2, r.hyperparams().get("epochs"));
    assertEquals(1, p.events().size(), "the checklist passed");
    assertEquals(List.of(new ExportRequest("job-1-a", "a", "dpo", List.of("s0", "s1"))), h.exporter.requests);
  }

  static Plan<State, Event> startManual(StepsHarness h, State s, String rolloutReason) {
    Plan<State, Event> p = plan(s);
    assertEquals("job-" + s.nextJobSeq() + "-a", h.coordinator.startJob(p, TriggerType.MANUAL, "alice", rolloutReason));
    return p;
  }

  @Test
  void aFailedChecklistRecordsTheJobAsFailedAndReturnsThePool() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 30");
    Plan<State, Event> p = persisted(startManual(h, pool(2), "a rollout is in progress: v3 is CANARY"));
    assertEquals(new PreflightFailed("job-1-a", List.of("a rollout is in progress: v3 is CANARY"), true, 5, NOW),
        p.events().get(1)); // re-arm: 2 + a tenth of 30
    assertEquals(2, p.state().poolSize());
    assertEquals(List.of(), h.exporter.requests);

    Plan<State, Event> empty = startManual(h, State.EMPTY, null);
    assertEquals(List.of("not enough samples: the pool has 0 eligible trajectories, a manual job needs at least 1"),
        ((PreflightFailed) empty.events().get(1)).reasons());
  }

  @Test
  void aProxyJobCommitsAtOnce() {
    StepsHarness h = new StepsHarness("backend = trinity-proxy");
    Plan<State, Event> p = persisted(startManual(h, pool(1), null));
    assertEquals(new JobSubmitting("job-1-a", 1, NOW), p.events().get(1));
    assertEquals(List.of(1), h.online.commits);
    assertEquals(List.of(), h.exporter.requests);
  }

  @Test
  void theThresholdStartsAJobAtMinSamplesOrAsksAboutRolloutsFirst() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 3");
    Plan<State, Event> below = plan(pool(2));
    h.coordinator.maybeThreshold(below);
    assertTrue(below.isEmpty());
    Plan<State, Event> due = plan(pool(3));
    h.coordinator.maybeThreshold(due);
    JobRequested r = (JobRequested) due.events().get(0);
    assertEquals(TriggerType.THRESHOLD, r.trigger());
    assertEquals("threshold", r.requestedBy());

    StepsHarness asking = new StepsHarness("trigger.min-samples = 3",
        agent -> CompletableFuture.completedFuture(Optional.empty()));
    Plan<State, Event> waits = plan(pool(3));
    asking.coordinator.maybeThreshold(waits);
    assertTrue(waits.isEmpty(), "ModelVersion is asked first");
    persisted(waits);
    assertEquals(List.of(new RolloutChecked(TriggerType.THRESHOLD, "threshold", null, null, null)), asking.piped());
  }

  @Test
  void theRunTimePolicyInForceFollowsTheState() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 50");
    PolicyChanged change = new PolicyChanged(Map.of("trigger.min-samples", 5), "ops", NOW);
    State changed = CoordinatorEventHandler.applyEvent(State.EMPTY, change);
    h.coordinator.refreshPolicy(changed);
    assertEquals(5, h.coordinator.rt.policy.minSamples());
    PolicyView view = h.coordinator.policyView(changed);
    assertEquals(Map.of("trigger.min-samples", 5), view.overrides());
    assertEquals("ops", view.changedBy());
    assertEquals(NOW, view.changedAt());
    assertEquals(5, view.policy().get("trigger.min-samples"));

    h.coordinator.refreshPolicy(State.EMPTY);
    assertEquals(50, h.coordinator.rt.policy.minSamples(), "no change recorded: the file's policy");
    PolicyView none = h.coordinator.policyView(State.EMPTY);
    assertEquals(Map.of(), none.overrides());
    assertNull(none.changedBy());
    assertNull(none.changedAt());

    State refused = CoordinatorEventHandler.applyEvent(State.EMPTY,
        new PolicyChanged(Map.of("algorithm", "rlhf"), "ops", NOW));
    h.coordinator.refreshPolicy(refused);
    assertEquals("sft", h.coordinator.rt.policy.algorithm(), "a change the file no longer allows: the file's policy");
  }

  @Test
  void theTrainingViewShowsThePoolTheTriggersAndTheActiveJob() {
    StepsHarness h = new StepsHarness("trigger { type = [threshold, scheduled], min-samples = 7 }");
    State s = CoordinatorEventHandler.applyEvent(pool(2), JobEventsTest.requested("job-1-a", Backend.RAY_JOBS, "s0"));
    CoordinatorView v = h.coordinator.statusView(s);
    assertEquals(new CoordinatorView("a", 1, 7, List.of("threshold", "scheduled"), NOW.plusSeconds(14 * 3600),
        new JobSummary("job-1-a", JobStatus.REQUESTED), null, 1.0, "ray-jobs", "enabled"), v); // next 02:00 slot
    CoordinatorView idle = new StepsHarness("").coordinator.statusView(State.EMPTY);
    assertNull(idle.activeJob());
    assertNull(idle.meanQuality());
    assertNull(idle.nextScheduledRun());
  }
}
