package io.otl.node;

import io.otl.core.coordinator.DatasetExporter;
import io.otl.node.config.TrainingSettings;
import io.otl.persistence.export.ExportFilters;
import java.nio.file.Path;
import org.apache.pekko.actor.typed.ActorSystem;

/** Test access to the node's real dataset exporter, for contracts that drive their own coordinator. */
public final class TrainingWiringAccess {
  private TrainingWiringAccess() {}

  public static DatasetExporter exporter(ActorSystem<?> system, Path dir) {
    var root = system.settings().config();
    return TrainingWiring.exporter(system, dir, ExportFilters.fromRoot(root), TrainingSettings.continual(root));
  }
}
