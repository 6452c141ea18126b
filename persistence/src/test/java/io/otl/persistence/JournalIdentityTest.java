package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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

/** The journal's identity (issue #22 item 1): drawn once with the schema, the same on every later start. */
class JournalIdentityTest {
  private static final String PG_URL = env("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String PG_USER = env("OTL_TEST_PG_USER", "postgres");
  private static final String PG_PASSWORD = env("OTL_TEST_PG_PASSWORD", "");

  @Test
  void h2DrawsTheIdentityOnceAndEveryLaterStartReadsIt() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "identity-");
    JournalSettings s = new JournalSettings(JournalSettings.Kind.H2,
        "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0", "sa", "", 2);
    JournalIdentity first = JournalSchema.ensure(s);
    assertEquals(JournalIdentity.SCHEMA_VERSION, first.schemaVersion());
    assertEquals(first, JournalSchema.ensure(s), "a second start reads the same identity");
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM \"otl_journal_identity\"")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "one row");
    }
  }

  @Test
  void twoPostgresSchemasAreTwoJournalsAndEachKeepsItsIdentity() throws Exception {
    JournalSettings a = freshPostgresSchema();
    JournalSettings b = freshPostgresSchema();
    JournalIdentity idA = JournalSchema.ensure(a);
    JournalIdentity idB = JournalSchema.ensure(b);
    assertNotEquals(idA.clusterId(), idB.clusterId(), "two databases, two journals");
    assertEquals(idA, JournalSchema.ensure(a));
    assertEquals(idB, JournalSchema.ensure(b));
  }

  @Test
  void aJournalWrittenBeforeIdentitiesExistedIsNamedOnItsFirstStartAndKeepsThatName() throws Exception {
    JournalSettings s = freshPostgresSchema();
    JournalIdentity named = JournalSchema.ensure(s);
    try (Connection c = JournalSchema.connect(s); Statement st = c.createStatement()) {
      st.execute("DROP TABLE otl_journal_identity"); // as an earlier build left the database
    }
    JournalIdentity renamed = JournalSchema.ensure(s);
    assertNotEquals(named.clusterId(), renamed.clusterId());
    assertEquals(renamed, JournalSchema.ensure(s));
  }

  @Test
  void urlsInMessagesNeverCarryThePassword() {
    String url = JournalSettings.withoutPassword(
        "jdbc:postgresql://db:5432/otl?user=otl&password=hunter2&reWriteBatchedInserts=true");
    assertFalse(url.contains("hunter2"), url);
    assertTrue(url.contains("reWriteBatchedInserts=true") && url.contains("password=***"), url);
    assertFalse(JournalSettings.withoutPassword("jdbc:h2:file:./x;PASSWORD=hunter2;WRITE_DELAY=0").contains("hunter2"));
    assertFalse(JournalSettings.withoutPassword("jdbc:postgresql://otl:hunter2@db/otl").contains("hunter2"));
    // PostgreSQL's client-key password and other secret-named parameters went into the logs as written.
    String ssl = JournalSettings.withoutPassword("jdbc:postgresql://db/otl?sslmode=verify-full&sslpassword=hunter2"
        + "&sslkey=/k.pk8&ssl_password=hunter3&authToken=hunter4;CLIENT_SECRET=hunter5");
    assertEquals("jdbc:postgresql://db/otl?sslmode=verify-full&sslpassword=***&sslkey=/k.pk8&ssl_password=***"
        + "&authToken=***;CLIENT_SECRET=***", ssl);
    assertEquals("jdbc:postgresql://127.0.0.1:5432/test?currentSchema=a",
        JournalSettings.withoutPassword("jdbc:postgresql://127.0.0.1:5432/test?currentSchema=a"));
    JournalSettings s = new JournalSettings(JournalSettings.Kind.POSTGRES,
        "jdbc:postgresql://db/otl?password=hunter2", "otl", "hunter3", 2);
    assertFalse(s.toString().contains("hunter"), s.toString());
  }

  private static JournalSettings freshPostgresSchema() {
    String schema = "otl_identity_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
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
