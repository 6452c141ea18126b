package io.otl.persistence.golden;

import io.otl.core.coordinator.DatasetManifest;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.training.OutputModel;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every event type of the coordinator, in an order its event handler accepts, with the values its
 * command handler would give them (ray-jobs with a failed export, a failed submission, a success
 * and hand-over; a pre-flight failure; a cancellation; a failure; a trinity-proxy observation; a
 * cancellation the backend never confirmed).
 */
final class GoldenCoordinatorEvents {
  private GoldenCoordinatorEvents() {}

  static List<Event> all(String agent, Instant t0) {
    List<Event> out = new ArrayList<>();
    String job1 = TrainingCoordinator.jobId(1, agent);
    String job2 = TrainingCoordinator.jobId(2, agent);
    String job3 = TrainingCoordinator.jobId(3, agent);
    String job4 = TrainingCoordinator.jobId(4, agent);
    Instant slot = Instant.parse("2026-01-01T02:00:00Z");
    out.add(new TrainingCoordinator.ScheduleArmed("0 0 2 * * ?", "UTC", t0, t0));
    Map<String, Object> policy = new LinkedHashMap<>();
    policy.put("trigger.min-samples", 2);
    policy.put("algorithm", "sft");
    policy.put("hyperparams.epochs", 2);
    out.add(new TrainingCoordinator.PolicyChanged(policy, "http", t0.plusSeconds(1)));
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s1", "v1", 0.75, 0.9, t0.plusSeconds(10), List.of(),
        t0.plusSeconds(11)));
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s2", "v1", -0.25, 0.65, t0.plusSeconds(20),
        List.of("msg-1", "msg-2"), t0.plusSeconds(21)));
    out.add(new TrainingCoordinator.TrajectoryFiltered("golden-s3", 0.2, t0.plusSeconds(30), t0.plusSeconds(31)));
    out.add(new TrainingCoordinator.RewardUpdated("golden-s1", 1.0, 0.95, t0.plusSeconds(40), t0.plusSeconds(41)));
    out.add(new TrainingCoordinator.RewardForwarded("golden-s2", t0.plusSeconds(50)));
    Map<String, Object> hyper = new LinkedHashMap<>();
    hyper.put("learning_rate", 2.0e-5);
    hyper.put("batch_size", 16);
    hyper.put("epochs", 3);
    hyper.put("warmup_ratio", 0.1);
    out.add(new TrainingCoordinator.ScheduledSlotFired(slot, true, job1, slot.plusSeconds(1)));
    out.add(new TrainingCoordinator.JobRequested(job1, TriggerType.SCHEDULED, null, Backend.RAY_JOBS, "sft",
        "qwen2.5-7b-instruct", hyper, List.of("golden-s1", "golden-s2"), slot.plusSeconds(1)));
    out.add(new TrainingCoordinator.DatasetExportFailed(job1, 1, "dataset-dir is not writable",
        slot.plusSeconds(3), slot.plusSeconds(2)));
    DatasetManifest manifest = new DatasetManifest("./datasets/" + job1 + ".jsonl", 2,
        "9f2c1a7e5b3d4c6a8e0f1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60", List.of("golden-s1", "golden-s2"),
        List.of(), "sft-messages");
    out.add(new TrainingCoordinator.DatasetExported(job1, manifest, slot.plusSeconds(4)));
    out.add(new TrainingCoordinator.JobSubmitting(job1, 1, slot.plusSeconds(5)));
    out.add(new TrainingCoordinator.JobSubmitFailed(job1, 1, "Ray Jobs API answered 503", slot.plusSeconds(7),
        slot.plusSeconds(6)));
    out.add(new TrainingCoordinator.JobSubmitting(job1, 2, slot.plusSeconds(7)));
    out.add(new TrainingCoordinator.JobSubmitted(job1, "raysubmit_golden1", slot.plusSeconds(8)));
    out.add(new TrainingCoordinator.ScheduledSlotSkipped(slot.plusSeconds(86_400), "job " + job1 + " is still active",
        slot.plusSeconds(86_401)));
    out.add(new TrainingCoordinator.JobStatusChanged(job1, JobStatus.RUNNING, "Ray job RUNNING",
        slot.plusSeconds(90_000)));
    Map<String, Double> metrics = new LinkedHashMap<>();
    metrics.put("task-success-rate", 0.84);
    metrics.put("response-latency", 820.0);
    out.add(new TrainingCoordinator.JobSucceeded(job1, new OutputModel("file:///checkpoints/" + job1 + "/final",
        metrics), "v2", slot.plusSeconds(93_600)));
    out.add(new TrainingCoordinator.CandidateHandedOver(job1, "v2", slot.plusSeconds(93_601)));
    Instant t = slot.plusSeconds(100_000);
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s4", "v2", 0.5, 0.4, t, List.of(), t));
    out.add(new TrainingCoordinator.JobRequested(job2, TriggerType.MANUAL, "ops-team", Backend.RAY_JOBS,
        "sft", "qwen2.5-7b-instruct", hyper, List.of("golden-s4"), t.plusSeconds(1)));
    out.add(new TrainingCoordinator.PreflightFailed(job2, List.of("mean quality 0.40 is below min-quality 0.60"),
        true, 2, t.plusSeconds(2)));
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s5", "v2", 0.9, 0.8, t.plusSeconds(3), List.of(),
        t.plusSeconds(3)));
    out.add(new TrainingCoordinator.JobRequested(job3, TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "grpo",
        "qwen2.5-7b-instruct", Map.of(), List.of("golden-s4", "golden-s5"), t.plusSeconds(4)));
    out.add(new TrainingCoordinator.JobCancelRequested(job3, "ops-team", t.plusSeconds(5)));
    out.add(new TrainingCoordinator.JobCancelled(job3, "cancelled before submission", t.plusSeconds(6)));
    out.add(new TrainingCoordinator.JobRequested(job4, TriggerType.MANUAL, "api", Backend.TRINITY_PROXY, "grpo",
        "qwen2.5-7b-instruct", Map.of(), List.of(), t.plusSeconds(7)));
    out.add(new TrainingCoordinator.JobFailed(job4, "commit refused by the Trinity proxy: 400 no experiences",
        t.plusSeconds(8)));
    out.add(new TrainingCoordinator.ProxyModelObserved(job4, 3, "proxy-3", Map.of("reward_mean", 0.61),
        t.plusSeconds(9)));
    out.add(new TrainingCoordinator.CandidateHandedOver(job4, "proxy-3", t.plusSeconds(10)));
    // since v0.2.0-unconfirmed: a submission never acknowledged, whose stop could not be delivered
    // either: CANCELLED with the optional unconfirmed (the job's error), as JobLifecycle.stopFailed
    // and CancelRetries.unconfirmed build it after MAX_ATTEMPTS (5) failed stops
    String job5 = TrainingCoordinator.jobId(5, agent);
    out.add(new TrainingCoordinator.JobRequested(job5, TriggerType.MANUAL, "ops-team", Backend.RAY_JOBS, "sft",
        "qwen2.5-7b-instruct", hyper, List.of("golden-s5"), t.plusSeconds(11)));
    out.add(new TrainingCoordinator.JobSubmitting(job5, 1, t.plusSeconds(12)));
    out.add(new TrainingCoordinator.JobSubmitFailed(job5, 1, "Ray Jobs API unreachable: connect timed out",
        t.plusSeconds(14), t.plusSeconds(13)));
    out.add(new TrainingCoordinator.JobCancelRequested(job5, "ops-team", t.plusSeconds(15)));
    String lastError = "Ray Jobs API unreachable: connect timed out";
    out.add(new TrainingCoordinator.JobCancelled(job5,
        "cancelled without the backend's confirmation after 5 failed stop attempts", t.plusSeconds(16),
        "cancelled without the backend's confirmation: its submission was never acknowledged and 5 attempts to"
            + " stop it failed (last error: " + lastError + "); if a submission of " + job5
            + " reached the cluster it may still run there (check or stop submission id " + job5 + " on Ray)"));
    // since v0.2.0-proxyrestart: the Trinity proxy restarted (its model_version back to 0), then
    // its new weights reported version 1 again: a candidate of their own (restarts = 1)
    out.add(new TrainingCoordinator.ProxyRestarted(1, 0, t.plusSeconds(17)));
    out.add(new TrainingCoordinator.ProxyModelObserved(job4, 1, "proxy-r1-1", Map.of("reward_mean", 0.64),
        t.plusSeconds(18), 1));
    out.add(new TrainingCoordinator.CandidateHandedOver(job4, "proxy-r1-1", t.plusSeconds(19)));
    // since v0.2.0-optionalfields: the name the coordinator gave a trained model (v3) was an operator's
    // version, so ModelVersion has it as v4; renamedFrom is left out of the JSON when null, so no
    // earlier journal holds it
    String job6 = TrainingCoordinator.jobId(6, agent);
    out.add(new TrainingCoordinator.JobRequested(job6, TriggerType.MANUAL, "ops-team", Backend.RAY_JOBS, "sft",
        "qwen2.5-7b-instruct", hyper, List.of("golden-s5"), t.plusSeconds(20)));
    out.add(new TrainingCoordinator.JobSubmitting(job6, 1, t.plusSeconds(21)));
    out.add(new TrainingCoordinator.JobSubmitted(job6, "raysubmit_golden6", t.plusSeconds(22)));
    out.add(new TrainingCoordinator.JobSucceeded(job6, new OutputModel("file:///checkpoints/" + job6 + "/final",
        metrics), "v3", t.plusSeconds(23)));
    out.add(new TrainingCoordinator.CandidateHandedOver(job6, "v4", t.plusSeconds(24), "v3"));
    // since v0.2.0-refusedreward: a reward the Trinity proxy refused for good (HTTP 400) is settled with the
    // refusal; refused is left out of the JSON when null, so no earlier journal holds it
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s7", "v1", 0.5, 0.8, t.plusSeconds(25),
        List.of("msg-7"), t.plusSeconds(26)));
    out.add(new TrainingCoordinator.RewardForwarded("golden-s7", t.plusSeconds(27),
        "POST /feedback answered HTTP 400: unknown msg_ids"));
    // since v0.2.0-forget: messages carry their write time (recordedAt, left out of the JSON when null),
    // and used and filtered sessions written before a cutoff are forgotten (golden-s1, s2 used by
    // job 1, s3 filtered, s5 used by jobs 5 and 6); the snapshot after it holds forgottenBefore
    out.add(new TrainingCoordinator.TrajectoryPooled("golden-s8", "v1", 0.25, 0.7, t.plusSeconds(28), List.of(),
        t.plusSeconds(29), t.plusSeconds(28)));
    out.add(new TrainingCoordinator.TrajectoryFiltered("golden-s9", 0.1, t.plusSeconds(30), t.plusSeconds(31),
        t.plusSeconds(30)));
    out.add(new TrainingCoordinator.RewardUpdated("golden-s8", 0.5, 0.75, t.plusSeconds(32), t.plusSeconds(33),
        t.plusSeconds(32)));
    Instant before = t.plusSeconds(29);
    TrainingCoordinator.State s = TrainingCoordinator.replay(out);
    int[] count = {0};
    s.sessions().forEach((id, e) -> {
      Instant written = e.recordedAt() != null ? e.recordedAt() : e.at();
      if (e.kind() != TrainingCoordinator.SessionEntry.Kind.POOLED && written.isBefore(before)) count[0]++;
    });
    out.add(new TrainingCoordinator.SessionsForgotten(before, count[0], t.plusSeconds(34)));
    return out;
  }
}
