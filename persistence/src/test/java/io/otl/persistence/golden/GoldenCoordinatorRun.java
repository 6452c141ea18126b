package io.otl.persistence.golden;

import io.otl.core.testing.ManualClock;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CandidateSink;
import io.otl.core.coordinator.DatasetExporter;
import io.otl.core.coordinator.DatasetManifest;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.japi.function.Function;

/**
 * The coordinator driven through its commands on the ray-jobs path, with ports that answer at once:
 * a pooled, a filtered and a revised trajectory, a manual trigger, export, submission, a poll that
 * finds the job succeeded, and the hand-over of the candidate. The rest of its event types come
 * from {@link GoldenCoordinatorEvents}.
 */
final class GoldenCoordinatorRun {
  private GoldenCoordinatorRun() {}

  static void run(ActorSystem<?> system, String agentId, ManualClock clock) throws Exception {
    TrainingPolicy policy = TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "training-runner { backend = ray-jobs, trigger { type = manual }, poll-interval = 1h }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
    DatasetExporter exporter = r -> CompletableFuture.completedFuture(new DatasetManifest(
        "./datasets/" + r.jobId() + ".jsonl", r.sessionIds().size(),
        "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f", r.sessionIds(), List.of(),
        "sft-messages", r.sessionIds().size() + 1, Map.of("held-out-for-eval", 1),
        // since v0.2.0-continual: the lineage of a job that continues from a stable checkpoint
        new io.otl.core.coordinator.DatasetLineage("stable", "v1", "file:///checkpoints/v1/huggingface",
            "continuing from stable v1 (trained by job-0)", 0, List.of(), "./datasets/" + r.jobId() + ".eval.jsonl",
            1, "9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", List.of("held-out-1")),
        // since v0.2.0-exclusionreasons: the session behind each exclusion, for the session's lineage
        Map.of("held-out-for-eval", List.of("held-out-1"))));
    TrainingBackend backend = new TrainingBackend() {
      @Override
      public CompletableFuture<BackendSubmission> submit(io.otl.core.training.TrainingJobSpec spec) {
        return CompletableFuture.completedFuture(new BackendSubmission("raysubmit_golden_driven"));
      }

      @Override
      public CompletableFuture<BackendJobStatus> status(String jobId) {
        return CompletableFuture.completedFuture(new BackendJobStatus(BackendJobStatus.State.SUCCEEDED, "done",
            new OutputModel("file:///checkpoints/driven/global_step_10", Map.of("task-success-rate", 0.86))));
      }

      @Override
      public CompletableFuture<Void> cancel(String jobId) {
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public CompletableFuture<String> logs(String jobId) {
        return CompletableFuture.completedFuture("");
      }

      @Override
      public String type() {
        return "ray-jobs";
      }
    };
    CandidateSink sink = (agent, version, artifact, endpoint, sourceJobId, metrics, trainedFrom) ->
        CompletableFuture.completedFuture(null);
    ActorRef<TrainingCoordinator.Command> c = system.systemActorOf(TrainingCoordinator.create(agentId, policy,
        TrainingCoordinator.Ports.batch(exporter, backend, sink), clock), "coordinator-" + agentId, Props.empty());
    Instant t = clock.instant();
    offer(system, c, "golden-s1", 0.75, 0.9, t, false);
    offer(system, c, "golden-s3", 0.0, 0.2, t.plusSeconds(1), false);
    clock.advance(Duration.ofMinutes(1));
    offer(system, c, "golden-s1", 1.0, 0.95, t.plusSeconds(60), true);
    offer(system, c, "golden-s2", 0.5, 0.8, t.plusSeconds(61), false);
    clock.advance(Duration.ofMinutes(1));
    TrainingCoordinator.TriggerReply reply = ask(system, c, r -> new TrainingCoordinator.Trigger("ops", r));
    if (!(reply instanceof TrainingCoordinator.TriggerAccepted accepted)) {
      throw new IllegalStateException("the coordinator refused the golden trigger: " + reply);
    }
    String jobId = accepted.jobId();
    await(system, c, jobId, v -> v.status() == TrainingCoordinator.JobStatus.SUBMITTED);
    clock.advance(Duration.ofMinutes(30));
    c.tell(TrainingCoordinator.PollTick.INSTANCE);
    await(system, c, jobId, v -> v.history().stream().anyMatch(h -> h.detail().startsWith("handed over")));
  }

  private static void offer(ActorSystem<?> system, ActorRef<TrainingCoordinator.Command> c, String session,
      double reward, double quality, Instant completedAt, boolean revision) throws Exception {
    ask(system, c, (ActorRef<TrainingCoordinator.TrajectoryAck> r) -> new TrainingCoordinator.TrajectoryAvailable(
        session, "v1", reward, quality, completedAt, revision, List.of(), r));
  }

  private static void await(ActorSystem<?> system, ActorRef<TrainingCoordinator.Command> c, String jobId,
      Predicate<TrainingCoordinator.JobView> done) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    TrainingCoordinator.JobReply last = null;
    while (System.nanoTime() < deadline) {
      last = ask(system, c, r -> new TrainingCoordinator.GetJob(jobId, r));
      if (last instanceof TrainingCoordinator.JobView v && done.test(v)) return;
      Thread.sleep(50);
    }
    throw new IllegalStateException("the golden job did not get there: " + last);
  }

  private static <R> R ask(ActorSystem<?> system, ActorRef<TrainingCoordinator.Command> to,
      Function<ActorRef<R>, TrainingCoordinator.Command> cmd) throws Exception {
    return AskPattern.ask(to, cmd, Duration.ofSeconds(20), system.scheduler()).toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }
}
