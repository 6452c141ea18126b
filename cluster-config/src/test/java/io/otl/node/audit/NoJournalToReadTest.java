package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code audit} and {@code export} run where no node ever wrote a journal (another folder than the
 * node's, a database or schema the node never used). They created an empty H2 database, its password
 * file and lock in ./data, then failed with the first query's SQL ("Table "event_journal" not found
 * (this database is empty); SQL statement: SELECT …", on PostgreSQL "relation "event_journal" does not
 * exist"). Now they say there is no journal there and what to do, and create nothing.
 */
class NoJournalToReadTest {

  private static List<ToolRun> everyReadingCommand(Path config, Path out) {
    return List.of(
        ToolRun.audit("session", "s-1", "--config", config.toString()),
        ToolRun.audit("verify", "--config", config.toString()),
        ToolRun.export("--agent", "agent-a", "--format", "sft", "--out", out.toString(), "--config", config.toString()));
  }

  @Test
  void anEmbeddedJournalThatDoesNotExistIsNamedAndNotCreated(@TempDir Path dir) throws Exception {
    Config h2 = TestDatabases.h2(dir.resolve("data"));
    Path config = TestDatabases.toolsConfig(h2, dir.resolve("node.conf"));
    for (ToolRun r : everyReadingCommand(config, dir.resolve("out"))) {
      assertEquals(1, r.code(), r.err());
      assertTrue(r.err().startsWith("error: there is no journal at " + dir.resolve("data").resolve("journal.mv.db")
          + ": no node has run on it."), r.err());
      assertTrue(r.err().contains("--config") && r.err().contains("nothing was created"), r.err());
      assertFalse(r.err().contains("SQL"), r.err());
      assertFalse(Files.exists(dir.resolve("data")), "no database, password file or lock left: " + r.err());
    }
  }

  @Test
  void aPostgresSchemaWithoutTheJournalIsNamedAndLeftEmpty(@TempDir Path dir) throws Exception {
    Config pg = TestDatabases.postgres();
    String url = pg.getString("agentscope.training.db.url");
    Path config = Files.writeString(dir.resolve("node.conf"), "agentscope.training {\n  persistence = postgres\n"
        + "  db.url = \"" + url + "\"\n  db.user = \"" + TestDatabases.PG_USER + "\"\n  db.password = \""
        + TestDatabases.PG_PASSWORD + "\"\n}\n");
    for (ToolRun r : everyReadingCommand(config, dir.resolve("out"))) {
      assertEquals(1, r.code(), r.err());
      assertTrue(r.err().startsWith("error: there is no journal in jdbc:postgresql:"), r.err());
      assertTrue(r.err().contains("(no table event_journal): no node has run on it."), r.err());
      assertFalse(r.err().contains("relation") || r.err().contains("Position"), r.err());
      // The folder the command runs in plays no part for a database server (trial t73).
      assertFalse(r.err().contains("./data"), r.err());
      assertTrue(r.err().contains("OTL_DB_URL"), r.err());
    }
    String schema = url.substring(url.indexOf("currentSchema=") + "currentSchema=".length());
    try (Connection c = DriverManager.getConnection(url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_schema = '"
            + schema + "'")) {
      rs.next();
      assertEquals(0, rs.getInt(1), "the tools created no table");
    }
  }
}
