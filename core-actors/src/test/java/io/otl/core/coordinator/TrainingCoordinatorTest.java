package io.otl.core.coordinator;

import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorReplies.CancelAccepted;
import io.otl.core.coordinator.CoordinatorProtocol.CancelJob;
import io.otl.core.coordinator.CoordinatorReplies.CancelReply;
import io.otl.core.coordinator.CoordinatorEvents.CandidateHandedOver;
import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.CoordinatorView;
import io.otl.core.coordinator.CoordinatorReplies.Disposition;
import io.otl.core.coordinator.CoordinatorReplies.ErrorCode;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorProtocol.GetJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetJobLineage;
import io.otl.core.coordinator.CoordinatorProtocol.GetStatus;
import io.otl.core.coordinator.CoordinatorReplies.JobList;
import io.otl.core.coordinator.CoordinatorReplies.JobLineage;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitFailed;
import io.otl.core.coordinator.CoordinatorReplies.JobView;
import io.otl.core.coordinator.CoordinatorReplies.LineageReply;
import io.otl.core.coordinator.CoordinatorProtocol.ListJobs;
import io.otl.core.coordinator.CoordinatorProtocol.PollTick;
import io.otl.core.coordinator.CoordinatorProtocol.ProxyMetricsTick;
import io.otl.core.coordinator.CoordinatorReplies.Refused;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorProtocol.ScheduleTick;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotSkipped;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.Trigger;
import io.otl.core.coordinator.CoordinatorReplies.TriggerAccepted;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.OutputModel;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingJobSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TrainingCoordinatorTest {

  /**
   * The testkit's journal and snapshot store with serialization on in both, and the JSON binding:
   * every command, event, state and snapshot goes through Jackson, and restart() recovers from
   * serialized data.
   */

  private static final Duration AWAIT = Duration.ofSeconds(10);

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("TrainingCoordinatorTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private final ManualClock clock = new ManualClock(Instant.parse("2025-03-01T01:00:00Z"));
  private final Fakes.Exporter exporter = new Fakes.Exporter();
  private final Fakes.Backend backend = new Fakes.Backend();
  private final Fakes.Sink sink = new Fakes.Sink();
  private final Fakes.Online online = new Fakes.Online();
  private String agentId;
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  static TrainingPolicy policy(String overrides) {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "training-runner { poll-interval = 1h\n submit-retry { min-backoff = 100ms, max-backoff = 150ms }\n"
                + overrides + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private void startEntity(String overrides) {
    agentId = "agent-" + UUID.randomUUID().toString().substring(0, 8) + "-x";
    TrainingPolicy p = policy(overrides);
    TrainingCoordinator.Ports ports = p.backend() == TrainingPolicy.Backend.TRINITY_PROXY
        ? TrainingCoordinator.Ports.online(online, sink)
        : TrainingCoordinator.Ports.batch(exporter, backend, sink);
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        TrainingCoordinator.create(agentId, p, ports, clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    status(); // recovery done; the Recovered message is ahead of whatever the test sends next
  }

  private State restart() {
    State s = kit.restart().state();
    status();
    return s;
  }

  // ---- helpers -------------------------------------------------------------------------------

  private <R> CommandResultWithReply<Command, Event, State, R> run(Function<ActorRef<R>, Command> f) {
    return kit.runCommand(f);
  }

  private TrajectoryAck offer(String sessionId, double reward, double quality, boolean revision, Instant at,
      List<String> msgIds) {
    return this.<TrajectoryAck>run(r -> new TrajectoryAvailable(sessionId, "v0", reward, quality, at, revision,
        msgIds, r)).reply();
  }

  private TrajectoryAck offer(String sessionId, double quality) {
    return offer(sessionId, 0.5, quality, false, Instant.parse("2025-03-01T00:00:00Z"), List.of());
  }

  private CoordinatorView status() {
    return this.<CoordinatorView>run(GetStatus::new).reply();
  }

  private JobView job(String jobId) {
    JobReply r = this.<JobReply>run(rep -> new GetJob(jobId, rep)).reply();
    return assertInstanceOf(JobView.class, r);
  }

  private List<JobView> jobs() {
    return this.<JobList>run(rep -> new ListJobs(null, rep)).reply().jobs();
  }

  private TriggerReply trigger() {
    return this.<TriggerReply>run(r -> new Trigger("alice", r)).reply();
  }

  private String triggerOk() {
    return assertInstanceOf(TriggerAccepted.class, trigger()).jobId();
  }

  private JobView awaitJob(String jobId, Function<JobView, Boolean> condition) {
    TestProbe<Object> probe = testKit.createTestProbe();
    return probe.awaitAssert(AWAIT, () -> {
      JobView v = job(jobId);
      assertTrue(condition.apply(v), () -> "job not as expected yet: " + v);
      return v;
    });
  }

  private JobView awaitStatus(String jobId, JobStatus status) {
    return awaitJob(jobId, v -> v.status() == status);
  }

  private void await(Runnable assertion) {
    testKit.createTestProbe().awaitAssert(AWAIT, () -> {
      assertion.run();
      return null;
    });
  }

  private List<Object> journal() {
    return kit.persistenceTestKit().persistedInStorage(TrainingCoordinator.persistenceId(agentId).id());
  }

  private <E> List<E> journal(Class<E> type) {
    return journal().stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
  }

  private static BackendJobStatus succeeded() {
    return new BackendJobStatus(BackendJobStatus.State.SUCCEEDED, "done",
        new OutputModel("file:///ckpt/global_step_10/actor/huggingface", Map.of("task-success-rate", 0.9)));
  }

  private String jobIdOf(int seq) {
    return TrainingCoordinator.jobId(seq, agentId);
  }

  // ---- pool and threshold --------------------------------------------------------------------

  @Test
  void thresholdFiresExactlyOnceAtMinSamplesCountingEachSessionOnce() {
    startEntity("trigger { type = threshold, min-samples = 3 }");
    Instant t0 = Instant.parse("2025-03-01T00:00:00Z");
    assertEquals(Disposition.POOLED, offer("s1", 0.5, 0.9, false, t0, List.of()).disposition());
    assertEquals(Disposition.DUPLICATE, offer("s1", 0.5, 0.9, false, t0, List.of()).disposition());
    // A later revision updates the reward without counting again; an older one is a duplicate.
    assertEquals(Disposition.REWARD_UPDATED, offer("s1", 1.0, 0.9, true, t0.plusSeconds(60), List.of()).disposition());
    assertEquals(Disposition.DUPLICATE, offer("s1", 0.2, 0.9, true, t0.plusSeconds(30), List.of()).disposition());
    // Ineligible trajectories are remembered but never counted.
    assertEquals(Disposition.FILTERED, offer("low", 0.1).disposition());
    assertEquals(Disposition.DUPLICATE, offer("low", 0.1).disposition());
    assertEquals(Disposition.POOLED, offer("s2", 0.8).disposition());
    assertEquals(2, status().poolSize());
    assertTrue(jobs().isEmpty());
    assertEquals(1.0, kit.getState().sessions().get("s1").reward());

    CommandResultWithReply<Command, Event, State, TrajectoryAck> third = this.<TrajectoryAck>run(r ->
        new TrajectoryAvailable("s3", "v0", 0.7, 0.7, t0.plusSeconds(5), false, List.of(), r));
    assertEquals(Disposition.POOLED, third.reply().disposition());
    String jobId = jobIdOf(1);
    assertTrue(third.events().stream().anyMatch(e -> e instanceof JobRequested r && r.jobId().equals(jobId)));
    assertEquals(0, status().poolSize());
    awaitStatus(jobId, JobStatus.SUBMITTED);
    assertEquals(List.of("s2", "s3", "s1"), exporter.requests.get(0).sessionIds(),
        "oldest fact first (s1's revision moved it later)");

    // Duplicates of used sessions never come back; new ones fill a new pool without firing while
    // the job is active.
    assertEquals(Disposition.DUPLICATE, offer("s1", 0.9).disposition());
    assertEquals(Disposition.DUPLICATE, offer("s3", 0.9).disposition());
    offer("s4", 0.9);
    offer("s5", 0.9);
    offer("s6", 0.9);
    assertEquals(3, status().poolSize());
    assertEquals(1, jobs().size());
    assertEquals(1, exporter.requests.size());
    assertEquals(jobId, status().activeJob().jobId());

    // When the job ends, the pool (already at min-samples) starts the next job.
    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.FAILED, "OOM", null));
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobIdOf(2), JobStatus.SUBMITTED);
    assertEquals(List.of("s4", "s5", "s6"), exporter.requests.get(1).sessionIds());
    assertEquals(JobStatus.FAILED, job(jobId).status());
    assertEquals("OOM", job(jobId).error());
  }

  @Test
  void revisionRaisingQualityPoolsAFilteredSessionOnce() {
    startEntity("trigger { type = manual }");
    Instant t0 = Instant.parse("2025-03-01T00:00:00Z");
    assertEquals(Disposition.FILTERED, offer("s1", 0.0, 0.3, false, t0, List.of()).disposition());
    assertEquals(Disposition.POOLED, offer("s1", 1.0, 0.8, true, t0.plusSeconds(10), List.of()).disposition());
    assertEquals(Disposition.DUPLICATE, offer("s1", 1.0, 0.8, true, t0.plusSeconds(10), List.of()).disposition());
    assertEquals(1, status().poolSize());
  }

  @Test
  void invalidTrajectoriesAreRefusedAndPersistNothing() {
    startEntity("trigger { type = manual }");
    var result = this.<TrajectoryAck>run(r -> new TrajectoryAvailable("bad id!", "v0", 0, 0.9, null, false, null, r));
    assertEquals(Disposition.INVALID, result.reply().disposition());
    assertTrue(result.events().isEmpty());
    assertEquals(Disposition.INVALID, offer("s1", Double.NaN, 0.9, false, null, List.of()).disposition());
    assertEquals(Disposition.INVALID, offer("s1", 0, 1.5, false, null, List.of()).disposition());
  }

  @Test
  void poolEventsAreUntaggedAndJobEventsTagged() {
    Instant at = Instant.EPOCH;
    assertEquals(java.util.Set.of(), TrainingCoordinator.tagsOf(
        new TrainingCoordinator.TrajectoryPooled("s", "v", 0, 1, at, List.of(), at)));
    assertEquals(java.util.Set.of(), TrainingCoordinator.tagsOf(new TrainingCoordinator.RewardForwarded("s", at)));
    assertEquals(java.util.Set.of(TrainingCoordinator.JOBS_TAG), TrainingCoordinator.tagsOf(
        new TrainingCoordinator.JobFailed("job-1-a", "x", at)));
  }

  // ---- scheduled trigger ---------------------------------------------------------------------

  @Test
  void cronFiresAtTheSlotAndNotTwiceAcrossARestartInTheSameSecond() {
    clock.set(Instant.parse("2025-03-01T01:59:00Z"));
    startEntity("trigger { type = scheduled, cron = \"0 0 2 * * ?\" }");
    assertEquals(Instant.parse("2025-03-01T02:00:00Z"), status().nextScheduledRun());
    offer("s1", 0.9);

    kit.runCommand(ScheduleTick.INSTANCE); // early tick: nothing due
    assertTrue(jobs().isEmpty());

    clock.set(Instant.parse("2025-03-01T02:00:00.200Z"));
    kit.runCommand(ScheduleTick.INSTANCE);
    String jobId = jobIdOf(1);
    assertEquals("scheduled", job(jobId).trigger());
    List<ScheduledSlotFired> fired = journal(ScheduledSlotFired.class);
    assertEquals(1, fired.size());
    assertEquals(Instant.parse("2025-03-01T02:00:00Z"), fired.get(0).slot());
    assertFalse(fired.get(0).missed());
    awaitStatus(jobId, JobStatus.SUBMITTED);
    backend.statuses.put(jobId, succeeded());
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobId, JobStatus.SUCCEEDED);
    offer("s2", 0.9);

    clock.set(Instant.parse("2025-03-01T02:00:00.800Z"));
    restart();
    kit.runCommand(ScheduleTick.INSTANCE);
    assertEquals(1, journal(ScheduledSlotFired.class).size());
    assertEquals(1, jobs().size());
    assertEquals(Instant.parse("2025-03-02T02:00:00Z"), status().nextScheduledRun());
  }

  @Test
  void scheduledSlotWithAnEmptyPoolIsSkippedWithAReason() {
    clock.set(Instant.parse("2025-03-01T01:59:00Z"));
    startEntity("trigger { type = [scheduled], cron = \"0 0 2 * * ?\" }");
    clock.set(Instant.parse("2025-03-01T02:00:00Z"));
    kit.runCommand(ScheduleTick.INSTANCE);
    List<ScheduledSlotSkipped> skipped = journal(ScheduledSlotSkipped.class);
    assertEquals(1, skipped.size());
    assertEquals("the pool is empty", skipped.get(0).reason());
    assertTrue(jobs().isEmpty());
  }

  @Test
  void scheduledTimerFiresByItselfFromTheInjectedClock() {
    clock.set(Instant.parse("2025-03-01T01:59:59.700Z"));
    startEntity("trigger { type = scheduled, cron = \"0 0 2 * * ?\" }");
    offer("s1", 0.9);
    restart(); // re-arms the timer: 300 ms from the injected clock
    clock.set(Instant.parse("2025-03-01T02:00:00.100Z"));
    await(() -> assertEquals(1, journal(ScheduledSlotFired.class).size()));
    awaitStatus(jobIdOf(1), JobStatus.SUBMITTED);
  }

  @Test
  void missedSlotsFireOnceOnStartWhenConfiguredToFire() {
    startEntity("trigger { type = scheduled, cron = \"0 0 2 * * ?\", missed-slots = fire }");
    offer("s1", 0.9);
    offer("s2", 0.9);
    clock.set(Instant.parse("2025-03-04T05:00:00Z")); // three slots passed "while down"
    restart();
    List<ScheduledSlotFired> fired = journal(ScheduledSlotFired.class);
    assertEquals(1, fired.size());
    assertEquals(Instant.parse("2025-03-04T02:00:00Z"), fired.get(0).slot());
    assertTrue(fired.get(0).missed());
    assertEquals(1, jobs().size());
    awaitStatus(jobIdOf(1), JobStatus.SUBMITTED);
    restart();
    assertEquals(1, journal(ScheduledSlotFired.class).size());
    assertEquals(Instant.parse("2025-03-05T02:00:00Z"), status().nextScheduledRun());
  }

  @Test
  void missedSlotsAreRecordedAsSkippedWhenConfiguredToSkip() {
    startEntity("trigger { type = scheduled, cron = \"0 0 2 * * ?\", missed-slots = skip }");
    offer("s1", 0.9);
    clock.set(Instant.parse("2025-03-04T05:00:00Z"));
    restart();
    List<ScheduledSlotSkipped> skipped = journal(ScheduledSlotSkipped.class);
    assertEquals(1, skipped.size());
    assertEquals(Instant.parse("2025-03-04T02:00:00Z"), skipped.get(0).slot());
    assertTrue(skipped.get(0).reason().contains("missed"), skipped.get(0).reason());
    assertTrue(jobs().isEmpty());
    assertEquals(1, status().poolSize());

    clock.set(Instant.parse("2025-03-05T02:00:00Z"));
    kit.runCommand(ScheduleTick.INSTANCE);
    assertEquals(1, journal(ScheduledSlotFired.class).size());
    awaitStatus(jobIdOf(1), JobStatus.SUBMITTED);
  }

  @Test
  void scheduleInAConfiguredZone() {
    clock.set(Instant.parse("2025-03-01T00:00:00Z"));
    startEntity("trigger { type = scheduled, cron = \"0 0 2 * * ?\", zone = \"Asia/Shanghai\" }");
    assertEquals(Instant.parse("2025-03-01T18:00:00Z"), status().nextScheduledRun());
  }

  // ---- manual trigger and pre-flight ---------------------------------------------------------

  @Test
  void manualTriggerStartsAJobAndRefusesASecondWhileActive() {
    startEntity("trigger { type = threshold, min-samples = 100 }");
    offer("s1", 0.9);
    offer("s2", 0.8);
    TriggerAccepted accepted = assertInstanceOf(TriggerAccepted.class, trigger());
    assertEquals(jobIdOf(1), accepted.jobId());
    assertEquals(JobStatus.REQUESTED, accepted.status());
    assertTrue(accepted.preflightFailures().isEmpty());
    Refused refused = assertInstanceOf(Refused.class, trigger());
    assertEquals(ErrorCode.CONFLICT, refused.code());
    assertTrue(refused.message().contains(accepted.jobId()), refused.message());

    JobView v = awaitStatus(accepted.jobId(), JobStatus.SUBMITTED);
    assertEquals("manual", v.trigger());
    assertEquals("sft", v.algorithm());
    assertEquals("qwen2.5-7b-instruct", v.baseModel());
    assertEquals(16, v.hyperparams().get("batch-size"));
    assertEquals(2, v.dataset().count());
    assertEquals("ray-jobs", v.backend().type());
    assertEquals("raysubmit_" + accepted.jobId(), v.backend().externalId());
    TrainingJobSpec spec = backend.submissions.get(0);
    assertEquals(accepted.jobId(), spec.jobId());
    assertEquals(v.dataset().path(), spec.datasetPath());
    assertEquals(List.of(JobStatus.REQUESTED, JobStatus.SUBMITTED),
        v.history().stream().map(h -> h.status()).distinct().toList());

    LineageReply lineage = this.<LineageReply>run(r -> new GetJobLineage(accepted.jobId(), r)).reply();
    assertEquals(List.of("s1", "s2"), assertInstanceOf(JobLineage.class, lineage).sessionIds());
    assertEquals(List.of("s1", "s2"), ((JobLineage) lineage).dataset().sessionIds());
    assertEquals(ErrorCode.NOT_FOUND, assertInstanceOf(Refused.class,
        this.<JobReply>run(r -> new GetJob("job-99-nope", r)).reply()).code());
  }

  @Test
  void preflightFailureOnLowMeanQualityIsAFailedJobAndKeepsThePool() {
    startEntity("trigger { type = manual }, min-quality = 0.6");
    Instant t0 = Instant.parse("2025-03-01T00:00:00Z");
    offer("s1", 0.5, 0.9, false, t0, List.of());
    offer("s2", 0.5, 0.6, false, t0, List.of());
    offer("s1", 0.5, 0.1, true, t0.plusSeconds(1), List.of()); // a revision lowers the quality
    TriggerAccepted a = assertInstanceOf(TriggerAccepted.class, trigger());
    assertEquals(JobStatus.FAILED, a.status());
    assertTrue(a.preflightFailures().get(0).contains("mean quality 0.350"), a.preflightFailures().toString());
    JobView v = job(a.jobId());
    assertEquals(JobStatus.FAILED, v.status());
    assertTrue(v.error().contains("mean quality"), v.error());
    assertTrue(v.history().get(v.history().size() - 1).detail().contains("mean quality"));
    assertEquals(2, status().poolSize());
    assertNull(status().activeJob());
    assertTrue(exporter.requests.isEmpty());
    restart();
    assertEquals(2, status().poolSize());
    assertEquals(JobStatus.FAILED, job(a.jobId()).status());
  }

  @Test
  void preflightFailsWithoutABaseModelOrSamples() {
    startEntity("trigger { type = manual }, base-model = \"\"");
    TriggerAccepted empty = assertInstanceOf(TriggerAccepted.class, trigger());
    assertEquals(JobStatus.FAILED, empty.status());
    assertEquals(2, empty.preflightFailures().size());
    assertTrue(empty.preflightFailures().get(0).startsWith("not enough samples"));
    assertTrue(empty.preflightFailures().get(1).contains("base model is not set"));
    offer("s1", 0.9);
    TriggerAccepted noModel = assertInstanceOf(TriggerAccepted.class, trigger());
    assertEquals(jobIdOf(2), noModel.jobId());
    assertEquals(List.of("base model is not set (agentscope.training.training-runner.base-model)"),
        noModel.preflightFailures());
    assertEquals(1, status().poolSize());
  }

  @Test
  void thresholdWaitsAfterAFailedPreflightInsteadOfFailingForEveryTrajectory() {
    startEntity("trigger { type = threshold, min-samples = 10 }, base-model = \"\"");
    for (int i = 0; i < 10; i++) {
      offer("s" + i, 0.9);
    }
    assertEquals(1, jobs().size());
    assertEquals(JobStatus.FAILED, jobs().get(0).status());
    offer("s10", 0.9); // rearms at 10 + 10 % of 10 = 11
    assertEquals(2, jobs().size());
    assertEquals(11, status().poolSize());
  }

  @Test
  void piiFoundByTheFinalScanFailsTheJob() {
    startEntity("trigger { type = manual }");
    exporter.piiFindings = List.of("phone", "email");
    offer("s1", 0.9);
    String jobId = triggerOk();
    JobView v = awaitStatus(jobId, JobStatus.FAILED);
    assertTrue(v.error().contains("phone, email"), v.error());
    assertNotNull(v.dataset());
    assertTrue(backend.submissions.isEmpty());
    assertEquals(0, status().poolSize(), "the trajectories stay with the failed job (they would fail again)");
  }

  @Test
  void anEmptyExportFailsThePreflightWithTheExportersCountsByReason() {
    startEntity("trigger { type = manual }");
    exporter.script.then(() -> CompletableFuture.completedFuture(new DatasetManifest("/datasets/none.jsonl", 0, "",
        List.of(), List.of(), "sft", 1204, Map.of("below-sft-min-reward", 880, "below-min-quality", 324))));
    offer("s1", 0.9);
    String jobId = triggerOk();
    JobView v = awaitStatus(jobId, JobStatus.FAILED);
    assertTrue(v.error().contains("1,204 seen: 880 below-sft-min-reward, 324 below-min-quality"), v.error());
    assertTrue(v.history().stream().anyMatch(h -> h.detail().contains("dataset exported: 0 lines")
        && h.detail().contains("(1,204 seen: 880 below-sft-min-reward")), v.history().toString());
    assertTrue(backend.submissions.isEmpty());
  }

  @Test
  void rlWithoutANamedRewardFunctionFailsThePreflight() {
    startEntity("trigger { type = manual }, algorithm = grpo");
    offer("s1", 0.9);
    TriggerAccepted a = assertInstanceOf(TriggerAccepted.class, trigger());
    assertEquals(JobStatus.FAILED, a.status());
    assertTrue(a.preflightFailures().get(0).contains("hyperparams.reward-fn-type"), a.preflightFailures().toString());
    assertTrue(exporter.requests.isEmpty());
    startEntity("trigger { type = manual }, algorithm = grpo, hyperparams.reward-fn-type = my_judge");
    offer("s2", 0.9);
    String jobId = triggerOk();
    assertFalse(job(jobId).status() == JobStatus.FAILED, job(jobId).toString());
  }

  // ---- submission ----------------------------------------------------------------------------

  @Test
  void backendDownKeepsTheJobRequestedWithTheLastErrorAndRetriesWithBackoff() {
    startEntity("trigger { type = manual }");
    backend.submit.then(Fakes.failWith(Fakes.unavailable()));
    backend.submit.then(Fakes.failWith(Fakes.unavailable()));
    CompletableFuture<BackendSubmission> third = new CompletableFuture<>();
    backend.submit.then(Fakes.held(third));
    offer("s1", 0.9);
    String jobId = triggerOk();

    JobView waiting = awaitJob(jobId, v -> backend.submissions.size() == 3);
    assertEquals(JobStatus.REQUESTED, waiting.status());
    assertEquals("backend unavailable", waiting.error());
    List<JobSubmitFailed> failed = journal(JobSubmitFailed.class);
    assertEquals(2, failed.size());
    assertEquals(Duration.ofMillis(100), Duration.between(failed.get(0).at(), failed.get(0).nextAttemptAt()));
    assertEquals(Duration.ofMillis(150), Duration.between(failed.get(1).at(), failed.get(1).nextAttemptAt()),
        "doubled, capped at max-backoff");

    third.complete(new BackendSubmission("raysubmit_" + jobId));
    JobView v = awaitStatus(jobId, JobStatus.SUBMITTED);
    assertNull(v.error());
    assertEquals(1, backend.submissions.stream().map(TrainingJobSpec::jobId).distinct().count());
  }

  @Test
  void rejectedSubmissionFailsTheJob() {
    startEntity("trigger { type = manual }");
    backend.submit.then(Fakes.failWith(Fakes.rejected()));
    offer("s1", 0.9);
    String jobId = triggerOk();
    JobView v = awaitStatus(jobId, JobStatus.FAILED);
    assertTrue(v.error().contains("bad request"), v.error());
  }

  @Test
  void crashBetweenSubmittingAndSubmittedResendsTheSameSubmission() {
    startEntity("trigger { type = manual }");
    backend.submit.then(Fakes.hang()); // the node dies while the request is in flight
    offer("s1", 0.9);
    String jobId = triggerOk();
    awaitJob(jobId, v -> backend.submissions.size() == 1);
    assertEquals(JobStatus.REQUESTED, job(jobId).status());

    restart();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    assertEquals(2, backend.submissions.size());
    assertEquals(List.of(jobId), backend.submissions.stream().map(TrainingJobSpec::jobId).distinct().toList());
    assertEquals(backend.submissions.get(0), backend.submissions.get(1));
    assertEquals(1, jobs().size());
  }

  @Test
  void crashBeforeExportFinishedExportsTheSameSessionsAgain() {
    startEntity("trigger { type = manual }");
    exporter.script.then(Fakes.hang());
    offer("s1", 0.9);
    offer("s2", 0.9);
    String jobId = triggerOk();
    await(() -> assertEquals(1, exporter.requests.size()));
    restart();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    assertEquals(2, exporter.requests.size());
    assertEquals(exporter.requests.get(0), exporter.requests.get(1));
    assertEquals(1, backend.submissions.size());
  }

  @Test
  void exportFailureIsRetriedWithBackoff() {
    startEntity("trigger { type = manual }");
    exporter.script.then(Fakes.failWith(new IllegalStateException("disk full")));
    offer("s1", 0.9);
    String jobId = triggerOk();
    JobView v = awaitStatus(jobId, JobStatus.SUBMITTED);
    assertEquals(2, exporter.requests.size());
    assertTrue(v.history().stream().anyMatch(h -> h.detail().contains("disk full")));
  }

  @Test
  void anExportThatKeepsFailingFailsTheJobWithTheReasonAndTheNextTriggerRuns() {
    startEntity("trigger { type = manual }");
    for (int i = 0; i < ExportRetries.MAX_ATTEMPTS; i++) {
      exporter.script.then(Fakes.failWith(new IllegalStateException("Document nesting depth (1001) exceeds the maximum")));
    }
    offer("s1", 0.9);
    String jobId = triggerOk();
    JobView failed = awaitStatus(jobId, JobStatus.FAILED);
    assertEquals(ExportRetries.MAX_ATTEMPTS, exporter.requests.size(), "retried, but not forever");
    assertTrue(failed.error().contains("the dataset export failed " + ExportRetries.MAX_ATTEMPTS + " times")
        && failed.error().contains("nesting depth"), failed.error());
    assertEquals(1, status().poolSize(), "its trajectories went back to the pool");
    String next = triggerOk();
    assertEquals(JobStatus.SUBMITTED, awaitStatus(next, JobStatus.SUBMITTED).status());
  }

  // ---- polling, failure, success, cancel -----------------------------------------------------

  @Test
  void pollingMovesTheJobToRunningAndRecordsABackendFailure() {
    startEntity("trigger { type = manual }");
    offer("s1", 0.9);
    String jobId = triggerOk();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    kit.runCommand(PollTick.INSTANCE);
    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.RUNNING, "step 3", null));
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobId, JobStatus.RUNNING);
    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.FAILED, "CUDA out of memory", null));
    kit.runCommand(PollTick.INSTANCE);
    JobView v = awaitStatus(jobId, JobStatus.FAILED);
    assertEquals("CUDA out of memory", v.error());
    assertNull(v.outputModel());
    assertTrue(sink.calls.isEmpty());
    assertEquals(List.of(JobStatus.REQUESTED, JobStatus.SUBMITTED, JobStatus.RUNNING, JobStatus.FAILED),
        v.history().stream().map(h -> h.status()).distinct().toList());
    assertNull(status().activeJob());
  }

  @Test
  void successHandsTheModelToModelVersionOnceRecorded() {
    startEntity("trigger { type = manual }");
    CompletableFuture<Void> never = new CompletableFuture<>();
    sink.script.then(Fakes.held(never)); // the node dies during the hand-over
    offer("s1", 0.9);
    String jobId = triggerOk();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    backend.statuses.put(jobId, succeeded());
    kit.runCommand(PollTick.INSTANCE);
    JobView v = awaitStatus(jobId, JobStatus.SUCCEEDED);
    assertEquals("v1", v.outputModel().version());
    assertEquals("file:///ckpt/global_step_10/actor/huggingface", v.outputModel().checkpointUri());
    await(() -> assertEquals(1, sink.calls.size()));
    Fakes.Registration r = sink.calls.get(0);
    assertEquals(new Fakes.Registration(agentId, "v1", "file:///ckpt/global_step_10/actor/huggingface",
        "file:///ckpt/global_step_10/actor/huggingface", jobId, Map.of("task-success-rate", 0.9)), r);
    assertTrue(journal(CandidateHandedOver.class).isEmpty());

    restart(); // hands over again: the sink (RegisterCandidate) is idempotent
    await(() -> assertEquals(1, journal(CandidateHandedOver.class).size()));
    assertEquals(2, sink.calls.size());
    assertEquals(r, sink.calls.get(1));
    assertEquals("v1", journal(CandidateHandedOver.class).get(0).version());
    restart();
    assertEquals(2, sink.calls.size(), "not handed over again once recorded");

    // The next successful job is v2.
    offer("s2", 0.9);
    String second = triggerOk();
    awaitStatus(second, JobStatus.SUBMITTED);
    backend.statuses.put(second, succeeded());
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(second, JobStatus.SUCCEEDED);
    await(() -> assertEquals(2, journal(CandidateHandedOver.class).size()));
    assertEquals("v2", sink.calls.get(2).version());
  }

  @Test
  void cancelStopsTheJobOnTheBackend() {
    startEntity("trigger { type = manual }");
    offer("s1", 0.9);
    String jobId = triggerOk();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    CancelReply reply = this.<CancelReply>run(r -> new CancelJob(jobId, "bob", r)).reply();
    assertEquals(jobId, assertInstanceOf(CancelAccepted.class, reply).jobId());
    JobView v = awaitStatus(jobId, JobStatus.CANCELLED);
    assertEquals(List.of(jobId), backend.cancels);
    assertTrue(v.history().stream().anyMatch(h -> h.detail().contains("cancel requested by bob")));

    Refused again = assertInstanceOf(Refused.class, this.<CancelReply>run(r -> new CancelJob(jobId, "bob", r)).reply());
    assertEquals(ErrorCode.CONFLICT, again.code());
    assertEquals("job " + jobId + " is CANCELLED: it has ended, there is nothing to cancel"
        + " (only a REQUESTED, SUBMITTED or RUNNING job can be cancelled)", again.message());
    Refused unknown = assertInstanceOf(Refused.class,
        this.<CancelReply>run(r -> new CancelJob("job-7-" + agentId, "bob", r)).reply());
    assertEquals(ErrorCode.NOT_FOUND, unknown.code());
    restart();
    assertEquals(JobStatus.CANCELLED, job(jobId).status());
  }

  @Test
  void cancelBeforeSubmissionNeedsNoBackend() {
    startEntity("trigger { type = manual }");
    CompletableFuture<DatasetManifest> export = new CompletableFuture<>();
    exporter.script.then(Fakes.held(export));
    offer("s1", 0.9);
    String jobId = triggerOk();
    CancelAccepted c = assertInstanceOf(CancelAccepted.class,
        this.<CancelReply>run(r -> new CancelJob(jobId, null, r)).reply());
    assertEquals(JobStatus.CANCELLED, c.status());
    export.complete(Fakes.Exporter.manifestFor(exporter.requests.get(0), List.of()));
    status();
    status();
    assertEquals(JobStatus.CANCELLED, job(jobId).status());
    assertTrue(backend.submissions.isEmpty());
    assertTrue(backend.cancels.isEmpty());
  }

  @Test
  void backendForgettingTheJobFailsIt() {
    startEntity("trigger { type = manual }");
    offer("s1", 0.9);
    String jobId = triggerOk();
    awaitStatus(jobId, JobStatus.SUBMITTED);
    backend.statuses.remove(jobId);
    kit.runCommand(PollTick.INSTANCE);
    JobView v = awaitStatus(jobId, JobStatus.FAILED);
    assertTrue(v.error().contains("no longer knows"), v.error());
  }

  // ---- recovery ------------------------------------------------------------------------------

  @Test
  void restartAfterEveryKindOfEventPreservesTheState() {
    startEntity("trigger { type = manual }");
    Instant t0 = Instant.parse("2025-03-01T00:00:00Z");
    offer("s1", 0.5, 0.9, false, t0, List.of());
    assertEquals(kit.getState(), restart());
    offer("low", 0.1);
    assertEquals(kit.getState(), restart());
    offer("s1", 1.0, 0.9, true, t0.plusSeconds(1), List.of());
    assertEquals(kit.getState(), restart());
    CompletableFuture<BackendSubmission> submission = new CompletableFuture<>();
    backend.submit.then(Fakes.held(submission));
    String jobId = triggerOk();
    awaitJob(jobId, v -> backend.submissions.size() == 1);
    State submitting = kit.getState();
    assertTrue(submitting.job(jobId).orElseThrow().submitting());
    // The re-sent submission after the restart is held too, so the state cannot move on before
    // it is compared.
    CompletableFuture<BackendSubmission> resent = new CompletableFuture<>();
    backend.submit.then(Fakes.held(resent));
    State afterRestart = restart();
    assertEquals(submitting, afterRestart);
    resent.complete(new BackendSubmission("raysubmit_" + jobId));
    awaitStatus(jobId, JobStatus.SUBMITTED); // the re-sent submission
    assertEquals(kit.getState(), restart());
    backend.statuses.put(jobId, new BackendJobStatus(BackendJobStatus.State.RUNNING, "", null));
    kit.runCommand(PollTick.INSTANCE);
    awaitStatus(jobId, JobStatus.RUNNING);
    assertEquals(kit.getState(), restart());
    backend.statuses.put(jobId, succeeded());
    kit.runCommand(PollTick.INSTANCE);
    await(() -> assertEquals(1, journal(CandidateHandedOver.class).size()));
    State done = kit.getState();
    assertEquals(done, restart());
    assertEquals(TrainingCoordinator.replay(journal(Event.class)), done,
        "the static event handler replays the journal to the same state");
  }

  @Test
  void snapshotsOfALargePoolRecoverToTheSameState() {
    startEntity("trigger { type = threshold, min-samples = 100000 }");
    int offered = TrainingCoordinator.SNAPSHOT_EVERY + 30; // a snapshot, then 30 events replayed
    for (int i = 0; i < offered; i++) {
      offer("s-" + i, i % 5 == 0 ? 0.2 : 0.9);
    }
    State before = kit.getState();
    int pooled = offered - (offered + 4) / 5;
    assertEquals(pooled, before.poolSize());
    assertFalse(kit.snapshotTestKit().orElseThrow()
        .persistedInStorage(TrainingCoordinator.persistenceId(agentId).id()).isEmpty(), "a snapshot was taken");
    State after = restart();
    assertEquals(before, after);
    assertEquals(pooled, status().poolSize());
    assertEquals(Disposition.DUPLICATE, offer("s-7", 0.9).disposition());
  }

  /**
   * A pool of 100k trajectories applies, round-trips through its snapshot and is taken whole by a
   * job. How long that takes is a figure for the benchmarks, not an outcome asserted here.
   */
  @Test
  void aHundredThousandTrajectoriesApplyAndRoundTripThroughASnapshot() {
    Instant at = Instant.parse("2025-03-01T00:00:00Z");
    State s = State.EMPTY;
    for (int i = 0; i < 100_000; i++) {
      s = TrainingCoordinator.applyEvent(s, new TrainingCoordinator.TrajectoryPooled(
          "session-" + i, "v0", 0.5, 0.9, at.plusMillis(i), List.of(), at));
    }
    var serialization = org.apache.pekko.serialization.SerializationExtension.get(testKit.system().classicSystem());
    byte[] bytes = serialization.serialize(s).get();
    var serializer = serialization.findSerializerFor(s);
    String manifest = org.apache.pekko.serialization.Serializers.manifestFor(serializer, s);
    State back = (State) serialization.deserialize(bytes, serializer.identifier(), manifest).get();
    assertEquals(s, back);
    assertEquals(100_000, back.poolSize());
    State taken = TrainingCoordinator.applyEvent(back, new JobRequested("job-1-a",
        TrainingPolicy.TriggerType.THRESHOLD, "threshold", TrainingPolicy.Backend.RAY_JOBS, "sft", "m", Map.of(),
        back.poolSessionIds(), at));
    assertEquals(0, taken.poolSize());
    assertEquals(100_000, taken.job("job-1-a").orElseThrow().sessionIds().size());
  }

  // ---- trinity-proxy -------------------------------------------------------------------------

  @Test
  void trinityProxyForwardsRewardsOnceCommitsOnTriggerAndHandsOverNewModelVersions() {
    startEntity("backend = trinity-proxy, trinity-endpoint = \"http://proxy:8010\", "
        + "trigger { type = threshold, min-samples = 2 }");
    Instant t0 = Instant.parse("2025-03-01T00:00:00Z");
    offer("s1", 0.8, 0.9, false, t0, List.of("chatcmpl-1", "chatcmpl-2"));
    offer("s1", 0.8, 0.9, false, t0, List.of("chatcmpl-1", "chatcmpl-2"));
    await(() -> assertEquals(1, journal(RewardForwarded.class).size()));
    assertEquals(List.of(new Fakes.Forward(List.of("chatcmpl-1", "chatcmpl-2"), 0.8, "s1", 0)), online.forwards);
    assertTrue(online.commits.isEmpty());

    offer("s2", -0.5, 0.7, false, t0, List.of("chatcmpl-3"));
    String jobId = jobIdOf(1);
    JobView v = awaitStatus(jobId, JobStatus.SUCCEEDED);
    assertEquals(1, online.commits.size());
    assertEquals("sft", v.algorithm());
    assertEquals("trinity-proxy", v.backend().type());
    await(() -> assertEquals(2, journal(RewardForwarded.class).size()));
    restart();
    assertEquals(2, online.forwards.size(), "forwarded rewards are not forwarded again");
    assertEquals(1, online.commits.size());

    online.metrics = new ProxyMetrics(Map.of(0, 1), 10, 0, 3);
    kit.runCommand(ProxyMetricsTick.INSTANCE);
    await(() -> assertEquals(1, journal(CandidateHandedOver.class).size()));
    Fakes.Registration r = sink.calls.get(0);
    assertEquals("proxy-1", r.version());
    assertEquals("http://proxy:8010/v1", r.endpoint(), "the proxy's OpenAI base URL");
    assertEquals(jobId, r.sourceJobId());
    assertEquals(1.0, r.metrics().get("model_version"));
    kit.runCommand(ProxyMetricsTick.INSTANCE);
    status();
    restart();
    status();
    assertEquals(1, sink.calls.size(), "the same model version is handed over once");
  }

  @Test
  void trinityProxyRetriesAFailedRewardForward() {
    startEntity("backend = trinity-proxy, trigger { type = manual }");
    online.forward.then(Fakes.failWith(Fakes.unavailable()));
    offer("s1", 0.8, 0.9, false, Instant.parse("2025-03-01T00:00:00Z"), List.of("m1"));
    await(() -> assertEquals(1, journal(RewardForwarded.class).size()));
    assertEquals(2, online.forwards.size());
    assertTrue(kit.getState().pendingRewards().isEmpty());
  }
}
