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
 * A journal holding PII (desensitization was off when it was written): {@code export} fails with the
 * counts and leaves no file, through the running node and from the file, unless {@code --allow-pii}; read
 * with desensitizing on, its lines are desensitized as they are written.
 */
class ExportPiiCommandTest {

  @Test
  void aPiiFindingFailsTheExportUnlessAllowed() throws Exception {
    ToolsJournal journal = ToolsJournal.create("export-pii");
    Config db = journal.db();
    // the node's own file says what it ran with: the tools read the journal with the node's rules
    Path config = journal.config("node.conf", "data-collector.desensitize.enabled = false");
    Path out = journal.out();
    Config unredacted = ConfigFactory.parseString("agentscope.training.data-collector.desensitize.enabled = false")
        .withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(unredacted)) {
      FeedTestSupport.session(node.dataCollector(), "p-1", "agent-q", "mail me: carol@example.org", "ok", true)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      FeedTestSupport.session(node.dataCollector(), "p-2", "agent-q", "hello", "hi", true)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);

      ToolRun viaNode = ToolRun.export("--agent", "agent-q", "--format", "sft", "--out", out.toString(),
          "--name", "live",
          "--config", config.toString());
      assertEquals(1, viaNode.code(), viaNode.out() + viaNode.err());
      assertTrue(viaNode.err().contains("email: 1 line") && viaNode.err().contains("--allow-pii"), viaNode.err());
      assertFalse(viaNode.err().contains("carol"), viaNode.err());
      assertFalse(Files.exists(out.resolve("live.jsonl")), "no file left");
      assertFalse(Files.exists(out.resolve(".live.jsonl.tmp")));
    }
    ToolRun offline = ToolRun.export("--agent", "agent-q", "--format", "sft", "--out", out.toString(),
        "--name", "offline",
        "--config", config.toString());
    assertEquals(1, offline.code(), offline.out() + offline.err());
    assertTrue(offline.err().contains("email: 1 line"), offline.err());
    assertFalse(Files.exists(out.resolve("offline.jsonl")), "no file left");

    ToolRun allowed = ToolRun.export("--agent", "agent-q", "--format", "sft", "--out", out.toString(),
        "--name", "allowed",
        "--allow-pii", "--config", config.toString());
    assertEquals(0, allowed.code(), allowed.err());
    assertTrue(allowed.out().contains("PII found (kept: --allow-pii): email: 1 line"), allowed.out());
    assertEquals(2, Files.readAllLines(out.resolve("allowed.jsonl")).size());

    // The same journal read with desensitizing on (what was stored raw before a rule existed, trial t165):
    // its lines are desensitized by these rules as they are written, and nothing is left to refuse.
    Path upgraded = journal.config("upgraded.conf");
    ToolRun desensitized = ToolRun.export("--agent", "agent-q", "--format", "sft", "--out", out.toString(),
        "--name", "upgraded", "--config", upgraded.toString());
    assertEquals(0, desensitized.code(), desensitized.out() + desensitized.err());
    String file = Files.readString(out.resolve("upgraded.jsonl"));
    assertTrue(file.contains("mail me: [EMAIL]") && !file.contains("carol"), file);
    // and says so: the file differs from what the journal (audit, GET /v1/sessions) shows (trial t167)
    assertTrue(desensitized.out().contains("desensitized: 1 line(s) as written, stored raw under an earlier build's rules"),
        desensitized.out());
    assertTrue(Files.readString(out.resolve("upgraded.manifest.json")).contains("\"desensitizedAsWritten\" : 1"),
        Files.readString(out.resolve("upgraded.manifest.json")));
  }
}
