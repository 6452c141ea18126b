package io.otl.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.http.ExportRoutes;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.ExportFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;

/** The node's side of {@code POST /v1/exports/{agentId}}: a dataset export into a private temporary folder. */
final class NodeExports implements ExportRoutes.Exports {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ActorSystem<?> system;
  private final ExportFilters filters;

  NodeExports(ActorSystem<?> system, ExportFilters filters) {
    this.system = system;
    this.filters = filters;
  }

  @Override
  public CompletionStage<ExportRoutes.Download> export(String agentId, String format, Instant since, Instant until,
      boolean allowPii, ExportRoutes.Filters asked) {
    // The client's filters (the export command's --config) win over the node's, one by one.
    ExportFilters chosen = new ExportFilters(
        asked.sftMinReward() != null ? asked.sftMinReward() : filters.sftMinReward(),
        asked.minQuality() != null ? asked.minQuality() : filters.minQuality(),
        asked.dpoMinMargin() != null ? asked.dpoMinMargin() : filters.dpoMinMargin());
    Path dir;
    try {
      dir = Files.createTempDirectory("otl-export-"); // 0700
    } catch (IOException e) {
      return CompletableFuture.failedFuture(new IllegalStateException("no temporary folder for the export: " + e.getMessage(), e));
    }
    DatasetExport export = new DatasetExport(system, chosen);
    if (allowPii) export = export.allowingPii();
    Runnable cleanup = () -> delete(dir);
    CompletionStage<ExportRoutes.Download> stage;
    try {
      stage = export.forWindow(agentId, since, until, ExportFormat.parse(format), dir, "export").thenApply(r -> {
        if (r.empty()) {
          return new ExportRoutes.Download(null, null, r.piiFindings(), cleanup, r.nothingSelected(agentId, since, until));
        }
        try {
          String manifest = JSON.readTree(Path.of(r.manifestPath()).toFile()).toString();
          return new ExportRoutes.Download(manifest, r.fileWritten() ? Path.of(r.path()) : null, r.piiFindings(), cleanup,
              null);
        } catch (IOException e) {
          throw new IllegalStateException("reading the manifest failed: " + e.getMessage(), e);
        }
      });
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.whenComplete((d, e) -> {
      if (e != null) cleanup.run();
    });
  }

  private static void delete(Path dir) {
    try (var files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary folder: the OS cleans it eventually
    }
  }
}
