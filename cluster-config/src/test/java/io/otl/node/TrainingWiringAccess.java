package io.otl.node;

import io.otl.core.coordinator.DatasetExporter;
import io.otl.node.config.TrainingSettings;
import java.nio.file.Path;
import org.apache.pekko.actor.typed.ActorSystem;

/** Test access to the node's real dataset exporter, for contracts that drive their own coordinator. */
public final class TrainingWiringAccess {
  private TrainingWiringAccess() {}

  public static DatasetExporter exporter(ActorSystem<?> system, Path dir) {
    return TrainingWiring.exporter(system, dir, TrainingSettings.continual(system.settings().config()));
  }
}
