package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.ToolRun;
import io.otl.persistence.DataFolder;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code audit verify} beside a node that holds the embedded journal's folder: it said "stop it first,
 * or give this process its own folder (agentscope.training.db.url)", and the second way verifies
 * another journal (found by the operator trial). It now says verify needs that journal to itself.
 */
class AuditVerifyBusyFolderTest {

  @Test
  void verifyOnAHeldEmbeddedJournalSaysToStopTheNodeAndNothingElse() throws Exception {
    Path dir = Files.createTempDirectory("otl-verify-busy-");
    String url = "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0";
    Path config = dir.resolve("node.conf");
    Files.writeString(config, "agentscope.training { persistence = h2, db.url = \"" + url + "\" }\n");
    JournalSettings journal = new JournalSettings(JournalSettings.Kind.H2, url, "sa", "", 2);
    try (DataFolder held = DataFolder.claim(journal, "node").orElseThrow()) {
      JournalSchema.ensure(DataFolder.withStoredPassword(journal)); // as the node holding it has done
      ToolRun r = ToolRun.audit("verify", "--config", config.toString());
      assertEquals(1, r.code(), r.err());
      assertTrue(r.err().startsWith("error: the data folder " + dir), r.err());
      assertTrue(r.err().contains("audit verify reads the embedded journal itself and needs it to itself: stop that node"),
          r.err());
      assertFalse(r.err().contains("its own folder"), r.err());
    }
  }
}
