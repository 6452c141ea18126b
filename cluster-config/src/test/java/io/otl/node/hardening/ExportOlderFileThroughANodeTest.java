package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An export of a name that gives no file (nothing selected: exit 3; PII found: exit 1) leaves no
 * older file of that name either (docs/datasets.md "An export that selects nothing"), through the
 * node that holds the embedded journal as from the journal itself. Through the node (trial t73) the
 * last run's file and manifest stayed beside "error: nothing to export, no file written", and a
 * script reading {@code <name>.jsonl} after the command trained on the previous window's rows.
 */
class ExportOlderFileThroughANodeTest {

  @Test
  void anExportThatGivesNoFileRemovesTheOlderFileOfItsNameThroughTheNodeAsOffline() throws Exception {
    ToolsJournal journal = ToolsJournal.create("export-older");
    Config db = journal.db();
    Path config = journal.config("node.conf", "data-collector.desensitize.enabled = false"); // as the node ran
    Path out = journal.out();
    Config unredacted = ConfigFactory.parseString("agentscope.training.data-collector.desensitize.enabled = false")
        .withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(unredacted)) {
      FeedTestSupport.session(node.dataCollector(), "o-1", "agent-o", "hello", "hi", true)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);

      assertGoneAfterAnEmptyExport(out, "live", config, true);
      assertNoFileWithoutItsManifest(out, "live-nm", config);

      FeedTestSupport.session(node.dataCollector(), "o-2", "agent-o", "mail me: dave@example.org", "ok", true)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertGoneAfterAPiiFinding(out, "live-pii", config, true);
    }
    assertGoneAfterAnEmptyExport(out, "offline", config, false);
    assertNoFileWithoutItsManifest(out, "offline-nm", config);
    assertGoneAfterAPiiFinding(out, "offline-pii", config, false);
  }

  private static void assertGoneAfterAnEmptyExport(Path out, String name, Path config, boolean viaNode) {
    // --allow-pii: offline this runs after the session with an e-mail address was recorded.
    ToolRun first = ToolRun.export("--agent", "agent-o", "--format", "rl", "--out", out.toString(), "--name", name,
        "--allow-pii", "--config", config.toString());
    assertEquals(0, first.code(), first.out() + first.err());
    assertEquals(viaNode, first.out().contains("via node"), first.out());
    assertTrue(Files.exists(out.resolve(name + ".jsonl")) && Files.exists(out.resolve(name + ".manifest.json")));

    ToolRun empty = ToolRun.export("--agent", "agent-o", "--format", "rl", "--since", "2999-01-01", "--out",
        out.toString(), "--name", name, "--config", config.toString());
    assertEquals(3, empty.code(), empty.out() + empty.err());
    assertTrue(empty.err().contains("nothing to export, no file written: 0 seen: the journal has no session of agent"
        + " agent-o completed at or after 2999-01-01T00:00:00Z"), empty.err());
    assertFalse(Files.exists(out.resolve(name + ".jsonl")), name + ": the older file was left");
    assertFalse(Files.exists(out.resolve(name + ".manifest.json")), name + ": the older manifest was left");
  }

  /**
   * The manifest cannot be written (here a folder holds its name; a full disk does the same): the
   * export fails and leaves no data file, which stayed without the ids, count and SHA-256 that make it
   * an export, both ways (and a {@code .manifest.json.tmp} offline).
   */
  private static void assertNoFileWithoutItsManifest(Path out, String name, Path config) throws Exception {
    Files.createDirectories(out.resolve(name + ".manifest.json"));
    ToolRun r = ToolRun.export("--agent", "agent-o", "--format", "rl", "--out", out.toString(), "--name", name,
        "--allow-pii", "--config", config.toString());
    assertEquals(1, r.code(), r.out() + r.err());
    assertTrue(r.err().contains(name + ".manifest.json"), r.err());
    assertFalse(Files.exists(out.resolve(name + ".jsonl")), name + ": a data file without its manifest was left");
    assertFalse(Files.exists(out.resolve(name + ".manifest.json.tmp")), name + ": the manifest's temporary file was left");

    // An older export of the name, then a manifest that cannot be written (its temporary file blocked):
    // the older manifest described the data file just replaced, and must go with it (review t75).
    String again = name + "-again";
    ToolRun older = ToolRun.export("--agent", "agent-o", "--format", "rl", "--out", out.toString(), "--name", again,
        "--allow-pii", "--config", config.toString());
    assertEquals(0, older.code(), older.out() + older.err());
    Files.createDirectories(out.resolve(again + ".manifest.json.tmp").resolve("blocker"));
    ToolRun failed = ToolRun.export("--agent", "agent-o", "--format", "rl", "--out", out.toString(), "--name", again,
        "--allow-pii", "--config", config.toString());
    assertEquals(1, failed.code(), failed.out() + failed.err());
    assertFalse(Files.exists(out.resolve(again + ".jsonl")), again + ": a data file without its manifest was left");
    assertFalse(Files.exists(out.resolve(again + ".manifest.json")), again + ": the older manifest was left");
  }

  private static void assertGoneAfterAPiiFinding(Path out, String name, Path config, boolean viaNode) {
    ToolRun kept = ToolRun.export("--agent", "agent-o", "--format", "sft", "--out", out.toString(), "--name", name,
        "--allow-pii", "--config", config.toString());
    assertEquals(0, kept.code(), kept.out() + kept.err());
    assertEquals(viaNode, kept.out().contains("via node"), kept.out());
    assertTrue(Files.exists(out.resolve(name + ".jsonl")));

    ToolRun refused = ToolRun.export("--agent", "agent-o", "--format", "sft", "--out", out.toString(), "--name", name,
        "--config", config.toString());
    assertEquals(1, refused.code(), refused.out() + refused.err());
    assertTrue(refused.err().contains("email: 1 line"), refused.err());
    assertFalse(refused.err().contains("dave@"), refused.err());
    // "PII found: exit 1 and no file": the file written with --allow-pii before is no file of this run.
    assertFalse(Files.exists(out.resolve(name + ".jsonl")), name + ": the older file with PII was left");
  }
}
