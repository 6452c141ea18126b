package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A quality score lies in [0, 1]; a {@code minQuality} outside it (a new-user trial: 1.5, -0.1) was
 * taken as given, so 1.5 exported nothing with "3 below-min-quality" and -0.1 everything, as if the
 * filter had worked. Now it is refused naming the field and its range over HTTP (400), as the command
 * line's configuration check already did (exit 2), and nothing is exported either way.
 */
class ExportMinQualityRangeTest {
  private static final List<String> BAD = List.of("1.5", "-0.1", "NaN", "abc", "1e999");

  @Test
  void aMinQualityOutsideZeroToOneIsRefusedAndNothingIsExported() throws Exception {
    ToolsJournal journal = ToolsJournal.create("export-min-quality");
    Path out = journal.out();
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(journal.db(), true))) {
      FeedTestSupport.completedSessions(node.dataCollector(), "mq", "agent-q", 3);
      HttpClient http = HttpClient.newHttpClient();
      for (String bad : BAD) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort()
            + "/v1/exports/agent-q?format=rl&minQuality=" + URLEncoder.encode(bad, StandardCharsets.UTF_8)))
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, r.statusCode(), bad + ": " + r.body());
        assertTrue(r.body().contains("minQuality must be a number in [0, 1]"), bad + ": " + r.body());
      }
      HttpResponse<String> edge = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort()
          + "/v1/exports/agent-q?format=rl&minQuality=0")).POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, edge.statusCode(), "0 is in range: " + edge.body());
    }
    for (String bad : BAD) {
      String value = bad.equals("abc") || bad.equals("NaN") ? "\"" + bad + "\"" : bad;
      Path config = journal.config("mq-" + BAD.indexOf(bad) + ".conf", "training-runner.min-quality = " + value);
      ToolRun r = ToolRun.export("--agent", "agent-q", "--format", "rl", "--out", out.toString(), "--name",
          "mq-" + BAD.indexOf(bad), "--config", config.toString());
      assertEquals(2, r.code(), bad + ": " + r.out() + r.err());
      assertTrue(r.err().contains("training-runner.min-quality") && r.err().contains("must be a number in [0, 1]"),
          bad + ": " + r.err());
      assertFalse(Files.exists(out.resolve("mq-" + BAD.indexOf(bad) + ".jsonl")), bad);
    }
  }
}
