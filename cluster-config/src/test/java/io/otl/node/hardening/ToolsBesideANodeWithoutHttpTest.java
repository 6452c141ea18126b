package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code export} and {@code audit} beside a node that holds the embedded journal's folder but has no
 * HTTP API to go through: one still starting (it publishes node.json once its port is open, trial t73
 * met it seconds after {@code java -jar otl-node.jar &}) or one embedded without HTTP (this test). The
 * command said "stop it first, or give this process its own folder", though running it again once the
 * node answers goes through the node: it now says so, in one line, exit 1, nothing written.
 */
class ToolsBesideANodeWithoutHttpTest {

  @Test
  void theCommandsSayToRunAgainOnceTheNodeAnswersOrToStopIt() throws Exception {
    ToolsJournal journal = ToolsJournal.create("no-http");
    Path config = journal.config("node.conf");
    Path out = journal.out();
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(journal.db(), false))) {
      String says = " is in use by another node with pid " + ProcessHandle.current().pid() + ", which has no HTTP API"
          + " to go through yet (a node opens it a few seconds into its start; one embedded without HTTP never does):"
          + " run the command again once the node answers, or stop it first";
      ToolRun export = ToolRun.export("--agent", "a", "--format", "sft", "--out", out.toString(), "--config",
          config.toString());
      assertEquals(1, export.code(), export.out() + export.err());
      assertTrue(export.err().startsWith("error: the data folder ") && export.err().contains(says), export.err());
      assertEquals(1, export.err().strip().lines().count(), export.err());
      assertFalse(Files.exists(out), "nothing written");

      ToolRun audit = ToolRun.audit("session", "s-1", "--config", config.toString());
      assertEquals(1, audit.code(), audit.out() + audit.err());
      assertTrue(audit.err().contains(says), audit.err());
      assertEquals("", audit.out());
      // verify needs the folder to itself whatever the node publishes: its own advice stays.
      ToolRun verify = ToolRun.audit("verify", "--config", config.toString());
      assertEquals(1, verify.code(), verify.err());
      assertTrue(verify.err().contains("needs it to itself: stop that node first"), verify.err());
    }
  }
}
