package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code export --config F} selects by F's filters (design §6: sft-min-reward, min-quality,
 * dpo-min-margin) whether it reads the journal itself or goes through the node that holds it. Through a
 * running node the filters of F were dropped and the node's used: a stricter file silently gave the
 * same rows as none, a looser one fewer, and the same command gave other bytes once the node stopped.
 * Also: an {@code --out} that is a file is named as the problem both ways; the message was only the
 * path ("the export through the node failed: out.txt").
 */
class ExportFiltersThroughANodeTest {

  @Test
  void theConfigFilesFiltersApplyThroughARunningNodeAsOffline() throws Exception {
    ToolsJournal journal = ToolsJournal.create("export-filters");
    Config db = journal.db();
    // Sessions of FeedTestSupport have quality 0.8 (no explicit feedback); rewards +1 (SUCCESS) or -1 (FAILURE).
    Path strict = journal.config("strict.conf", "training-runner.min-quality = 0.9");
    Path loose = journal.config("loose.conf", "training-runner.sft-min-reward = -1.0");
    Path plain = journal.config("plain.conf");
    Path out = journal.out();

    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
      FeedTestSupport.completedSessions(node.dataCollector(), "filt", "agent-x", 3); // filt-1 failed

      ToolRun strictRl = ToolRun.export("--agent", "agent-x", "--format", "rl", "--out", out.toString(), "--name",
          "strict-live", "--config", strict.toString());
      assertEquals(3, strictRl.code(), "min-quality 0.9 leaves nothing: " + strictRl.out() + strictRl.err());
      assertTrue(strictRl.err().contains("3 below-min-quality"), strictRl.err());
      assertFalse(Files.exists(out.resolve("strict-live.jsonl")));

      ToolRun looseSft = ToolRun.export("--agent", "agent-x", "--format", "sft", "--out", out.toString(), "--name",
          "loose-live", "--config", loose.toString());
      assertEquals(0, looseSft.code(), looseSft.err());
      assertTrue(looseSft.out().contains("via node"), looseSft.out());
      assertTrue(looseSft.out().contains("sessions: 3 seen: none excluded"), looseSft.out());
      assertEquals(3, Files.readAllLines(out.resolve("loose-live.jsonl")).size(), "sft-min-reward -1 keeps the failed one");

      ToolRun nodeDefaults = ToolRun.export("--agent", "agent-x", "--format", "sft", "--out", out.toString(), "--name",
          "plain-live", "--config", plain.toString());
      assertEquals(0, nodeDefaults.code(), nodeDefaults.err());
      assertEquals(2, Files.readAllLines(out.resolve("plain-live.jsonl")).size(), "default sft-min-reward 0.5");
      // What was left out and why, as the export without a node prints it (the line was missing here).
      assertTrue(nodeDefaults.out().contains("sessions: 3 seen: 1 below-sft-min-reward"), nodeDefaults.out());
      // It was "selected: 3 seen: …" beside "count: 2": read as three selected.
      assertFalse(nodeDefaults.out().contains("selected:"), nodeDefaults.out());

      Path notAFolder = Files.writeString(journal.folder().resolve("out.txt"), "a file");
      ToolRun fileAsOut = ToolRun.export("--agent", "agent-x", "--format", "rl", "--out", notAFolder.toString(),
          "--config", plain.toString());
      // A usage error (exit 2) naming it, before the node is asked (it was exit 1 after the export ran).
      assertEquals(2, fileAsOut.code(), fileAsOut.out() + fileAsOut.err());
      assertTrue(fileAsOut.err().contains(notAFolder + ": is a file, not a folder"), fileAsOut.err());

      HttpClient http = HttpClient.newHttpClient();
      // A filter misspelt or sent twice is refused by name, as on every route with query parameters.
      for (String bad : new String[] {"minQuality=high", "sftMinReward=NaN", "dpoMinMargin=0", "dpoMinMargin=1e999",
          "min_quality=0.9", "format=sft"}) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort()
            + "/v1/exports/agent-x?format=dpo&" + bad)).POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(400, r.statusCode(), bad + ": " + r.body());
        assertTrue(r.body().contains(bad.substring(0, bad.indexOf('='))), r.body());
      }
      // The selection is in the query: filters sent as a body were dropped, and the rows of other
      // filters came back with 200. A body with fields is refused, one that is not JSON too; {} passes.
      URI sft = URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/exports/agent-x?format=sft");
      HttpResponse<String> withFilters = http.send(HttpRequest.newBuilder(sft).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"minQuality\":0.9}")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(400, withFilters.statusCode(), withFilters.body());
      assertTrue(withFilters.body().contains("an export takes no body: its selection is in the query"), withFilters.body());
      HttpResponse<String> text = http.send(HttpRequest.newBuilder(sft).header("Content-Type", "text/plain")
          .POST(HttpRequest.BodyPublishers.ofString("minQuality=0.9")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(415, text.statusCode(), text.body());
      HttpResponse<String> empty = http.send(HttpRequest.newBuilder(sft).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, empty.statusCode(), empty.body());
      assertEquals(3, empty.body().strip().split("\n").length, "the manifest and the two rows of sft-min-reward 0.5");
    }

    ToolRun looseOffline = ToolRun.export("--agent", "agent-x", "--format", "sft", "--out", out.toString(), "--name",
        "loose-offline", "--config", loose.toString());
    assertEquals(0, looseOffline.code(), looseOffline.err());
    assertFalse(looseOffline.out().contains("via node"), looseOffline.out());
    assertTrue(looseOffline.out().contains("sessions: 3 seen: none excluded"), looseOffline.out());
    assertEquals(Files.readString(out.resolve("loose-live.jsonl")), Files.readString(out.resolve("loose-offline.jsonl")),
        "the same selection through the node and from the file");
    ToolRun strictOffline = ToolRun.export("--agent", "agent-x", "--format", "rl", "--out", out.toString(), "--name",
        "strict-offline", "--config", strict.toString());
    assertEquals(3, strictOffline.code(), strictOffline.out() + strictOffline.err());
    ToolRun fileAsOutOffline = ToolRun.export("--agent", "agent-x", "--format", "rl", "--out",
        journal.folder().resolve("out.txt").toString(), "--config", plain.toString());
    assertEquals(2, fileAsOutOffline.code(), fileAsOutOffline.out() + fileAsOutOffline.err());
    assertTrue(fileAsOutOffline.err().contains("out.txt: is a file, not a folder"), fileAsOutOffline.err());
  }
}
