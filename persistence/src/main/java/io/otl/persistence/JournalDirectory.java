package io.otl.persistence;

import io.otl.core.api.AgentDirectory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Answers existence questions with indexed lookups on the journal's primary key
 * (persistence_id, sequence_number), on a blocking executor.
 */
public final class JournalDirectory implements AgentDirectory {
  private static final String COORDINATOR_PREFIX = "TrainingCoordinator|";
  private static final String MODEL_PREFIX = "ModelVersion|";
  private final JournalSettings settings;
  private final Executor blocking;
  /** Entities never leave the journal, so a positive answer is cached for good. */
  private final java.util.Set<String> known = java.util.concurrent.ConcurrentHashMap.newKeySet();

  public JournalDirectory(JournalSettings settings, Executor blocking) {
    this.settings = settings;
    this.blocking = blocking;
  }

  @Override
  public CompletionStage<List<String>> agentIds() {
    return idsOf(COORDINATOR_PREFIX);
  }

  @Override
  public CompletionStage<List<String>> modelAgentIds() {
    return idsOf(MODEL_PREFIX);
  }

  private CompletionStage<List<String>> idsOf(String prefix) {
    return CompletableFuture.supplyAsync(() -> {
      try (Connection c = JournalSchema.connect(settings);
          PreparedStatement ps = c.prepareStatement("SELECT persistence_id FROM event_journal "
              + "WHERE persistence_id LIKE ? AND sequence_number = 1 ORDER BY persistence_id")) {
        ps.setString(1, prefix + "%");
        List<String> ids = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) ids.add(rs.getString(1).substring(prefix.length()));
        }
        return ids;
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException("listing agents failed: " + e.getMessage(), e);
      }
    }, blocking);
  }

  @Override
  public CompletionStage<Boolean> exists(String persistenceId) {
    if (known.contains(persistenceId)) return CompletableFuture.completedFuture(true);
    return CompletableFuture.supplyAsync(() -> {
      try (Connection c = JournalSchema.connect(settings);
          PreparedStatement ps = c.prepareStatement(
              "SELECT 1 FROM event_journal WHERE persistence_id = ? AND sequence_number = 1")) {
        ps.setString(1, persistenceId);
        try (ResultSet rs = ps.executeQuery()) {
          boolean found = rs.next();
          if (found) known.add(persistenceId);
          return found;
        }
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException("journal lookup failed: " + e.getMessage(), e);
      }
    }, blocking);
  }
}
