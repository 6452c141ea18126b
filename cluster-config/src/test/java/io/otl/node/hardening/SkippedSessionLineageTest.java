package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.coordinator.DatasetManifest;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A session a job took whose stored event cannot be read is skipped by the job's export (counted in the
 * manifest's {@code skipped}); its lineage said {@code excludedFor: null}, as for a session not exported yet,
 * because the job's dataset named only the sessions the selection rules left out (trial-api). The skipped
 * ones are now named under their reason too.
 */
class SkippedSessionLineageTest {
  private static final String AGENT = "agent-skip";

  @Test
  void aSessionTheJobsExportSkippedHasItsReasonInTheLineage() throws Exception {
    Path dir = TestDatabases.outputDir("skipped-lineage");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      for (String id : List.of("ok-1", "unread-1")) {
        FeedTestSupport.session(node.dataCollector(), id, AGENT, "question " + id, "answer " + id, true)
            .toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
      poison(node.journal(), "unread-1");
      JobDatasetExport jobs = new JobDatasetExport(new DatasetExport(node.system()),
          new ContinualSettings(ContinualSettings.StartFrom.BASE, 0, Duration.ofDays(14), 0));
      ExportResult train = jobs.export(AGENT, "job-1-" + AGENT, List.of("ok-1", "unread-1"), ExportFormat.SFT,
          dir.resolve("datasets")).toCompletableFuture().get(60, TimeUnit.SECONDS).train();
      assertEquals(List.of("ok-1"), train.sessionIds());
      assertEquals(Map.of("unreadable_event", 1), train.skipped());
      assertEquals(List.of("unread-1"), train.excludedSessionIds().get("unreadable_event"), train.excludedSessionIds()
          .toString());
      // what the coordinator records for the job (TrainingWiring.exporter), and the lineage reads
      DatasetManifest recorded = new DatasetManifest(train.path(), train.count(), train.sha256(), train.sessionIds(),
          train.piiFindings(), train.format(), train.seen(), train.exclusions(), null, train.excludedSessionIds());
      assertEquals("unreadable_event", recorded.exclusionOf("unread-1"));
      assertEquals(null, recorded.exclusionOf("ok-1"));
    }
  }

  /** The tool input {"q":"<id>"} of the session's stored tool call, nested 1,200 levels: beyond what Jackson reads. */
  private static void poison(JournalSettings journal, String sessionId) throws Exception {
    String marker = "{\"q\":\"" + sessionId + "\"}";
    String deep = "{\"a\":".repeat(1199) + "{}" + "}".repeat(1199);
    int changed = 0;
    try (Connection c = JournalSchema.connect(journal);
        PreparedStatement select = c.prepareStatement(
            "SELECT \"sequence_number\", \"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = ?")) {
      select.setString(1, "AgentSession|" + sessionId);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          String payload = new String(rs.getBytes(2), StandardCharsets.UTF_8);
          if (!payload.contains(marker)) continue;
          try (PreparedStatement update = c.prepareStatement("UPDATE \"event_journal\" SET \"event_payload\" = ? "
              + "WHERE \"persistence_id\" = ? AND \"sequence_number\" = ?")) {
            update.setBytes(1, payload.replace(marker, deep).getBytes(StandardCharsets.UTF_8));
            update.setString(2, "AgentSession|" + sessionId);
            update.setLong(3, rs.getLong(1));
            changed += update.executeUpdate();
          }
        }
      }
    }
    assertEquals(1, changed, "the tool call of " + sessionId + " was found in the journal");
  }
}
