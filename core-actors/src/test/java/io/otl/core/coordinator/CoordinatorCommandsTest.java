package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import io.otl.core.coordinator.CoordinatorEvents.JobFailed;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitted;
import io.otl.core.coordinator.CoordinatorEvents.JobSubmitting;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorProtocol.CancelJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetJob;
import io.otl.core.coordinator.CoordinatorProtocol.GetJobLineage;
import io.otl.core.coordinator.CoordinatorProtocol.ListJobs;
import io.otl.core.coordinator.CoordinatorProtocol.SetPolicy;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoriesAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorProtocol.Trigger;
import io.otl.core.coordinator.CoordinatorReplies.CancelAccepted;
import io.otl.core.coordinator.CoordinatorReplies.CancelReply;
import io.otl.core.coordinator.CoordinatorReplies.ErrorCode;
import io.otl.core.coordinator.CoordinatorReplies.JobLineage;
import io.otl.core.coordinator.CoordinatorReplies.JobList;
import io.otl.core.coordinator.CoordinatorReplies.JobReply;
import io.otl.core.coordinator.CoordinatorReplies.LineageReply;
import io.otl.core.coordinator.CoordinatorReplies.PolicyReply;
import io.otl.core.coordinator.CoordinatorReplies.Refused;
import io.otl.core.coordinator.CoordinatorReplies.TriggerAccepted;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.TestInbox;
import org.junit.jupiter.api.Test;

/**
 * {@link TrainingCoordinator}'s commands, one at a time through its real handlers ({@link Handled}):
 * manual triggers and their refusals (package-info "Manual", design §7.1 409), the rollout answer,
 * cancellation ("Cancel"), run-time policy, trajectories and the read-only queries.
 */
class CoordinatorCommandsTest {
  static final String JOB = "job-1-a";

  static State pool(int n) {
    return CoordinatorPlansTest.pool(n);
  }

  static <T> T reply(TestInbox<T> inbox) {
    return inbox.receiveMessage();
  }

  @Test
  void aManualTriggerStartsAJobOrIsRefusedWhileOneIsActive() {
    StepsHarness h = new StepsHarness("");
    TestInbox<TriggerReply> inbox = TestInbox.create();
    Handled started = Handled.handle(h.coordinator, pool(2), new Trigger(" ", inbox.getRef()));
    // Two trajectories over 3 epochs are less than one batch of 16: warned, not refused.
    assertEquals(new TriggerAccepted(JOB, JobStatus.REQUESTED, List.of(), Preflight.warnings(h.coordinator.rt.policy, 2)),
        reply(inbox));
    assertEquals("api", ((JobRequested) started.events().get(0)).requestedBy(), "a blank name is the API's");
    assertEquals(1, h.exporter.requests.size(), "the export starts once the job is recorded");

    Handled again = Handled.handle(h.coordinator, started.state(), new Trigger("bob", inbox.getRef()));
    assertEquals(List.of(), again.events());
    assertEquals(new Refused(ErrorCode.CONFLICT,
        "job job-1-a of agent a is REQUESTED; wait until it ends or cancel it"), reply(inbox));

    State cancelling = CoordinatorEventHandler.applyEvent(started.state(),
        new io.otl.core.coordinator.CoordinatorEvents.JobCancelRequested(JOB, "bob", StepsHarness.NOW));
    Handled.handle(h.coordinator, cancelling, new Trigger("bob", inbox.getRef()));
    assertEquals(new Refused(ErrorCode.CONFLICT, "job job-1-a of agent a is REQUESTED; its cancel was requested"
        + " and it ends when the backend reports it stopped: wait until then"), reply(inbox),
        "a job whose stop is pending is not one to cancel again (trial t76)");
  }

  @Test
  void withTrainingDisabledAManualTriggerIsRefused() {
    StepsHarness h = new StepsHarness("");
    h.coordinator.rt.policy = TrainingPolicy.fromConfig(com.typesafe.config.ConfigFactory.parseString(
        "enabled = false").withFallback(StepsHarness.config("")));
    TestInbox<TriggerReply> inbox = TestInbox.create();
    assertEquals(List.of(), Handled.handle(h.coordinator, pool(2), new Trigger("bob", inbox.getRef())).events());
    assertEquals(new Refused(ErrorCode.CONFLICT, TrainingSwitch.refusal("a")), reply(inbox));
  }

  @Test
  void aManualTriggerAsksAboutRolloutsAndTheAnswerDecides() {
    StepsHarness h = new StepsHarness("", agent -> CompletableFuture.completedFuture(Optional.of("v3 is CANARY")));
    TestInbox<TriggerReply> inbox = TestInbox.create();
    assertEquals(List.of(), Handled.handle(h.coordinator, pool(2), new Trigger("bob", inbox.getRef())).events());
    assertFalse(inbox.hasMessages(), "the answer comes with ModelVersion's");
    RolloutChecked busy = (RolloutChecked) h.piped().get(0);
    assertEquals(new RolloutChecked(TriggerType.MANUAL, "bob", "v3 is CANARY", null, inbox.getRef()), busy);
    Handled refused = Handled.handle(h.coordinator, pool(2), busy);
    assertEquals(List.of(), refused.events());
    assertEquals(new Refused(ErrorCode.CONFLICT, busy.preflightReason()), reply(inbox));

    RolloutChecked unknown = new RolloutChecked(TriggerType.MANUAL, "bob", null, "timeout", inbox.getRef());
    Handled failed = Handled.handle(h.coordinator, pool(2), unknown);
    assertEquals(new TriggerAccepted(JOB, JobStatus.FAILED, List.of(unknown.preflightReason()), List.of()), reply(inbox),
        "ModelVersion did not answer: the job fails its pre-flight");
    assertEquals(2, failed.state().poolSize());

    RolloutChecked free = new RolloutChecked(TriggerType.MANUAL, "bob", null, null, inbox.getRef());
    Handled ok = Handled.handle(h.coordinator, pool(2), free);
    assertEquals(new TriggerAccepted(JOB, JobStatus.REQUESTED, List.of(), Preflight.warnings(h.coordinator.rt.policy, 2)),
        reply(inbox));
    Handled.handle(h.coordinator, ok.state(), free);
    assertInstanceOf(Refused.class, reply(inbox), "a job became active meanwhile");
  }

  @Test
  void theThresholdStartsOnlyWhenNothingRollsOutAndItIsStillDue() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 2", agent -> CompletableFuture.completedFuture(Optional.empty()));
    RolloutChecked free = new RolloutChecked(TriggerType.THRESHOLD, "threshold", null, null, null);
    assertEquals(TriggerType.THRESHOLD, ((JobRequested) Handled.handle(h.coordinator, pool(2), free).events().get(0))
        .trigger());
    assertEquals(List.of(), Handled.handle(h.coordinator, pool(1), free).events(), "no longer due");
    RolloutChecked busy = new RolloutChecked(TriggerType.THRESHOLD, "threshold", "v3 is CANARY", null, null);
    assertEquals(List.of(), Handled.handle(h.coordinator, pool(2), busy).events());
  }

  @Test
  void aJobNeverSubmittedIsCancelledAtOnce() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 2");
    TestInbox<CancelReply> inbox = TestInbox.create();
    State s = CoordinatorEventHandler.applyEvent(pool(2), JobEventsTest.requested(JOB, Backend.RAY_JOBS, "s0", "s1"));
    s = CoordinatorEventHandler.applyEvent(s, PoolEventsTest.pooled("s7", 1, 1, NOW));
    s = CoordinatorEventHandler.applyEvent(s, PoolEventsTest.pooled("s8", 1, 1, NOW));
    Handled c = Handled.handle(h.coordinator, s, new CancelJob(JOB, "bob", inbox.getRef()));
    assertEquals(List.of(new JobCancelRequested(JOB, "bob", NOW), new JobCancelled(JOB, "cancelled before submission", NOW)),
        c.events().subList(0, 2));
    assertEquals(new CancelAccepted(JOB, JobStatus.CANCELLED), reply(inbox));
    assertEquals("job-2-a", ((JobRequested) c.events().get(2)).jobId(), "the pool that waited behind it trains now");
    assertEquals(List.of(), h.backend.cancels);
  }

  @Test
  void aSubmittedJobIsStoppedOnTheBackendAndARepeatedCancelChangesNothing() {
    StepsHarness h = new StepsHarness("");
    TestInbox<CancelReply> inbox = TestInbox.create();
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.RAY_JOBS),
        new JobSubmitting(JOB, 1, NOW), new JobSubmitted(JOB, "raysubmit_1", NOW)));
    Handled c = Handled.handle(h.coordinator, s, new CancelJob(JOB, null, inbox.getRef()));
    assertEquals(List.of(new JobCancelRequested(JOB, null, NOW)), c.events());
    assertEquals(new CancelAccepted(JOB, JobStatus.SUBMITTED), reply(inbox));
    assertEquals(List.of(JOB), h.backend.cancels);
    assertEquals(List.of(), Handled.handle(h.coordinator, c.state(), new CancelJob(JOB, null, inbox.getRef())).events());
    assertEquals(new CancelAccepted(JOB, JobStatus.SUBMITTED), reply(inbox));
    assertEquals(1, h.backend.cancels.size());

    State unacknowledged = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.RAY_JOBS),
        new JobSubmitting(JOB, 1, NOW)));
    assertEquals(1, Handled.handle(h.coordinator, unacknowledged, new CancelJob(JOB, null, inbox.getRef())).events().size(),
        "a submission may have started it: it is stopped on the backend first");
  }

  @Test
  void anUnknownOrEndedJobCannotBeCancelled() {
    StepsHarness h = new StepsHarness("");
    TestInbox<CancelReply> inbox = TestInbox.create();
    Handled.handle(h.coordinator, State.EMPTY, new CancelJob(JOB, null, inbox.getRef()));
    assertEquals(new Refused(ErrorCode.NOT_FOUND, "job job-1-a not found for agent a"), reply(inbox));
    State failed = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.RAY_JOBS),
        new JobFailed(JOB, "x", NOW)));
    Handled.handle(h.coordinator, failed, new CancelJob(JOB, null, inbox.getRef()));
    assertEquals(new Refused(ErrorCode.CONFLICT, "job job-1-a is FAILED: it has ended, there is nothing to cancel"
        + " (only a REQUESTED, SUBMITTED or RUNNING job can be cancelled)"), reply(inbox));
  }

  @Test
  void aRunTimePolicyIsPersistedAndInForceAtOnce() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 50");
    TestInbox<PolicyReply> inbox = TestInbox.create();
    Handled bad = Handled.handle(h.coordinator, pool(2), new SetPolicy(Map.of("backend", "x"), "ops", inbox.getRef()));
    assertEquals(List.of(), bad.events());
    assertEquals(ErrorCode.INVALID_INPUT, ((Refused) reply(inbox)).code());

    Handled ok = Handled.handle(h.coordinator, pool(2), new SetPolicy(Map.of("trigger", Map.of("min-samples", 2)), "",
        inbox.getRef()));
    assertEquals(new PolicyChanged(Map.of("trigger.min-samples", 2), "api", NOW), ok.events().get(0));
    assertEquals(TriggerType.THRESHOLD, ((JobRequested) ok.events().get(1)).trigger(), "the pool of 2 is due now");
    PolicyView view = (PolicyView) reply(inbox);
    assertEquals(2, view.policy().get("trigger.min-samples"));
    assertEquals("api", view.changedBy());
    assertEquals(2, h.coordinator.rt.policy.minSamples());
  }

  @Test
  void trajectoriesJoinThePoolAndTheThresholdLooksOnceAfterABatch() {
    StepsHarness h = new StepsHarness("trigger.min-samples = 2");
    TestInbox<TrajectoryAck> acks = TestInbox.create();
    Handled one = Handled.handle(h.coordinator, State.EMPTY,
        new TrajectoryAvailable("s1", "v1", 1, 0.9, NOW, false, List.of(), acks.getRef()));
    assertEquals(CoordinatorReplies.Disposition.POOLED, reply(acks).disposition());
    assertEquals(1, one.events().size(), "below min-samples");

    TestInbox<CoordinatorProtocol.TrajectoryAcks> batchAcks = TestInbox.create();
    Handled batch = Handled.handle(h.coordinator, one.state(), new TrajectoriesAvailable(List.of(
        new TrajectoryAvailable("s2", "v1", 1, 0.9, NOW, false, List.of(), null),
        new TrajectoryAvailable("s3", "v1", 1, 0.9, NOW, false, List.of(), null)), batchAcks.getRef()));
    assertEquals(2, reply(batchAcks).acks().size());
    assertEquals(3, batch.events().size(), "two pooled, then one job for the whole pool");
    assertEquals(List.of("s1", "s2", "s3"), ((JobRequested) batch.events().get(2)).sessionIds());

    Handled dup = Handled.handle(h.coordinator, batch.state(),
        new TrajectoryAvailable("s1", "v1", 1, 0.9, NOW, false, List.of(), acks.getRef()));
    assertEquals(List.of(), dup.events());
    assertEquals(CoordinatorReplies.Disposition.DUPLICATE, reply(acks).disposition());
  }

  @Test
  void theQueriesAnswerFromTheState() {
    StepsHarness h = new StepsHarness("");
    State s = CoordinatorEventHandler.replay(List.of(JobEventsTest.requested(JOB, Backend.RAY_JOBS, "s1"),
        new JobFailed(JOB, "x", NOW), JobEventsTest.requested("job-2-a", Backend.RAY_JOBS)));
    TestInbox<JobReply> job = TestInbox.create();
    Handled.handle(h.coordinator, s, new GetJob(JOB, job.getRef()));
    assertEquals(TrainingCoordinator.jobView("a", s.job(JOB).orElseThrow()), reply(job));
    Handled.handle(h.coordinator, s, new GetJob("job-9-a", job.getRef()));
    assertEquals(ErrorCode.NOT_FOUND, ((Refused) reply(job)).code());

    TestInbox<JobList> list = TestInbox.create();
    Handled.handle(h.coordinator, s, new ListJobs(JobStatus.FAILED, list.getRef()));
    assertEquals(List.of(JOB), reply(list).jobs().stream().map(CoordinatorReplies.JobView::jobId).toList());
    Handled.handle(h.coordinator, s, new ListJobs(null, list.getRef()));
    assertEquals(2, reply(list).jobs().size());

    TestInbox<LineageReply> lineage = TestInbox.create();
    Handled.handle(h.coordinator, s, new GetJobLineage(JOB, lineage.getRef()));
    assertEquals(new JobLineage(JOB, "a", List.of("s1"), null), reply(lineage));
    Handled.handle(h.coordinator, s, new GetJobLineage("job-9-a", lineage.getRef()));
    assertTrue(reply(lineage) instanceof Refused);

    TestInbox<CoordinatorReplies.CoordinatorView> status = TestInbox.create();
    Handled.handle(h.coordinator, s, new CoordinatorProtocol.GetStatus(status.getRef()));
    assertEquals(h.coordinator.statusView(s), reply(status));
    TestInbox<PolicyReply> policy = TestInbox.create();
    Handled.handle(h.coordinator, s, new CoordinatorProtocol.GetPolicy(policy.getRef()));
    assertEquals(h.coordinator.policyView(s), reply(policy));
  }
}
