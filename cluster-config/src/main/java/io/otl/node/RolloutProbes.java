package io.otl.node;

import io.otl.core.coordinator.RolloutProbe;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelVersion;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/** "Is a rollout in progress?" answered by the agent's ModelVersion entity (one rollout at a time). */
final class RolloutProbes {
  /** The states in which a version is on its way to, or in, a canary. */
  static final Set<VersionState> IN_PROGRESS =
      EnumSet.of(VersionState.DEPLOYING, VersionState.CANARY, VersionState.RAMP, VersionState.PAUSED);

  private RolloutProbes() {}

  static RolloutProbe of(ClusterSharding sharding, Duration askTimeout) {
    return agentId -> sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
        .thenApply(view -> view.versions().stream()
            .filter(v -> IN_PROGRESS.contains(v.state()))
            .findFirst()
            .map(v -> v.version() + " is " + v.state()));
  }
}
