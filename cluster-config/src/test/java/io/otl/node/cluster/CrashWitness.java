package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What the kill -9 tests share: the journal read directly from PostgreSQL (so that looking cannot
 * wake an entity, as a request would) and a wait that fails at once when the node JVM died.
 */
final class CrashWitness {
  private CrashWitness() {}

  /**
   * The event manifests stored under {@code persistenceId} (e.g. {@code AgentSession|s-1}), in
   * order: the journal row's logical type name, such as {@code session.task-result-recorded#1}.
   */
  static List<String> manifests(String url, String persistenceId) {
    try (Connection c = DriverManager.getConnection(url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
        PreparedStatement st = c.prepareStatement(
            "SELECT event_ser_manifest FROM event_journal WHERE persistence_id = ? ORDER BY sequence_number")) {
      st.setString(1, persistenceId);
      List<String> out = new ArrayList<>();
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) out.add(rs.getString(1));
      }
      if (out.isEmpty()) throw new AssertionError("no journal row for " + persistenceId + " in " + url);
      return out;
    } catch (SQLException e) {
      throw new AssertionError("cannot read the journal at " + url + ": " + e.getMessage(), e);
    }
  }

  /** How many of {@code persistenceId}'s events have a manifest starting with {@code prefix}. */
  static long count(String url, String persistenceId, String prefix) {
    return manifests(url, persistenceId).stream().filter(m -> m.startsWith(prefix)).count();
  }

  /** True once the node answers ready (false while it is not listening yet). */
  static boolean ready(Http http) {
    try {
      return http.get("/health/ready").status() == 200;
    } catch (AssertionError notListeningYet) {
      return false;
    }
  }

  /** The bound is a hang guard (the node died or never got there), not a measurement. */
  static void await(String what, BooleanSupplier condition, NodeProcess node) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (!condition.getAsBoolean()) {
      if (!node.alive()) fail(node.name + " exited while waiting for " + what + "\n" + node.tail(60));
      if (System.nanoTime() > end) fail("never: " + what + "\n" + node.tail(60));
      Thread.sleep(250);
    }
  }
}
