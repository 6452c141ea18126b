package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The embedded journal's folder (issue #14 item 2): one owner, private files, a real password. */
class DataFolderTest {

  private static Path newDir() throws Exception {
    Path target = Path.of("target").toAbsolutePath();
    Files.createDirectories(target);
    return Files.createTempDirectory(target, "data-folder-").resolve("data");
  }

  private static JournalSettings h2(Path dir) {
    return new JournalSettings(JournalSettings.Kind.H2,
        "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0", "sa", "", 2);
  }

  @Test
  void theDefaultUrlOpensNoServer() {
    assertFalse(JournalSettings.DEFAULT_H2_URL.contains("AUTO_SERVER"), JournalSettings.DEFAULT_H2_URL);
    assertTrue(JournalSettings.DEFAULT_H2_URL.contains("WRITE_DELAY=0"), JournalSettings.DEFAULT_H2_URL);
  }

  @Test
  void aNewFolderIsPrivateAndTheDatabaseGetsAGeneratedPassword() throws Exception {
    Path dir = newDir();
    JournalSettings s = h2(dir);
    String password;
    try (DataFolder f = DataFolder.claim(s, "node").orElseThrow()) {
      password = f.journal().password();
      assertTrue(password.length() >= 20, "a generated password");
      JournalSchema.ensure(f.journal());
      f.tighten();
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
      for (String name : List.of("journal.mv.db", "journal.password", DataFolder.LOCK)) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(name))), name);
      }
      assertEquals(password, Files.readString(dir.resolve("journal.password")).strip());
    }
    SQLException refused = assertThrows(SQLException.class, () -> DriverManager.getConnection(s.url(), "sa", "").close());
    assertEquals("28000", refused.getSQLState(), "the empty password no longer opens the journal");
    try (DataFolder again = DataFolder.claim(s, "node").orElseThrow()) {
      assertEquals(password, again.journal().password(), "reused on the next start");
      JournalSchema.connect(again.journal()).close();
    }
  }

  @Test
  void aJournalCreatedWithTheEmptyPasswordIsMigratedOnceAndKeepsItsData() throws Exception {
    Path dir = newDir();
    Files.createDirectories(dir);
    JournalSettings s = h2(dir);
    try (Connection c = DriverManager.getConnection(s.url(), "sa", ""); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE kept(v INT)");
      st.execute("INSERT INTO kept VALUES (42)");
    }
    String password;
    try (DataFolder f = DataFolder.claim(s, "node").orElseThrow()) {
      password = f.journal().password();
      assertFalse(password.isEmpty());
      try (Connection c = JournalSchema.connect(f.journal()); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT v FROM kept")) {
        assertTrue(rs.next());
        assertEquals(42, rs.getInt(1));
      }
    }
    assertThrows(SQLException.class, () -> DriverManager.getConnection(s.url(), "sa", "").close());
    try (DataFolder f = DataFolder.claim(s, "node").orElseThrow()) {
      assertEquals(password, f.journal().password());
      JournalSchema.connect(f.journal()).close();
    }
  }

  @Test
  void aSecondClaimInTheSameProcessNamesTheFolderAndThePid() throws Exception {
    Path dir = newDir();
    try (DataFolder first = DataFolder.claim(h2(dir), "node").orElseThrow()) {
      DataFolder.InUse e = assertThrows(DataFolder.InUse.class, () -> DataFolder.claim(h2(dir), "node"));
      assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("pid " + ProcessHandle.current().pid()), e.getMessage());
      // says how to give the process a folder of its own, not only which key (trial t89)
      assertTrue(e.getMessage().contains("env OTL_DB_URL") && e.getMessage().contains("jdbc:h2:file:./data-2/journal"),
          e.getMessage());
    }
    DataFolder.claim(h2(dir), "node").orElseThrow().close(); // released on close
  }

  @Test
  void aNodeInAnotherProcessHoldsTheFolderUntilItDies() throws Exception {
    Path dir = newDir();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process other = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        HoldDataFolder.class.getName(), h2(dir).url()).redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("held ")) {
        // the child's logging, if any
      }
      assertTrue(line != null, "the other process claimed the folder");
      DataFolder.InUse e = assertThrows(DataFolder.InUse.class, () -> DataFolder.claim(h2(dir), "node"));
      assertTrue(e.getMessage().contains(dir.toString()) && e.getMessage().contains("pid " + other.pid()),
          e.getMessage());
      assertEquals(String.valueOf(other.pid()), e.pid());
      assertTrue(DataFolder.holder(h2(dir)).isPresent());
    } finally {
      other.destroyForcibly();
      other.waitFor(30, TimeUnit.SECONDS);
    }
    // killed, not stopped: the OS released its lock
    DataFolder.claim(h2(dir), "node").orElseThrow().close();
  }

  @Test
  void aReadOnlyFolderIsRefusedWithItsNameAndPermission() throws Exception {
    Path dir = newDir();
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-x------"));
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> DataFolder.claim(h2(dir), "node"));
      assertTrue(e.getMessage().contains(dir.toString()) && e.getMessage().contains("read-only")
          && e.getMessage().contains("r-x------"), e.getMessage());
      assertFalse(Files.exists(dir.resolve(DataFolder.LOCK)), "nothing written");
    } finally {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    }
  }

  @Test
  void postgresHasNoFolder() {
    JournalSettings pg = new JournalSettings(JournalSettings.Kind.POSTGRES, JournalSettings.DEFAULT_PG_URL, "postgres", "", 2);
    assertTrue(DataFolder.claim(pg, "node").isEmpty());
  }
}
