package io.otl.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;

/**
 * Which journal a database holds: a cluster id drawn once, when the schema is first created, and the
 * schema version that created it. Every node of a cluster must read the same identity; a node pointed
 * at another database (an operator's typo, a stale environment variable) reads another id and is
 * refused by the cluster before it writes anything (io.otl.node.JournalIdentityCheck).
 *
 * @param clusterId the id of the journal, the same on every node that shares the database
 * @param schemaVersion the schema version recorded in the database
 */
public record JournalIdentity(UUID clusterId, int schemaVersion) {

  /**
   * The schema version this build creates and expects. Raise it only with a migration story
   * (docs/schema-evolution.md): nodes of different versions refuse to form one cluster.
   */
  public static final int SCHEMA_VERSION = 1;

  /** The table holds exactly one row (id = 1), so concurrent first starts cannot draw two ids. */
  static final String POSTGRES_DDL = """
      CREATE TABLE IF NOT EXISTS otl_journal_identity(
        id SMALLINT PRIMARY KEY CHECK (id = 1),
        cluster_id UUID NOT NULL,
        schema_version INTEGER NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)""";

  static final String H2_DDL = """
      CREATE TABLE IF NOT EXISTS "otl_journal_identity"(
        "id" SMALLINT PRIMARY KEY CHECK ("id" = 1),
        "cluster_id" UUID NOT NULL,
        "schema_version" INTEGER NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)""";

  /** The DDL of the identity table for {@code kind}, idempotent. */
  static List<String> ddl(JournalSettings.Kind kind) {
    return List.of(kind == JournalSettings.Kind.H2 ? H2_DDL : POSTGRES_DDL);
  }

  /**
   * Reads the identity, drawing it first when the table is empty (a new database, or a journal written
   * by a build before identities existed: its first start under this build names it). Runs inside the
   * caller's transaction, after the DDL, under JournalSchema's lock on PostgreSQL.
   */
  static JournalIdentity readOrCreate(Connection c, JournalSettings.Kind kind) throws SQLException {
    String table = kind == JournalSettings.Kind.H2 ? "\"otl_journal_identity\"" : "otl_journal_identity";
    String q = kind == JournalSettings.Kind.H2 ? "\"" : "";
    String select = "SELECT " + q + "cluster_id" + q + ", " + q + "schema_version" + q + " FROM " + table
        + " WHERE " + q + "id" + q + " = 1";
    JournalIdentity found = read(c, select);
    if (found != null) return found;
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + table + "(" + q + "id" + q + ", " + q
        + "cluster_id" + q + ", " + q + "schema_version" + q + ") VALUES (1, ?, ?)")) {
      insert.setObject(1, UUID.randomUUID());
      insert.setInt(2, SCHEMA_VERSION);
      insert.executeUpdate();
    }
    return read(c, select);
  }

  private static JournalIdentity read(Connection c, String select) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(select)) {
      if (!rs.next()) return null;
      return new JournalIdentity(UUID.fromString(rs.getString(1)), rs.getInt(2));
    }
  }
}
