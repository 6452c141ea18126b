package io.otl.node.audit;

import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.node.TrainingWiringAccess;
import io.otl.node.trinity.RayJobsBackend;
import io.otl.node.trinity.TrinitySettings;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * The audit contract's coordinator ports: the node's real dataset exporter (files under
 * {@code datasetDir}) and the real Ray Jobs backend against the Trinity simulator named by the
 * node's {@code training-runner.trinity-endpoint}. Only the candidate's serving endpoint is fixed,
 * so that the canary has somewhere to route.
 */
final class AuditPorts {
  private AuditPorts() {}

  static TrainingCoordinator.Ports of(ActorSystem<?> system, Path datasetDir) {
    ClusterSharding sharding = ClusterSharding.get(system);
    TrinitySettings trinity = TrinitySettings.fromConfig(system.settings().config());
    return TrainingCoordinator.Ports.batch(
        TrainingWiringAccess.exporter(system, datasetDir),
        new RayJobsBackend(system, trinity.rayJobs()),
        (agentId, version, artifact, endpoint, sourceJobId, metrics, trainedFrom) -> sharding
            .entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
            .<ModelVersion.TransitionReply>ask(reply -> new ModelVersion.RegisterCandidate(version, artifact,
                "http://serve/" + version, sourceJobId, metrics, trainedFrom, reply), Duration.ofSeconds(5))
            .thenApply(r -> {
              if (r instanceof ModelVersion.Failure f) throw new IllegalStateException(f.message());
              return null;
            }));
  }
}
