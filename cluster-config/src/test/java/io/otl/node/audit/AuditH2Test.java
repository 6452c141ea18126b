package io.otl.node.audit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/** The audit on the embedded H2 journal; verify runs on a copy of the database file. */
class AuditH2Test extends AuditContract {
  @Override
  Config database() throws Exception {
    return TestDatabases.h2(Files.createTempDirectory("otl-audit-h2-"));
  }

  /** H2's online BACKUP writes a consistent copy of the file while the node runs; unzipped elsewhere. */
  @Override
  Config copyJournal(String name) throws Exception {
    Path dir = Files.createTempDirectory("otl-audit-h2-" + name + "-");
    Path zip = dir.resolve("backup.zip");
    JournalSettings original = io.otl.persistence.DataFolder.withStoredPassword(
        JournalSettings.fromConfig(journalTraining(db)));
    try (Connection c = JournalSchema.connect(original);
        Statement st = c.createStatement()) {
      st.execute("BACKUP TO '" + zip.toAbsolutePath() + "'");
    }
    try (InputStream in = Files.newInputStream(zip); ZipInputStream z = new ZipInputStream(in)) {
      for (ZipEntry e = z.getNextEntry(); e != null; e = z.getNextEntry()) {
        if (e.getName().endsWith(".mv.db")) Files.copy(z, dir.resolve("journal.mv.db"));
      }
    }
    // the copy keeps the original's generated password
    Path password = io.otl.persistence.DataFolder.of(original).orElseThrow().resolve("journal.password");
    if (Files.exists(password)) Files.copy(password, dir.resolve("journal.password"));
    // no AUTO_SERVER: only this JVM opens the copy
    String url = "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath() + ";DATABASE_TO_UPPER=false";
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", url));
  }
}
