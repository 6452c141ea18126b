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
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rewards are clipped to [-1, 1] (design §3.1.1). Trial t43: {@code sftMinReward=2} (or a rating of 4
 * of 5 taken for a reward, 4) answered 422 "113 below-sft-min-reward" as if the data were missing, and
 * {@code dpoMinMargin=5} "33 below-dpo-min-margin"; the same values in the node's file made every SFT
 * or DPO job fail its pre-flight on an empty dataset. Now the route refuses them with 400 naming the
 * field and the range, as the command line's configuration check does (exit 2), and nothing is exported.
 * A threshold below -1 selects everything, as -1 does, and stays accepted.
 */
class ExportRewardFilterRangeTest {
  private static final Map<String, String> BAD = Map.of(
      "sftMinReward=2", "sftMinReward must be a number <= 1",
      "sftMinReward=abc", "sftMinReward must be a number <= 1",
      "dpoMinMargin=5", "dpoMinMargin must be a number in (0, 2]",
      "dpoMinMargin=0", "dpoMinMargin must be a number in (0, 2]");

  @Test
  void rewardFiltersOutsideTheRewardRangeAreRefusedAndNothingIsExported() throws Exception {
    ToolsJournal journal = ToolsJournal.create("export-reward-range");
    Path out = journal.out();
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(journal.db(), true))) {
      FeedTestSupport.completedSessions(node.dataCollector(), "rr", "agent-r", 3);
      HttpClient http = HttpClient.newHttpClient();
      for (Map.Entry<String, String> bad : BAD.entrySet()) {
        HttpResponse<String> r = post(http, node, "format=dpo&" + bad.getKey());
        assertEquals(400, r.statusCode(), bad.getKey() + ": " + r.body());
        assertTrue(r.body().contains(bad.getValue()), bad.getKey() + ": " + r.body());
      }
      assertEquals(200, post(http, node, "format=rl&sftMinReward=-1").statusCode(), "-1 is a reward");
      // Below -1 every trajectory passes, as at -1: "no filter" written as -1e9 stays valid.
      assertEquals(200, post(http, node, "format=sft&sftMinReward=-1e9").statusCode(), "-1e9 selects everything");
    }
    Map<String, String> files = Map.of("training-runner.sft-min-reward = 4", "must be a number <= 1",
        "training-runner.dpo-min-margin = 2.5", "must be a number in (0, 2]");
    int i = 0;
    for (Map.Entry<String, String> bad : files.entrySet()) {
      Path config = journal.config("rr-" + i + ".conf", bad.getKey());
      ToolRun r = ToolRun.export("--agent", "agent-r", "--format", "sft", "--out", out.toString(), "--name",
          "rr-" + i, "--config", config.toString());
      assertEquals(2, r.code(), bad.getKey() + ": " + r.out() + r.err());
      String key = bad.getKey().substring(0, bad.getKey().indexOf(' '));
      assertTrue(r.err().contains(key) && r.err().contains(bad.getValue()), bad.getKey() + ": " + r.err());
      assertFalse(Files.exists(out.resolve("rr-" + i + ".jsonl")), bad.getKey());
      i++;
    }
  }

  private static HttpResponse<String> post(HttpClient http, TrainingNode node, String query) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort()
        + "/v1/exports/agent-r?" + query)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
