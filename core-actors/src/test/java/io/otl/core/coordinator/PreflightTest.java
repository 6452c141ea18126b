package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The threshold trigger and the pre-flight checklist of design §3.2 (package-info "Threshold",
 * "Pre-flight checklist"), with the RL reward-source and distillation-teacher items.
 */
class PreflightTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static TrainingPolicy policy(String overrides) {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString("training-runner { " + overrides + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  /** A pool of {@code n} trajectories of quality {@code q}, plus {@code extra} events. */
  private static State pool(int n, double q, Event... extra) {
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(PoolEventsTest.pooled("s" + i, 1.0, q, T0));
    }
    events.addAll(List.of(extra));
    return CoordinatorEventHandler.replay(events);
  }

  @Test
  void theThresholdFiresAtMinSamplesWithNoActiveJob() {
    TrainingPolicy p = policy("trigger.min-samples = 3");
    assertFalse(Preflight.thresholdDue(pool(2, 1.0), p));
    assertTrue(Preflight.thresholdDue(pool(3, 1.0), p), "reaching min-samples is enough");
    State busy = pool(3, 1.0, new JobRequested("job-1-a", TriggerType.MANUAL, null, Backend.RAY_JOBS, "sft", "b",
        Map.of(), List.of(), T0));
    assertFalse(Preflight.thresholdDue(busy, p), "a job is active");
    assertFalse(Preflight.thresholdDue(pool(5, 1.0), policy("trigger { min-samples = 3, type = manual }")));
    assertFalse(Preflight.thresholdDue(pool(5, 1.0), TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "enabled = false, training-runner.trigger.min-samples = 3")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")))), "training is off");
  }

  @Test
  void afterAFailedPreflightTheThresholdWaitsForTheRearmPoint() {
    TrainingPolicy p = policy("trigger.min-samples = 3");
    State failed = pool(3, 1.0, new JobRequested("job-1-a", TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "sft",
        "b", Map.of(), List.of("s0", "s1", "s2"), T0),
        new CoordinatorEvents.PreflightFailed("job-1-a", List.of("x"), true, 4, T0));
    assertEquals(3, failed.poolSize());
    assertFalse(Preflight.thresholdDue(failed, p), "3 < re-arm point 4");
    State grown = CoordinatorEventHandler.applyEvent(failed, PoolEventsTest.pooled("s9", 1, 1, T0));
    assertTrue(Preflight.thresholdDue(grown, p), "4 reaches the re-arm point");
  }

  @Test
  void theRearmPointIsATenthOfMinSamplesAtLeastOne() {
    assertEquals(1100, Preflight.rearmAt(1000, policy("trigger.min-samples = 1000"), 0));
    assertEquals(11, Preflight.rearmAt(10, policy("trigger.min-samples = 19"), 0));
    assertEquals(11, Preflight.rearmAt(10, policy("trigger.min-samples = 5"), 0));
  }

  /**
   * Trial t26: min-samples 5, a dpo policy on one-answer sessions (every dataset empty), 40 sessions:
   * 23 failed jobs, one per new trajectory. Each failure in a row doubles the wait, up to min-samples.
   */
  @Test
  void eachFailureInARowDoublesTheWaitUpToMinSamples() {
    TrainingPolicy five = policy("trigger.min-samples = 5");
    assertEquals(List.of(11, 12, 14, 15, 15), List.of(Preflight.rearmAt(10, five, 0), Preflight.rearmAt(10, five, 1),
        Preflight.rearmAt(10, five, 2), Preflight.rearmAt(10, five, 3), Preflight.rearmAt(10, five, 40)));
    TrainingPolicy thousand = policy("trigger.min-samples = 1000");
    assertEquals(1200, Preflight.rearmAt(1000, thousand, 1));
    assertEquals(2000, Preflight.rearmAt(1000, thousand, 9), "never more than min-samples");

    State s = pool(0, 1.0,
        new JobRequested("job-1-a", TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "dpo", "b", Map.of(), List.of(), T0),
        new CoordinatorEvents.PreflightFailed("job-1-a", List.of("empty"), true, 6, T0),
        new JobRequested("job-2-a", TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "dpo", "b", Map.of(), List.of(), T0),
        new CoordinatorEvents.PreflightFailed("job-2-a", List.of("empty"), true, 7, T0),
        new JobRequested("job-3-a", TriggerType.THRESHOLD, null, Backend.RAY_JOBS, "dpo", "b", Map.of(), List.of(), T0));
    assertEquals(2, Preflight.failedInARow(s, "job-3-a"), "the job failing now is not counted before itself");
  }

  @Test
  void aCleanPoolPassesTheChecklist() {
    // a mean exactly at min-quality passes (0.5 is exact in binary)
    assertEquals(List.of(), Preflight.check(pool(3, 0.5), TriggerType.THRESHOLD,
        policy("trigger.min-samples = 3, min-quality = 0.5")));
    assertEquals(List.of(), Preflight.check(pool(1, 0.9), TriggerType.MANUAL, policy("trigger.min-samples = 3")));
  }

  @Test
  void everyFailedItemIsNamed() {
    TrainingPolicy p = policy("trigger.min-samples = 3, min-quality = 0.7, base-model = \"\"");
    assertEquals(List.of(
        "not enough samples: the pool has 2 eligible trajectories, a threshold job needs at least 3",
        "mean quality 0.650 of the pool is below min-quality 0.700",
        "base model is not set (agentscope.training.training-runner.base-model)"),
        Preflight.check(pool(2, 0.65), TriggerType.THRESHOLD, p));
    assertEquals(List.of("not enough samples: the pool has 0 eligible trajectories, a scheduled job needs at least 1"),
        Preflight.check(State.EMPTY, TriggerType.SCHEDULED, policy("")));
  }

  @Test
  void rlOnRayJobsNeedsARewardFunction() {
    assertEquals(1, Preflight.check(pool(1, 1), TriggerType.MANUAL, policy("algorithm = grpo")).size());
    assertTrue(RewardSource.problems("ppo", Map.of(), Backend.RAY_JOBS).get(0)
        .startsWith("no reward source for ppo: set agentscope.training.training-runner.hyperparams.reward-fn-type"));
    assertEquals(List.of(), RewardSource.problems("grpo", Map.of("reward_fn_type", "judge"), Backend.RAY_JOBS));
    assertEquals(List.of(), RewardSource.problems("grpo", Map.of(), Backend.TRINITY_PROXY), "online RL gets our rewards");
    assertEquals(List.of(), RewardSource.problems("sft", Map.of(), Backend.RAY_JOBS));
    assertEquals("math", RewardSource.named(Map.of("rewardFnType", " math ")));
    assertNull(RewardSource.named(Map.of("reward-fn-type", "  ")));
    assertNull(RewardSource.named(Map.of("reward-fn", "math")));
  }

  @Test
  void distillationOnRayJobsNeedsATeacher() {
    assertEquals(List.of("no teacher for distillation: set agentscope.training.training-runner.hyperparams.teacher-model"
        + " (or the agent's hyperparams.teacher-model, at run time with PUT /v1/training/{agentId}/policy) to the teacher model's path or Hugging Face id"),
        Preflight.check(pool(1, 1), TriggerType.MANUAL, policy("algorithm = distillation")));
    assertEquals(List.of(), Distillation.problems("distillation", Map.of("teacher_model", "Qwen/Qwen2.5-72B"),
        Backend.RAY_JOBS));
    assertEquals(List.of(), Distillation.problems("distillation", Map.of(), Backend.TRINITY_PROXY));
    assertEquals(List.of(), Distillation.problems("sft", Map.of(), Backend.RAY_JOBS));
    assertEquals("Qwen/Qwen2.5-72B", Distillation.teacher(Map.of("teacherModel", " Qwen/Qwen2.5-72B ")));
    assertNull(Distillation.teacher(Map.of("teacher-model", "")));
    assertNull(Distillation.teacher(Map.of("teacher", "x")));
  }

  @Test
  void theSwitchNamesItsKey() {
    assertEquals("enabled", TrainingSwitch.status(policy("")));
    assertTrue(TrainingSwitch.refusal("a").startsWith(
        "training is disabled (agentscope.training.enabled = false): no job is started for agent a"));
  }

  @Test
  void rlOnTooFewGpusIsAWarningNamingTheSettingNotARefusal() {
    TrainingPolicy grpo = policy("algorithm = grpo, hyperparams.reward-fn-type = accuracy_reward");
    assertEquals(List.of(), Preflight.check(pool(3, 1.0), TriggerType.MANUAL, grpo), "not a refusal");
    List<String> warnings = Preflight.warnings(grpo, 100);
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).startsWith("grpo needs at least 2 GPUs"), warnings.get(0));
    assertTrue(warnings.get(0).contains(
        "agentscope.training.training-runner.trinity.node-num x gpu-per-node = 1 x 1 = 1"), warnings.get(0));

    assertEquals(List.of(), Preflight.warnings(policy("algorithm = ppo, trinity.gpu-per-node = 2"), 100),
        "one GPU for the rollout model, one for the trainer");
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = grpo, trinity { node-num = 2, gpu-per-node = 1 }"), 100));
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = sft"), 100), "sft and dpo only train");
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = dpo"), 100));
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = grpo, backend = trinity-proxy"), 100),
        "the proxy's cluster is Trinity's own serve + train, not a config we render");

    TrainingPolicy bigTeacher = policy("algorithm = distillation, trinity.gpu-per-node = 2,"
        + " hyperparams { teacher-model = t, teacher-tensor-parallel-size = 2 }");
    List<String> distill = Preflight.warnings(bigTeacher, 100);
    assertEquals(1, distill.size(), "rollout 1 + teacher 2 + trainer 1 > 2");
    assertTrue(distill.get(0).startsWith("distillation needs at least 4 GPUs"), distill.get(0));
    assertTrue(distill.get(0).contains("2 for the teacher, hyperparams.teacher-tensor-parallel-size"), distill.get(0));
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = distillation, trinity.gpu-per-node = 4,"
        + " hyperparams { teacher-model = t, teacher-tensor-parallel-size = 2 }"), 100));
  }

  /** Trial t27: 3 DPO pairs over 3 epochs, batch size 16: Trinity-RFT reads full batches only and trains no step. */
  @Test
  void aPoolSmallerThanOneBatchOverItsEpochsIsAWarningNotARefusal() {
    TrainingPolicy dpo = policy("algorithm = dpo");
    assertEquals(List.of(), Preflight.check(pool(3, 1.0), TriggerType.MANUAL, dpo), "not a refusal");
    List<String> warnings = Preflight.warnings(dpo, 3);
    assertEquals(List.of("the pool holds 3 trajectories, at most 9 rows over 3 epochs (hyperparams.epochs), fewer"
        + " than one batch of 16 (hyperparams.batch-size): Trinity-RFT reads full batches only, so on a real cluster"
        + " this job would train no step and leave no model (the simulator trains anyway); lower"
        + " hyperparams.batch-size or wait for more trajectories"), warnings);
    assertEquals(List.of(), Preflight.warnings(dpo, 6), "6 x 3 = 18 rows: one batch");
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = dpo, hyperparams.batch-size = 4"), 3));
    assertEquals(List.of(), Preflight.warnings(policy("algorithm = dpo, backend = trinity-proxy"), 1),
        "the proxy trains on what it serves, not on a file");
  }

  /**
   * Trial t43: a pool of 22 passes the pool's check (66 rows over 3 epochs), but its export wrote 5
   * SFT lines (8 duplicates, 6 below sft-min-reward, 3 held out): 15 rows over 3 epochs fill no batch
   * of 16, and nothing said so. The rows written are judged too, and the job's view shows it.
   */
  @Test
  void anExportSmallerThanOneBatchOverItsEpochsIsWarnedAboutOnTheJob() {
    TrainingPolicy sft = policy("algorithm = sft");
    assertEquals(List.of(), Preflight.warnings(sft, 22), "the pool fills batches");
    Map<String, Object> hyperparams = sft.hyperparams();
    List<String> warnings = Preflight.smallDataset(Backend.RAY_JOBS, hyperparams, 5);
    assertEquals(List.of("the exported dataset has 5 rows, 15 over 3 epochs (hyperparams.epochs), fewer than one"
        + " batch of 16 (hyperparams.batch-size): Trinity-RFT reads full batches only, so on a real cluster this"
        + " job trains no step and leaves no model (the simulator trains anyway); lower hyperparams.batch-size or"
        + " wait for more trajectories (the manifest's exclusions say what the filters left out)"), warnings);
    assertEquals(List.of(), Preflight.smallDataset(Backend.RAY_JOBS, hyperparams, 6), "6 x 3 = 18 rows");
    assertEquals(List.of(), Preflight.smallDataset(Backend.TRINITY_PROXY, hyperparams, 1));
    assertEquals(List.of(), Preflight.smallDataset(Backend.RAY_JOBS, hyperparams, 0),
        "an empty dataset fails its pre-flight instead");

    DatasetManifest five = new DatasetManifest("/d/job-1-a/train.jsonl", 5, "abc",
        List.of("s1", "s2", "s3", "s4", "s5"), List.of(), "sft-messages");
    State exported = CoordinatorEventHandler.replay(List.of(
        new JobRequested("job-1-a", TriggerType.THRESHOLD, "threshold", Backend.RAY_JOBS, "sft", "base",
            hyperparams, List.of("s1", "s2", "s3", "s4", "s5"), T0),
        new CoordinatorEvents.DatasetExported("job-1-a", five, T0)));
    CoordinatorReplies.JobView view = TrainingCoordinator.jobView("a", exported.job("job-1-a").orElseThrow());
    assertEquals(warnings, view.warnings());
    State requested = CoordinatorEventHandler.replay(List.of(new JobRequested("job-1-a", TriggerType.THRESHOLD,
        "threshold", Backend.RAY_JOBS, "sft", "base", hyperparams, List.of("s1"), T0)));
    assertEquals(List.of(), TrainingCoordinator.jobView("a", requested.job("job-1-a").orElseThrow()).warnings(),
        "nothing exported yet, nothing to judge");
  }
}
