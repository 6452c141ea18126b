package io.otl.persistence;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks, at start-up, that the tables the node found are the ones it reads and writes. The DDL is
 * {@code CREATE TABLE IF NOT EXISTS}: a table of the same name with another layout (Akka or Pekko
 * persistence-jdbc's legacy {@code snapshot(persistence_id, sequence_number, created, snapshot)}, a table
 * another tool made) was kept as it was, and the node started, answered {@code /health/ready} UP and
 * then failed every session with 503 while its log filled with {@code column "snapshot_ser_id" does not
 * exist} (operator trial t82). The same for a journal whose recorded schema version is not this build's.
 */
final class JournalLayout {
  private JournalLayout() {}

  /** The columns of each table this build reads and writes, as its DDL ({@link JournalSchema}) creates them. */
  static final Map<String, List<String>> COLUMNS = columns();

  private static Map<String, List<String>> columns() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    m.put("event_journal", List.of("ordering", "persistence_id", "sequence_number", "deleted", "writer",
        "write_timestamp", "adapter_manifest", "event_ser_id", "event_ser_manifest", "event_payload", "meta_ser_id",
        "meta_ser_manifest", "meta_payload"));
    m.put("event_tag", List.of("event_id", "tag"));
    m.put("snapshot", List.of("persistence_id", "sequence_number", "created", "snapshot_ser_id",
        "snapshot_ser_manifest", "snapshot_payload", "meta_ser_id", "meta_ser_manifest", "meta_payload"));
    m.put("durable_state", List.of("global_offset", "persistence_id", "revision", "state_payload", "state_serial_id",
        "state_serial_manifest", "tag", "state_timestamp"));
    m.put("otl_journal_identity", List.of("id", "cluster_id", "schema_version", "created_at"));
    m.put("otl_cluster_members", List.of("address", "incarnation", "last_seen"));
    return Map.copyOf(m);
  }

  /** The order the message names the tables in. */
  private static final List<String> ORDER = List.of("event_journal", "event_tag", "snapshot", "durable_state",
      "otl_journal_identity", "otl_cluster_members");

  /**
   * Fails when a table lacks a column this build uses. Runs after the DDL, in its transaction, so every
   * table exists; each is read as the node reads it (through the connection's search path).
   *
   * @throws IllegalStateException naming the table, its missing columns and what to do
   */
  static void check(Connection c, JournalSettings settings) throws SQLException {
    List<String> problems = new ArrayList<>();
    for (String table : ORDER) {
      Set<String> found = new TreeSet<>();
      String name = settings.kind() == JournalSettings.Kind.H2 ? "\"" + table + "\"" : table;
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + name + " WHERE 1 = 0")) {
        ResultSetMetaData md = rs.getMetaData();
        for (int i = 1; i <= md.getColumnCount(); i++) found.add(md.getColumnName(i).toLowerCase(Locale.ROOT));
      }
      List<String> missing = COLUMNS.get(table).stream().filter(col -> !found.contains(col)).toList();
      if (!missing.isEmpty()) {
        problems.add("table " + table + " has no column " + String.join(", ", missing) + " (it has " + String.join(", ", found) + ")");
      }
    }
    if (problems.isEmpty()) return;
    throw new IllegalStateException("the journal database " + settings.safeUrl() + " holds tables of another layout: "
        + String.join("; ", problems) + ". They were made by another tool or an older persistence plugin (Akka/Pekko "
        + "persistence-jdbc's legacy snapshot table has a column snapshot instead), and the node creates missing tables "
        + "but changes no existing one. Give the node a database or schema of its own (CREATE SCHEMA otl, then "
        + "OTL_DB_URL=…?currentSchema=otl), or move the old tables away (ALTER TABLE … RENAME TO …_old); nothing was "
        + "created or written");
  }

  /**
   * Fails when the journal was created by a build of another schema version: a newer build's tables
   * (after a downgrade), or an older version this build has no migration from.
   */
  static void checkVersion(JournalIdentity identity, JournalSettings settings) {
    int found = identity.schemaVersion();
    if (found == JournalIdentity.SCHEMA_VERSION) return;
    String which = found > JournalIdentity.SCHEMA_VERSION
        ? "a newer build's: run a build of schema version " + found + " or later on it (roll forward only), or point "
            + "this node at another database"
        : "an older one this build has no migration from: run the build that wrote it, or point this node at another "
            + "database";
    throw new IllegalStateException("the journal database " + settings.safeUrl() + " has schema version " + found
        + " (table otl_journal_identity) and this build reads schema version " + JournalIdentity.SCHEMA_VERSION
        + ". Its schema is " + which + " (docs/schema-evolution.md); nothing was written");
  }
}
