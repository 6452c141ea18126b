package io.otl.node;

import io.otl.core.coordinator.CandidateSink;
import io.otl.core.coordinator.DatasetExporter;
import io.otl.core.coordinator.DatasetManifest;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionSettings.RewardWeights;
import io.otl.node.config.TrainingSettings;
import io.otl.node.trinity.PerTurnRewards;
import io.otl.node.trinity.RayJobsBackend;
import io.otl.node.trinity.TrinityProxyBackend;
import io.otl.node.trinity.TrinitySettings;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportResult;
import io.otl.persistence.export.JobDatasetExport;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.localstore.LocalTrajectoryStore;
import io.otl.persistence.localstore.StoreSettings;
import io.otl.persistence.readside.TrajectoryFeed;
import io.otl.persistence.readside.TrajectoryNotice;
import io.otl.persistence.readside.TrajectorySink;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/**
 * Connects the training loop: completed trajectories flow from the journal (the trajectory feed)
 * to each agent's coordinator and model versions; coordinators export datasets, drive Trinity
 * and hand successful models to ModelVersion (design §3.2, §5, §6).
 */
final class TrainingWiring {
  /** The feed's name; its offset lives in the journal under FeedOffset|trajectories. */
  static final String FEED = "trajectories";

  private TrainingWiring() {}

  /**
   * @param placement where the coordinators' shards go (as the node's other entity types)
   * @param trainsLora whether versions are served as LoRA adapters, so jobs train adapters
   * @param weights the reward weights the online backend's per-turn rewards use
   * @return the batch backend, whose job logs the HTTP API serves; empty for trinity-proxy
   */
  static java.util.Optional<io.otl.core.training.TrainingBackend> start(ActorSystem<?> system, ClusterSharding sharding,
      SettledMembersFirst.Placement placement, TrainingSettings settings, boolean trainsLora, Duration askTimeout, RewardWeights weights, Clock clock) {
    CandidateSink candidates = candidateSink(sharding, askTimeout);
    TrinitySettings trinity = settings.trinity();
    java.util.Optional<io.otl.core.training.TrainingBackend> batch = trinity.backend().equals(TrinityProxyBackend.TYPE)
        ? java.util.Optional.empty()
        : java.util.Optional.of(new RayJobsBackend(system, trinity.rayJobs(), trainsLora));
    TrainingCoordinator.Ports direct = batch.isEmpty()
        ? TrainingCoordinator.Ports.online(new PerTurnRewards(new TrinityProxyBackend(system, trinity.endpoint()),
            new DataCollector(sharding, askTimeout), weights), candidates)
        : TrainingCoordinator.Ports.batch(
            exporter(system, settings.datasetDir().toAbsolutePath().normalize(), settings.filters(), settings.continual()),
            batch.get(), candidates);
    // One rollout at a time (docs/training-policy.md): ask ModelVersion before each job.
    TrainingCoordinator.Ports ports = direct.withRolloutProbe(RolloutProbes.of(sharding, askTimeout));
    // Per-agent overrides (agentscope.training.agents.<agentId>) were validated at start-up by NodeConfig;
    // run-time ones (PUT /v1/training/{agentId}/policy) go through the same validator in the resolver.
    sharding.init(placement.on(Entity.of(TrainingCoordinator.ENTITY_TYPE_KEY, ctx -> {
      TrainingSettings.AgentTraining agent = settings.forAgent(ctx.getEntityId());
      return TrainingCoordinator.create(ctx.getEntityId(), agent.policy(), agent.resolver(), ports, clock);
    })));
    if (settings.readSideEnabled()) {
      TrajectoryFeed.start(system, FEED, forwarder(sharding, askTimeout), settings.feed());
    }
    StoreSettings store = settings.store();
    if (store.local()) {
      LocalTrajectoryStore.start(system, store.storePath(), settings.feed());
    }
    return batch;
  }

  /** Writes the job's dataset as JSON Lines next to its manifest, named after the job. */
  static DatasetExporter exporter(ActorSystem<?> system, Path dir, ExportFilters filters, ContinualSettings continual) {
    JobDatasetExport export = new JobDatasetExport(new DatasetExport(system, filters), continual);
    return request -> export
        .export(request.agentId(), request.jobId(), request.sessionIds(), request.algorithm(), dir)
        .thenApply(j -> {
          ExportResult r = j.train();
          return new DatasetManifest(r.path(), r.count(), r.sha256(), r.sessionIds(), r.piiFindings(),
              r.format(), r.seen(), r.exclusions(), j.lineage(), r.excludedSessionIds());
        });
  }

  /**
   * Registers a trained model with the agent's ModelVersion entity (idempotent there, so the
   * coordinator may retry). Batch checkpoints are served from their artifact URI until a serving
   * endpoint is registered by hand.
   */
  static CandidateSink candidateSink(ClusterSharding sharding, Duration askTimeout) {
    return (agentId, version, artifact, endpoint, sourceJobId, metrics, trainedFrom) -> sharding
        .entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.TransitionReply>ask(reply -> new ModelVersion.RegisterCandidate(version, artifact,
            endpoint == null || endpoint.isBlank() ? artifact : endpoint, sourceJobId, metrics, trainedFrom, reply),
            askTimeout)
        .thenCompose(r -> !(r instanceof ModelVersion.Failure f) ? CompletableFuture.<Void>completedFuture(null)
            // ModelVersion answers a repeat of this very candidate (same artifact and job) as done; an
            // ALREADY_EXISTS is another version under this name, and the coordinator moves on to the next.
            : CompletableFuture.<Void>failedFuture(f.code() == ModelVersion.ErrorCode.ALREADY_EXISTS
                ? new CandidateSink.NameTaken(version, f.message())
                : new IllegalStateException(f.code() + ": " + f.message())));
  }

  /**
   * Delivers each completed trajectory (and reward revision) to its agent's coordinator (the
   * training pool) and model versions (canary metrics). Both deduplicate, so redelivery is safe.
   */
  static TrajectorySink forwarder(ClusterSharding sharding, Duration askTimeout) {
    return new TrajectorySink() {
      @Override
      public CompletionStage<Void> deliver(TrajectoryNotice n) {
        CompletionStage<?> pooled = sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, n.agentId())
            .<TrainingCoordinator.TrajectoryAck>ask(reply -> new TrainingCoordinator.TrajectoryAvailable(n.sessionId(),
                n.modelVersion(), n.reward(), n.qualityScore(), n.at(), n.revision(), n.msgIds(), reply, n.recordedAt()),
                askTimeout);
        CompletionStage<?> measured = !measured(n)
            ? CompletableFuture.completedFuture(null)
            : sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, n.agentId())
                .<ModelVersion.OutcomeReply>ask(reply -> outcome(n, reply), askTimeout);
        return pooled.thenCombine(measured, (a, b) -> (Void) null);
      }

      /**
       * One TrajectoriesAvailable (one journal write) per agent of the batch, in journal order; the
       * canary outcomes still go one by one to ModelVersion.
       */
      @Override
      public CompletionStage<Void> deliverAll(List<TrajectoryNotice> notices) {
        if (notices.size() == 1) return deliver(notices.get(0)); // the message every build understands
        Map<String, List<TrainingCoordinator.TrajectoryAvailable>> byAgent = new LinkedHashMap<>();
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (TrajectoryNotice n : notices) {
          byAgent.computeIfAbsent(n.agentId(), a -> new ArrayList<>()).add(new TrainingCoordinator.TrajectoryAvailable(
              n.sessionId(), n.modelVersion(), n.reward(), n.qualityScore(), n.at(), n.revision(), n.msgIds(), null,
              n.recordedAt()));
          if (measured(n)) {
            pending.add(sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, n.agentId())
                .<ModelVersion.OutcomeReply>ask(reply -> outcome(n, reply), askTimeout).toCompletableFuture());
          }
        }
        byAgent.forEach((agentId, items) -> pending.add(sharding
            .entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agentId)
            .<TrainingCoordinator.TrajectoryAcks>ask(reply -> new TrainingCoordinator.TrajectoriesAvailable(items, reply),
                askTimeout)
            .toCompletableFuture()));
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
      }
    };
  }

  /**
   * Whether model versions measure this notice: a completed trajectory of a known version, or a
   * revision that carries feedback (a rating sent after the result counts for the canary's
   * satisfaction; ModelVersion takes a session's first score only).
   */
  private static boolean measured(TrajectoryNotice n) {
    if (n.modelVersion() == null) return false;
    if (!n.revision()) return true;
    var o = n.outcome();
    return o != null && io.otl.core.model.OutcomeAggregates.satisfactionScore(o.meanRating(), o.thumbsUp(),
        o.thumbsDown()) != null;
  }

  private static ModelVersion.RecordOutcome outcome(
      TrajectoryNotice n, org.apache.pekko.actor.typed.ActorRef<ModelVersion.OutcomeReply> reply) {
    var o = n.outcome();
    Boolean success = o.status() == null ? null : o.status() == io.otl.core.session.SessionModel.TaskStatus.SUCCESS;
    return new ModelVersion.RecordOutcome(n.sessionId(), n.modelVersion(), success, o.meanRating(), o.thumbsUp(),
        o.thumbsDown(), o.latencyP95Ms(), reply, o.modelCalls(), o.upstreamErrors(), o.tokens(),
        n.revision() ? Boolean.TRUE : null, n.revision() ? null : n.recordedAt(), o.sessionStartedAt());
  }
}
