package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorProtocol.ExportFinished;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyHandOverRetry;
import io.otl.core.coordinator.CoordinatorProtocol.Recovered;
import io.otl.core.coordinator.CoordinatorProtocol.RewardForwardFinished;
import io.otl.core.coordinator.CoordinatorProtocol.SetPolicy;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoriesAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorReplies.PolicyReply;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.training.TrainingBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.TestInbox;
import org.junit.jupiter.api.Test;

/**
 * Edges the other coordinator tests leave open (found by PIT): only a pooled trajectory looks at
 * the threshold, a proxy trajectory's reward is forwarded once stored, failed port calls come back
 * with their error, the forward batch is bounded, and recovery re-arms the schedule.
 */
class CoordinatorEdgesTest {
  /** A pool of 2 already at min-samples 2, as a restart or a lowered re-arm point can leave it. */
  static final String MIN2 = "trigger.min-samples = 2";

  static TrajectoryAvailable traj(String id, List<String> msgIds) {
    return new TrajectoryAvailable(id, "v1", 1, 0.9, NOW, false, msgIds, null);
  }

  @Test
  void onlyAPooledTrajectoryStartsTheThreshold() {
    StepsHarness h = new StepsHarness(MIN2);
    State due = CoordinatorPlansTest.pool(2);
    assertEquals(List.of(), Handled.handle(h.coordinator, due, traj("s0", List.of())).events(), "a duplicate");
    assertEquals(List.of(), Handled.handle(h.coordinator, due,
        new TrajectoriesAvailable(List.of(traj("s0", List.of())), null)).events());
    List<Event> pooled = Handled.handle(h.coordinator, CoordinatorPlansTest.pool(1), traj("s9", List.of())).events();
    assertEquals(2, pooled.size());
    assertInstanceOf(JobRequested.class, pooled.get(1), "the second trajectory reaches min-samples");
  }

  @Test
  void aProxyTrajectorysRewardIsForwardedOnceStored() {
    StepsHarness h = new StepsHarness(ProxyLoopStepsTest.PROXY);
    Handled.handle(h.coordinator, State.EMPTY, traj("s1", List.of("m1")));
    assertEquals(List.of(new Fakes.Forward(List.of("m1"), 1.0, "s1", 0)), h.online.forwards);
    h.online.forward.then(Fakes.failWith(Fakes.unavailable()));
    h.proxy.forward("s2", new CoordinatorState.PendingReward(List.of("m2"), 0.5));
    RewardForwardFinished failed = (RewardForwardFinished) h.piped().get(1);
    assertEquals("s2", failed.sessionId());
    assertTrue(failed.error().contains("backend unavailable"), failed.error());
  }

  @Test
  void atMost256RewardsAreForwardedPerRound() {
    StepsHarness h = new StepsHarness(ProxyLoopStepsTest.PROXY);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      ids.add("s" + i);
    }
    h.proxy.forwardPending(ProxyLoopStepsTest.pool(ids.toArray(String[]::new)));
    assertEquals(256, h.online.forwards.size());
  }

  @Test
  void aFailedExportComesBackWithItsError() {
    StepsHarness h = new StepsHarness("");
    h.exporter.script.then(Fakes.failWith(new IllegalStateException("disk full")));
    h.exporter.script.then(() -> CompletableFuture.completedFuture(null));
    CoordinatorState.Job job = ExportAndSubmitStepsTest.state().job("job-1-a").orElseThrow();
    h.steps.export(job);
    ExportFinished failed = (ExportFinished) h.piped().get(0);
    assertTrue(failed.error().contains("disk full"), failed.error());
    h.steps.onExportFinished(ExportAndSubmitStepsTest.state(), failed);
    h.steps.export(job);
    ExportFinished none = (ExportFinished) h.piped().get(0);
    assertTrue(none.error().contains("no manifest"), none.error());
  }

  @Test
  void aResumedJobOnTheBackendIsOnlyStoppedWhenACancelWasRequested() {
    StepsHarness h = new StepsHarness("");
    h.steps.resume(PollCancelHandOverStepsTest.submitted());
    assertEquals(List.of(), h.backend.cancels);
  }

  @Test
  void recoveryReArmsTheScheduleAndLooksAtTheThreshold() {
    StepsHarness h = new StepsHarness(ScheduleTriggerStepsTest.SCHEDULED + ", trigger.type = [threshold, scheduled], "
        + MIN2);
    State s = ScheduleTriggerStepsTest.armed(NOW, 2);
    Handled r = Handled.handle(h.coordinator, s, Recovered.INSTANCE);
    assertInstanceOf(JobRequested.class, r.events().get(0), "a pool that reached min-samples trains at start-up");
    assertTrue(h.timers().contains("schedule after PT1H: ScheduleTick"));
  }

  @Test
  void aPolicyChangeIsInForceOnReplayAndNamesWhoMadeIt() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 50");
    h.coordinator.eventHandler().apply(State.EMPTY, new PolicyChanged(Map.of("trigger.min-samples", 3), "ops", NOW));
    assertEquals(3, h.coordinator.rt.policy.minSamples(), "replaying the change puts it in force");

    TestInbox<PolicyReply> inbox = TestInbox.create();
    Handled.handle(h.coordinator, State.EMPTY, new SetPolicy(Map.of("trigger.type", "scheduled",
        "trigger.cron", ScheduleTriggerStepsTest.HOURLY), "ops", inbox.getRef()));
    assertEquals("ops", ((PolicyView) inbox.receiveMessage()).changedBy());
    assertTrue(h.timers().contains("schedule after PT1H: ScheduleTick"), "a schedule turned on is armed at once");
  }

  @Test
  void aProxyHandOverRetryHandsThePendingCandidateOver() {
    StepsHarness h = new StepsHarness(ProxyLoopStepsTest.PROXY);
    State s = CoordinatorEventHandler.replay(List.of(new ProxyModelObserved(null, 2, "proxy-2", Map.of(), NOW)));
    Handled.handle(h.coordinator, s, ProxyHandOverRetry.INSTANCE);
    assertEquals(List.of("proxy-2"), h.sink.calls.stream().map(Fakes.Registration::version).toList());
  }

  @Test
  void aRolloutAnswerForASlotLetsTheNextSlotAsk() {
    StepsHarness h = new StepsHarness(ScheduleTriggerStepsTest.SCHEDULED,
        agent -> CompletableFuture.completedFuture(java.util.Optional.empty()));
    ScheduleTrigger t = new ScheduleTriggerStepsTest().trigger(h);
    h.rt.rollouts.askForSlot(NOW, false);
    t.onSlotChecked(ScheduleTriggerStepsTest.armed(NOW.minusSeconds(1800), 1),
        new RolloutChecked(TrainingPolicy.TriggerType.SCHEDULED, "schedule", null, null, null, NOW, false));
    assertFalse(h.rt.rollouts.slotAsking());

    io.otl.core.entity.Plan<State, Event> empty = ScheduleTriggerStepsTest.plan(
        ScheduleTriggerStepsTest.armed(NOW.minusSeconds(1800), 0));
    t.handleDueSlot(empty, false);
    assertEquals(List.of(new CoordinatorEvents.ScheduledSlotSkipped(NOW, "the pool is empty", NOW)), empty.events(),
        "nothing to train: ModelVersion is not asked");
  }

  @Test
  void smallValuesKeepWhatTheyAreGiven() {
    assertNotNull(TrainingCoordinator.create("a", StepsHarness.policy(""), TrainingCoordinator.Ports.batch(
        new Fakes.Exporter(), new Fakes.Backend(), new Fakes.Sink()), CoordinatorPlansTest.CLOCK));
    StepsHarness h = new StepsHarness("");
    assertNotNull(h.coordinator.retentionCriteria());
    assertNotNull(h.coordinator.signalHandler());
    List<Event> events = List.of(PoolEventsTest.pooled("s1", 1, 1, NOW));
    assertEquals(CoordinatorEventHandler.replay(events), TrainingCoordinator.replay(events));
    assertEquals(List.of(), new ExportRequest("j", "a", "sft", null).sessionIds());
    CandidateSink.NameTaken taken = new CandidateSink.NameTaken("v1", "registered by hand");
    assertEquals("v1", taken.version());
    assertEquals("version name v1 is taken: registered by hand", taken.getMessage());
    assertEquals(new CoordinatorState.SessionEntry(CoordinatorState.SessionEntry.Kind.USED, 1, 0.5, NOW),
        CoordinatorState.SessionEntry.of(CoordinatorState.SessionEntry.Kind.USED, 1, 0.5, NOW));
    assertEquals(new StepKey(StepKey.Step.POLL, "", 0), StepKey.of(StepKey.Step.POLL));
    assertTrue(PortCalls.isRetryable(Fakes.unavailable()));
    assertFalse(PortCalls.isRetryable(Fakes.rejected()));
    assertTrue(PortCalls.isRetryable(new IllegalStateException("connection reset")));
    assertTrue(CancelRetries.unconfirmed("job-1-a", 5, "503").startsWith("cancelled without the backend's confirmation: "
        + "its submission was never acknowledged and 5 attempts to stop it failed (last error: 503)"));
    assertEquals(TrainingBackendException.Kind.UNAVAILABLE, PortCalls.kindOf(Fakes.unavailable()));
  }

  @Test
  void candidateNamesAtTheirEdges() {
    assertEquals("124", CandidateNames.next("123"), "a name of digits only counts on");
    assertEquals("v123456790", CandidateNames.next("v123456789"), "nine digits still count");
    assertEquals("v1234567890-2", CandidateNames.next("v1234567890"), "ten digits are no counter");
    List<String> tried = new ArrayList<>();
    Throwable error = CandidateNames.registerUnderFreeName("v1", name -> {
      tried.add(name);
      return CompletableFuture.failedFuture(new CandidateSink.NameTaken(name, "taken"));
    }).toCompletableFuture().handle((ok, e) -> e).join();
    assertInstanceOf(CandidateSink.NameTaken.class, PortCalls.unwrap(error));
    assertEquals(CandidateNames.MAX_NAMES, tried.size());
    assertEquals("v100", tried.get(tried.size() - 1));
  }
}
