package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobStatusChanged;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.JobSucceeded;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.ScheduleState;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.OutputModel;
import io.otl.core.training.ProxyMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The scheduled trigger's slot arithmetic, the trinity-proxy rules and the job lifecycle's
 * remaining branches, each as the pure function the coordinator calls (the entity tests reach them
 * only through a few timer firings and polls).
 */
class ScheduleAndProxyRulesTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static TrainingPolicy policy(String runner) {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString("training-runner { " + runner + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  /** Daily at 02:00 in {@code zone}. */
  private static TrainingPolicy daily(String zone) {
    return policy("trigger.type = [threshold, scheduled], trigger.cron = \"0 0 2 * * ?\", trigger.zone = " + zone);
  }

  private static Instant at(String iso) {
    return Instant.parse(iso);
  }

  @Test
  void dueCountsEverySlotUpToAndIncludingNow() {
    TrainingPolicy policy = daily("UTC");
    ScheduleState sc = new ScheduleState("0 0 2 * * ?", "UTC", T0, null);
    assertNull(ScheduleSlots.due(sc, policy, at("2026-01-01T01:59:59Z")));

    ScheduleSlots.Due exactly = ScheduleSlots.due(sc, policy, at("2026-01-01T02:00:00Z"));
    assertEquals(at("2026-01-01T02:00:00Z"), exactly.latest());
    assertEquals(1, exactly.count());
    assertEquals("1", exactly.counted());

    ScheduleSlots.Due four = ScheduleSlots.due(sc, policy, at("2026-01-04T03:00:00Z"));
    assertEquals(at("2026-01-04T02:00:00Z"), four.latest());
    assertEquals(4, four.count());

    // Slots up to the last handled one are not due again.
    ScheduleState handled = new ScheduleState("0 0 2 * * ?", "UTC", T0, at("2026-01-03T02:00:00Z"));
    ScheduleSlots.Due one = ScheduleSlots.due(handled, policy, at("2026-01-04T03:00:00Z"));
    assertEquals(1, one.count());
    assertEquals(at("2026-01-04T02:00:00Z"), one.latest());
  }

  @Test
  void slotsAreReadInTheConfiguredZone() {
    // 02:00 in Paris is 01:00 UTC in winter.
    ScheduleState sc = new ScheduleState("0 0 2 * * ?", "Europe/Paris", T0, null);
    ScheduleSlots.Due due = ScheduleSlots.due(sc, daily("Europe/Paris"), at("2026-01-01T01:30:00Z"));
    assertEquals(at("2026-01-01T01:00:00Z"), due.latest());
    assertEquals(at("2026-01-02T01:00:00Z"), ScheduleSlots.nextSlot(daily("Europe/Paris"), due.latest()));
  }

  @Test
  void aLongOutageWalksAtMostTheCapThenOnlyTheLastDay() {
    TrainingPolicy everyMinute = policy("trigger.type = [scheduled], trigger.cron = \"0 * * * * ?\"");
    ScheduleState sc = new ScheduleState("0 * * * * ?", "UTC", T0, null);
    // 8 days of minutes: 10 000 slots (6.9 days) walked one by one, then the cursor jumps to a day
    // before now, and that day's 1 440 slots are walked: 11 440, not the 11 520 of the whole outage.
    Instant now = T0.plus(Duration.ofDays(8));
    ScheduleSlots.Due due = ScheduleSlots.due(sc, everyMinute, now);
    assertEquals(ScheduleSlots.MAX_SLOT_WALK + 1_440, due.count());
    assertEquals(now, due.latest());
    assertEquals("at least " + due.count(), due.counted());

    // 7 days of minutes (10 080) are more than the cap, but the cap is reached within the last
    // day (10 000 minutes after the start is 80 minutes before now): no jump, every slot counted.
    Instant week = T0.plus(Duration.ofDays(7));
    ScheduleSlots.Due walked = ScheduleSlots.due(sc, everyMinute, week);
    assertEquals(10_080, walked.count());
    assertEquals(week, walked.latest());
  }

  @Test
  void theScheduleIsReArmedWhenItsCronOrZoneChanges() {
    TrainingPolicy policy = daily("UTC");
    assertTrue(ScheduleSlots.needsArming(null, policy));
    assertFalse(ScheduleSlots.needsArming(new ScheduleState("0 0 2 * * ?", "UTC", T0, null), policy));
    assertTrue(ScheduleSlots.needsArming(new ScheduleState("0 0 3 * * ?", "UTC", T0, null), policy));
    assertTrue(ScheduleSlots.needsArming(new ScheduleState("0 0 2 * * ?", "Europe/Paris", T0, null), policy));
  }

  @Test
  void theNextRunIsTheFirstSlotStillToBeHandled() {
    TrainingPolicy policy = daily("UTC");
    Instant now = at("2026-01-04T03:00:00Z");
    assertTrue(ScheduleSlots.enabled(policy));
    assertFalse(ScheduleSlots.enabled(policy("trigger.type = threshold")));
    assertNull(ScheduleSlots.nextScheduledRun(State.EMPTY, policy("trigger.type = threshold"), now));

    // Never armed, or armed with another cron: from now.
    assertEquals(at("2026-01-05T02:00:00Z"), ScheduleSlots.nextScheduledRun(State.EMPTY, policy, now));
    State otherCron = CoordinatorEventHandler.applyEvent(State.EMPTY,
        new ScheduleArmed("0 0 5 * * ?", "UTC", at("2026-01-10T00:00:00Z"), T0));
    assertEquals(at("2026-01-05T02:00:00Z"), ScheduleSlots.nextScheduledRun(otherCron, policy, now));

    // Due slots not handled yet: the timer looks again at the next slot after now.
    State armed = CoordinatorEventHandler.applyEvent(State.EMPTY, new ScheduleArmed("0 0 2 * * ?", "UTC", T0, T0));
    assertEquals(at("2026-01-05T02:00:00Z"), ScheduleSlots.nextScheduledRun(armed, policy, now));

    // Armed from a later instant (the last handled slot is ahead of this node's clock): that base counts.
    State ahead = CoordinatorEventHandler.applyEvent(State.EMPTY,
        new ScheduleArmed("0 0 2 * * ?", "UTC", at("2026-01-04T02:00:00Z"), T0));
    assertEquals(at("2026-01-05T02:00:00Z"),
        ScheduleSlots.nextScheduledRun(ahead, policy, at("2026-01-04T01:00:00Z")));
    assertEquals(at("2026-01-04T02:00:00Z"), ScheduleSlots.nextSlot(policy, at("2026-01-04T01:00:00Z")));
  }

  @Test
  void timerDelaysAtTheirBounds() {
    assertEquals(ScheduleSlots.MAX_TIMER_DELAY, ScheduleSlots.timerDelay(T0, T0.plus(ScheduleSlots.MAX_TIMER_DELAY)));
    assertEquals(Duration.ofMillis(1), ScheduleSlots.timerDelay(T0, T0));
    assertEquals(Duration.ofMillis(2), ScheduleSlots.timerDelay(T0, T0.plusMillis(2)));
  }

  private static Event requested(String jobId, Backend backend, List<String> sessions) {
    return new JobRequested(jobId, TriggerType.MANUAL, "api", backend, "sft", "base", Map.of(), sessions, T0);
  }

  @Test
  void aCommitWaitsForTheRewardsOfItsOwnTrajectoriesOnly() {
    State s = CoordinatorEventHandler.replay(List.of(
        new TrajectoryPooled("s1", "v1", 0.5, 0.9, T0, List.of("m1"), T0),
        new TrajectoryPooled("s2", "v1", 0.5, 0.9, T0, List.of("m2"), T0),
        requested("job-1-a", Backend.TRINITY_PROXY, List.of("s1"))));
    Job job = s.job("job-1-a").orElseThrow();
    assertTrue(ProxyRules.commitMustWait(s, job));
    State forwarded = CoordinatorEventHandler.applyEvent(s, new RewardForwarded("s1", T0));
    assertFalse(ProxyRules.commitMustWait(forwarded, job));
  }

  @Test
  void aProxyModelIsNewOnlyAboveTheLastSeenVersionAndIsCreditedToTheLatestCommit() {
    State s = CoordinatorEventHandler.replay(List.of(
        requested("job-1-a", Backend.TRINITY_PROXY, List.of()),
        new JobSucceeded("job-1-a", null, null, T0),
        requested("job-2-a", Backend.RAY_JOBS, List.of()),
        new JobSucceeded("job-2-a", new OutputModel("s3://x", Map.of()), "v1", T0),
        requested("job-3-a", Backend.TRINITY_PROXY, List.of()),
        new JobSucceeded("job-3-a", null, null, T0),
        requested("job-4-a", Backend.TRINITY_PROXY, List.of()),
        new JobFailed("job-4-a", "boom", T0)));
    assertEquals(List.of(), ProxyRules.observed(s, new ProxyMetrics(Map.of(), 0, 0, 0), T0));

    ProxyModelObserved o = only(ProxyRules.observed(s, new ProxyMetrics(Map.of(0, 2, 1, 3), 40, 30, 7), T0));
    assertEquals("job-3-a", o.jobId());
    assertEquals(3, o.modelVersion());
    assertEquals("proxy-3", o.version());
    assertEquals(Map.of("model_version", 3.0, "total_experience_count", 40.0, "ready_experience_count", 30.0,
        "explore_step_num", 7.0), o.metrics());

    State seen = CoordinatorEventHandler.applyEvent(s, o);
    assertEquals(List.of(), ProxyRules.observed(seen, new ProxyMetrics(Map.of(0, 3), 41, 31, 8), T0));
    assertEquals(4, only(ProxyRules.observed(seen, new ProxyMetrics(Map.of(0, 4), 41, 31, 8), T0)).modelVersion());
    assertNull(only(ProxyRules.observed(State.EMPTY, new ProxyMetrics(Map.of(0, 1), 1, 1, 1), T0)).jobId());
  }

  @Test
  void aProxyVersionBelowTheLastOneSeenIsARestartAndItsNextVersionsAreNew() {
    State seen = CoordinatorEventHandler.replay(List.of(new ProxyModelObserved(null, 3, "proxy-3", Map.of(), T0)));
    // back to 0: the restart is recorded (no candidate: the weights the proxy started with)
    assertEquals(List.of(new CoordinatorEvents.ProxyRestarted(1, 0, T0)),
        ProxyRules.observed(seen, new ProxyMetrics(Map.of(0, 0), 0, 0, 0), T0));
    State restarted = CoordinatorEventHandler.applyEvent(seen, new CoordinatorEvents.ProxyRestarted(1, 0, T0));
    assertEquals(0, restarted.proxyModelVersion());
    assertEquals(1, restarted.proxyRestarts());
    assertEquals(List.of(), ProxyRules.observed(restarted, new ProxyMetrics(Map.of(0, 0), 0, 0, 0), T0));
    ProxyModelObserved again = only(ProxyRules.observed(restarted, new ProxyMetrics(Map.of(0, 1), 5, 0, 1), T0));
    assertEquals("proxy-r1-1", again.version());
    assertEquals(1, again.restarts());

    // restarted and already past its start between two polls: both at once
    List<CoordinatorEvents.Event> both = ProxyRules.observed(seen, new ProxyMetrics(Map.of(0, 2), 5, 0, 2), T0);
    assertEquals(new CoordinatorEvents.ProxyRestarted(1, 2, T0), both.get(0));
    assertEquals("proxy-r1-2", ((ProxyModelObserved) both.get(1)).version());
    assertEquals(2, both.size());
  }

  private static ProxyModelObserved only(List<CoordinatorEvents.Event> events) {
    assertEquals(1, events.size(), events.toString());
    return (ProxyModelObserved) events.get(0);
  }

  @Test
  void pollsOfARunningJobAndAnswersWithMessages() {
    State s = CoordinatorEventHandler.replay(List.of(requested("job-1-a", Backend.RAY_JOBS, List.of()),
        new JobSubmitted("job-1-a", "raysubmit_1", T0)));
    Job submitted = s.job("job-1-a").orElseThrow();
    Job running = CoordinatorEventHandler.applyEvent(s,
        new JobStatusChanged("job-1-a", JobStatus.RUNNING, "go", T0)).job("job-1-a").orElseThrow();
    Job requested = CoordinatorEventHandler.replay(List.of(requested("job-1-a", Backend.RAY_JOBS, List.of())))
        .job("job-1-a").orElseThrow();

    assertTrue(JobLifecycle.onBackend(running));
    assertFalse(JobLifecycle.onBackend(requested));

    JobLifecycle.Polled pending = JobLifecycle.polled(submitted,
        new BackendJobStatus(BackendJobStatus.State.PENDING, "", null), 0, T0);
    assertEquals(new JobLifecycle.Polled(null, false, true), pending);
    JobLifecycle.Polled stillRunning = JobLifecycle.polled(running,
        new BackendJobStatus(BackendJobStatus.State.RUNNING, "", null), 0, T0);
    assertEquals(new JobLifecycle.Polled(null, false, true), stillRunning);
    JobLifecycle.Polled started = JobLifecycle.polled(submitted,
        new BackendJobStatus(BackendJobStatus.State.RUNNING, "epoch 1", null), 0, T0);
    assertEquals("epoch 1", ((JobStatusChanged) started.event()).message());

    JobLifecycle.Polled failed = JobLifecycle.polled(running,
        new BackendJobStatus(BackendJobStatus.State.FAILED, "", null), 0, T0);
    assertEquals(new JobLifecycle.Polled(new JobFailed("job-1-a", "failed on the backend", T0), true, false), failed);
    assertEquals("OOM", ((JobFailed) JobLifecycle.polled(running,
        new BackendJobStatus(BackendJobStatus.State.FAILED, "OOM", null), 0, T0).event()).error());

    Job cancelling = CoordinatorEventHandler.applyEvent(s, new JobCancelRequested("job-1-a", "ops", T0))
        .job("job-1-a").orElseThrow();
    JobLifecycle.Polled stopped = JobLifecycle.polled(cancelling,
        new BackendJobStatus(BackendJobStatus.State.STOPPED, "", null), 0, T0);
    assertEquals(new JobLifecycle.Polled(new JobCancelled("job-1-a", "stopped on the backend", T0), true, false),
        stopped);
    assertEquals("stopped on the backend without a cancel request here", ((JobCancelled) JobLifecycle.polled(
        running, new BackendJobStatus(BackendJobStatus.State.STOPPED, "", null), 0, T0).event()).detail());
  }

  @Test
  void aSucceededModelAwaitsItsHandOverOnce() {
    State s = CoordinatorEventHandler.replay(List.of(requested("job-1-a", Backend.RAY_JOBS, List.of()),
        new JobSubmitted("job-1-a", "raysubmit_1", T0)));
    assertFalse(JobLifecycle.awaitsHandOver(s.job("job-1-a").orElseThrow()));
    State done = CoordinatorEventHandler.applyEvent(s,
        new JobSucceeded("job-1-a", new OutputModel("s3://x", Map.of()), "v1", T0));
    assertTrue(JobLifecycle.awaitsHandOver(done.job("job-1-a").orElseThrow()));
    State handed = CoordinatorEventHandler.applyEvent(done, new CandidateHandedOver("job-1-a", "v1", T0));
    assertFalse(JobLifecycle.awaitsHandOver(handed.job("job-1-a").orElseThrow()));
    State committed = CoordinatorEventHandler.applyEvent(s, new JobSucceeded("job-1-a", null, null, T0));
    assertFalse(JobLifecycle.awaitsHandOver(committed.job("job-1-a").orElseThrow()));
  }

  @Test
  void everyJobEventReadsAsOneLogTransition() {
    Instant next = T0.plusSeconds(30);
    List<String> lines = new ArrayList<>();
    for (Event e : List.of(
        new JobRequested("job-1-a", TriggerType.SCHEDULED, "cron", Backend.RAY_JOBS, "sft", "b", Map.of(),
            List.of("s1", "s2"), T0),
        new PreflightFailed("job-1-a", List.of("x"), true, null, T0),
        new JobSubmitting("job-1-a", 2, T0),
        new JobSubmitFailed("job-1-a", 2, "503", next, T0),
        new JobSubmitted("job-1-a", "r1", T0),
        new JobStatusChanged("job-1-a", JobStatus.RUNNING, "", T0),
        new JobSucceeded("job-1-a", new OutputModel("s3://x", Map.of()), "v2", T0),
        new JobSucceeded("job-1-a", null, null, T0),
        new JobFailed("job-1-a", "boom", T0),
        new JobCancelRequested("job-1-a", "ops", T0),
        new JobCancelled("job-1-a", "stopped", T0),
        new CandidateHandedOver("job-1-a", "v2", T0),
        new RewardForwarded("s1", T0))) {
      lines.add(JobLifecycle.transition(e));
    }
    assertEquals(List.of(
        "REQUESTED (scheduled, 2 trajectories)",
        "FAILED (pre-flight)",
        "submitting (attempt 2)",
        "submission attempt 2 failed, retry at " + next,
        "SUBMITTED",
        "RUNNING",
        "SUCCEEDED (candidate v2)",
        "SUCCEEDED",
        "FAILED",
        "cancel requested",
        "CANCELLED",
        "handed over as v2"), lines.subList(0, 12));
    assertNull(lines.get(12), "a pool event is no job transition");
  }
}
