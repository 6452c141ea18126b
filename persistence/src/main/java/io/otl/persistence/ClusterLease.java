package io.otl.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * A liveness lease in the journal database: every Up member of a cluster writes its address and the
 * database's current time to {@code otl_cluster_members} about once a second. A restarting first seed
 * node reads it to learn whether a cluster over this journal is alive, and then must join that cluster
 * rather than form a second one (issue #22; io.otl.node.SeedLease).
 *
 * <p>Times are the database's ({@code CURRENT_TIMESTAMP}), both when written and when judged, so the
 * nodes' clocks never need to agree.
 */
public final class ClusterLease {
  private ClusterLease() {}

  static final String POSTGRES_DDL = """
      CREATE TABLE IF NOT EXISTS otl_cluster_members(
        address VARCHAR(255) PRIMARY KEY,
        incarnation BIGINT NOT NULL,
        last_seen TIMESTAMP WITH TIME ZONE NOT NULL)""";

  static final String H2_DDL = """
      CREATE TABLE IF NOT EXISTS "otl_cluster_members"(
        "address" VARCHAR(255) PRIMARY KEY,
        "incarnation" BIGINT NOT NULL,
        "last_seen" TIMESTAMP WITH TIME ZONE NOT NULL)""";

  /** The lease table's DDL for {@code kind}, idempotent (run by {@link JournalSchema#ensure}). */
  static List<String> ddl(JournalSettings.Kind kind) {
    return List.of(kind == JournalSettings.Kind.H2 ? H2_DDL : POSTGRES_DDL);
  }

  /** A member that heartbeated within the window, with how long ago (database time). */
  public record Alive(String address, long incarnation, Duration age) {}

  /**
   * Records that {@code address} (member incarnation {@code incarnation}) is Up now. An UPDATE, then an
   * INSERT the first time; a concurrent first insert of the same address is impossible (one node per
   * address), so no upsert syntax is needed and the SQL is the same on H2 and PostgreSQL.
   */
  public static void heartbeat(Connection c, JournalSettings.Kind kind, String address, long incarnation)
      throws SQLException {
    String q = q(kind);
    try (PreparedStatement up = c.prepareStatement("UPDATE " + table(kind) + " SET " + q + "incarnation" + q
        + " = ?, " + q + "last_seen" + q + " = CURRENT_TIMESTAMP WHERE " + q + "address" + q + " = ?")) {
      up.setLong(1, incarnation);
      up.setString(2, address);
      if (up.executeUpdate() > 0) return;
    }
    try (PreparedStatement in = c.prepareStatement("INSERT INTO " + table(kind) + "(" + q + "address" + q + ", "
        + q + "incarnation" + q + ", " + q + "last_seen" + q + ") VALUES (?, ?, CURRENT_TIMESTAMP)")) {
      in.setString(1, address);
      in.setLong(2, incarnation);
      in.executeUpdate();
    }
  }

  /** As {@link #heartbeat}, with an explicit time: for tests that need an old heartbeat. */
  public static void heartbeatAt(Connection c, JournalSettings.Kind kind, String address, long incarnation,
      OffsetDateTime at) throws SQLException {
    heartbeat(c, kind, address, incarnation);
    String q = q(kind);
    try (PreparedStatement up = c.prepareStatement("UPDATE " + table(kind) + " SET " + q + "last_seen" + q
        + " = ? WHERE " + q + "address" + q + " = ?")) {
      up.setObject(1, at);
      up.setString(2, address);
      up.executeUpdate();
    }
  }

  /** Removes {@code address}'s row if it still belongs to {@code incarnation}: a graceful leave. */
  public static void release(Connection c, JournalSettings.Kind kind, String address, long incarnation)
      throws SQLException {
    String q = q(kind);
    try (PreparedStatement del = c.prepareStatement("DELETE FROM " + table(kind) + " WHERE " + q + "address" + q
        + " = ? AND " + q + "incarnation" + q + " = ?")) {
      del.setString(1, address);
      del.setLong(2, incarnation);
      del.executeUpdate();
    }
  }

  /** Members other than {@code self} whose last heartbeat is at most {@code window} old, by database time. */
  public static List<Alive> othersAlive(Connection c, JournalSettings.Kind kind, String self, Duration window)
      throws SQLException {
    String q = q(kind);
    List<Alive> alive = new ArrayList<>();
    try (PreparedStatement st = c.prepareStatement("SELECT " + q + "address" + q + ", " + q + "incarnation" + q
        + ", " + q + "last_seen" + q + ", CURRENT_TIMESTAMP FROM " + table(kind) + " WHERE " + q + "address" + q
        + " <> ?")) {
      st.setString(1, self);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          Duration age = Duration.between(rs.getObject(3, OffsetDateTime.class), rs.getObject(4, OffsetDateTime.class));
          if (age.compareTo(window) <= 0) alive.add(new Alive(rs.getString(1), rs.getLong(2), age));
        }
      }
    }
    return alive;
  }

  private static String table(JournalSettings.Kind kind) {
    return kind == JournalSettings.Kind.H2 ? "\"otl_cluster_members\"" : "otl_cluster_members";
  }

  private static String q(JournalSettings.Kind kind) {
    return kind == JournalSettings.Kind.H2 ? "\"" : "";
  }
}
