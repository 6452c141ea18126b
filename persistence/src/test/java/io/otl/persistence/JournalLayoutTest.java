package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Operator trial t82: a PostgreSQL database that already held Akka/Pekko persistence-jdbc's legacy
 * {@code snapshot} table started a node that answered /health/ready UP and every session 503, its log
 * full of {@code column "snapshot_ser_id" does not exist}; a journal of another schema version started
 * as if it were this build's. Both now stop start-up naming the table or version and the fix.
 */
class JournalLayoutTest {
  private static final String PG_URL = env("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String PG_USER = env("OTL_TEST_PG_USER", "postgres");
  private static final String PG_PASSWORD = env("OTL_TEST_PG_PASSWORD", "");
  /** Akka persistence-jdbc 3.x / Pekko's legacy layout of the snapshot table. */
  private static final String LEGACY_SNAPSHOT = "CREATE TABLE snapshot (persistence_id VARCHAR(255) NOT NULL, "
      + "sequence_number BIGINT NOT NULL, created BIGINT NOT NULL, snapshot BYTEA NOT NULL, "
      + "PRIMARY KEY (persistence_id, sequence_number))";

  @Test
  void aLegacySnapshotTableOnPostgresStopsStartUpNamingItAndCreatesNothing() throws Exception {
    JournalSettings s = freshPostgresSchema();
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute(LEGACY_SNAPSHOT);
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> JournalSchema.ensure(s));
    String m = e.getMessage();
    assertTrue(m.contains("table snapshot has no column snapshot_ser_id, snapshot_ser_manifest, snapshot_payload"), m);
    assertTrue(m.contains("currentSchema=") && m.contains("RENAME"), "says what to do: " + m);
    assertFalse(m.contains("\n"), "one line: " + m);
    assertFalse(m.contains("event_journal has"), "the tables it created itself are not named: " + m);
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_schema = '"
            + schemaOf(s) + "'")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "only the old table is there: the refused start created nothing");
    }
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute("ALTER TABLE snapshot RENAME TO snapshot_old"); // the fix the message names
    }
    assertEquals(JournalIdentity.SCHEMA_VERSION, JournalSchema.ensure(s).schemaVersion());
  }

  @Test
  void aLegacySnapshotTableOnH2IsNamedToo() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "layout-");
    JournalSettings s = new JournalSettings(JournalSettings.Kind.H2,
        "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0", "sa", "", 2);
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE \"snapshot\" (\"persistence_id\" VARCHAR(255) NOT NULL, \"sequence_number\" BIGINT NOT NULL,"
          + " \"created\" BIGINT NOT NULL, \"snapshot\" VARBINARY NOT NULL, PRIMARY KEY (\"persistence_id\", \"sequence_number\"))");
    }
    String m = assertThrows(IllegalStateException.class, () -> JournalSchema.ensure(s)).getMessage();
    assertTrue(m.contains("table snapshot has no column snapshot_ser_id"), m);
  }

  @Test
  void aJournalOfAnotherSchemaVersionStopsStartUp() throws Exception {
    JournalSettings s = freshPostgresSchema();
    JournalSchema.ensure(s);
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute("UPDATE otl_journal_identity SET schema_version = " + (JournalIdentity.SCHEMA_VERSION + 1));
    }
    String newer = assertThrows(IllegalStateException.class, () -> JournalSchema.ensure(s)).getMessage();
    assertTrue(newer.contains("has schema version " + (JournalIdentity.SCHEMA_VERSION + 1))
        && newer.contains("this build reads schema version " + JournalIdentity.SCHEMA_VERSION)
        && newer.contains("a newer build's"), newer);
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute("UPDATE otl_journal_identity SET schema_version = 0");
    }
    String older = assertThrows(IllegalStateException.class, () -> JournalSchema.ensure(s)).getMessage();
    assertTrue(older.contains("has schema version 0") && older.contains("no migration"), older);
  }

  /**
   * A user with table privileges only (a DBA made the tables): PostgreSQL's "permission denied for schema
   * public" came on two lines with "Position: 28" and nothing of what the node needs.
   */
  @Test
  void aUserWhoMayNotCreateTablesIsToldWhatToGrant() throws Exception {
    JournalSettings owner = freshPostgresSchema();
    JournalSchema.ensure(owner);
    String schema = schemaOf(owner);
    String role = "otl_test_user_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    try (Connection c = JournalSchema.connect(owner); Statement st = c.createStatement()) {
      st.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'pw'");
      st.execute("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
      st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + role);
    }
    try {
      JournalSettings user = new JournalSettings(JournalSettings.Kind.POSTGRES, owner.url(), role, "pw", 2);
      String m = assertThrows(IllegalStateException.class, () -> JournalSchema.ensure(user)).getMessage();
      assertTrue(m.contains("the database user '" + role + "' may not create or index the journal's tables"), m);
      assertTrue(m.contains("GRANT CREATE ON SCHEMA " + schema + " TO " + role) && m.contains("OWNER TO " + role), m);
      assertFalse(m.contains("\n") || m.contains("Position"), "one line: " + m);
    } finally {
      try (Connection c = JournalSchema.connect(owner); Statement st = c.createStatement()) {
        st.execute("DROP OWNED BY " + role);
        st.execute("DROP ROLE " + role);
      }
    }
  }

  private static String schemaOf(JournalSettings s) {
    return s.url().replaceAll(".*currentSchema=([^&]*).*", "$1");
  }

  private static JournalSettings freshPostgresSchema() {
    String schema = "otl_test_layout_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      if (System.getenv("OTL_REQUIRE_PG") != null) throw new AssertionError("PostgreSQL unreachable at " + PG_URL, e);
      Assumptions.abort("PostgreSQL is not reachable at " + PG_URL + ": " + e.getMessage());
    }
    return new JournalSettings(JournalSettings.Kind.POSTGRES, PG_URL + "?currentSchema=" + schema, PG_USER,
        PG_PASSWORD, 2);
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
