package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.junit.jupiter.api.Test;

/**
 * design §6's selection rules on a real node (H2): sessions go in through the DataCollector, a
 * version is rolled back through the ModelVersion entity, and the export reads the journal with the
 * node's own settings (min-quality raised to 0.9 so that "no feedback" sessions, quality 0.8, fall
 * below it; sft-min-reward and dpo-min-margin at their defaults, 0.5).
 */
class DatasetRulesH2Test {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-r";

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  /** One session: a user question, an answer, then the given result and feedback. */
  private static CompletionStage<?> session(DataCollector dc, String id, String version, String taskId, String prompt,
      String answer, String result, String feedback) {
    List<SessionInput> in = new ArrayList<>(List.of(
        new SessionInput.Start("start", null, "1.0", version, taskId == null ? Map.of() : Map.of("taskId", taskId)),
        new SessionInput.Message("u1", null, "user", prompt, null, null),
        new SessionInput.Message("a1", null, "assistant", answer, "chatcmpl-" + id, 100L)));
    if (feedback != null) in.add(new SessionInput.Feedback("f1", null, feedback, null, "fb-" + id, "user"));
    if (result != null) in.add(new SessionInput.Result("res", null, result, "r"));
    return dc.record(id, AGENT, in);
  }

  private static Config node(Config db) {
    return ConfigFactory.parseString("agentscope.training.training-runner.min-quality = 0.9")
        .withFallback(TestDatabases.node(db, false));
  }

  private static void rollBack(TrainingNode node, String version) throws Exception {
    var ref = ClusterSharding.get(node.system()).entityRefFor(ModelVersion.ENTITY_TYPE_KEY, AGENT);
    Duration t = Duration.ofSeconds(30);
    // The agent's first version becomes STABLE at once; the second goes to canary and is rolled back.
    List<Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command>> steps = List.of(
        r -> new ModelVersion.RegisterManual("v1", "file:///models/v1", "http://127.0.0.1:9/v1", r),
        r -> new ModelVersion.RegisterManual(version, "file:///models/" + version, "http://127.0.0.1:9/v2", r),
        r -> new ModelVersion.Promote(version, r),
        r -> new ModelVersion.Rollback(version, "test", r));
    for (var step : steps) {
      ModelVersion.TransitionReply reply = get(ref.ask(step::apply, t));
      assertFalse(reply instanceof ModelVersion.Failure, String.valueOf(reply));
    }
  }

  @Test
  void sftDpoAndRlFollowRewardQualityTaskAndRollbackRulesAndCountEveryExclusion() throws Exception {
    Path dir = TestDatabases.outputDir("dataset-rules");
    try (TrainingNode node = TrainingNode.start(node(TestDatabases.h2(dir.resolve("db"))))) {
      DataCollector dc = node.dataCollector();
      rollBack(node, "v2");
      get(session(dc, "good", "v1", "T1", "Book a flight", "Booked.", "SUCCESS", "thumbs_up"));
      get(session(dc, "bad", "v1", "T1", "book  a FLIGHT please", "No.", "FAILURE", "thumbs_down"));
      get(session(dc, "meh", "v1", null, "What time is it?", "Noon.", "SUCCESS", null));
      get(session(dc, "rolled", "v2", "T3", "Cancel my order", "Done.", "SUCCESS", "thumbs_up"));
      get(session(dc, "rolled-bad", "v1", "T3", "Cancel my order", "Can't.", "FAILURE", "thumbs_down"));
      get(session(dc, "tie-a", "v1", "T2", "Say hi", "Hi.", "SUCCESS", "thumbs_up"));
      get(session(dc, "tie-b", "v1", "T2", "Say hi", "Hello.", "SUCCESS", "adopted"));
      get(session(dc, "r-good", "v1", "T5", "Refund me", "Refunded.", "SUCCESS", "thumbs_up"));
      get(session(dc, "r-bad", "v2", "T5", "Refund me", "Later.", "FAILURE", "thumbs_down"));
      get(session(dc, "open", "v1", "T4", "Still going", "…", null, null));
      List<String> ids = List.of("good", "bad", "meh", "rolled", "rolled-bad", "tie-a", "tie-b", "r-good", "r-bad",
          "open");
      DatasetExport export = new DatasetExport(node.system());

      ExportResult sft = get(export.forSessions(AGENT, ids, ExportFormat.SFT, dir, "sft"));
      assertEquals(List.of("good", "tie-a", "tie-b", "r-good"), sft.sessionIds(),
          "reward >= 0.5, quality >= 0.9, not served by the rolled-back v2");
      assertEquals(10, sft.seen());
      assertEquals(Map.of("below-sft-min-reward", 3, "below-min-quality", 1, "served-by-rolled-back-version", 1,
          "not-completed", 1), sft.exclusions());
      // The sessions behind the counts, under the same reasons: what the lineage of a job's session says.
      assertEquals(Map.of("below-sft-min-reward", List.of("bad", "r-bad", "rolled-bad"), "below-min-quality",
          List.of("meh"), "served-by-rolled-back-version", List.of("rolled"), "not-completed", List.of("open")),
          sft.excludedSessionIds());
      JsonNode manifest = JSON.readTree(Path.of(sft.manifestPath()).toFile());
      assertEquals(10, manifest.get("seen").asInt());
      assertEquals(3, manifest.get("exclusions").get("below-sft-min-reward").asInt());

      ExportResult dpo = get(export.forSessions(AGENT, ids, ExportFormat.DPO, dir, "dpo"));
      // T1 pairs across two wordings by taskId; T2's rewards tie; T3's best was served by v2 and may not be
      // chosen; T5's rejected answer was served by v2, which it may be.
      assertEquals(List.of("good", "bad", "r-good", "r-bad"), dpo.sessionIds());
      JsonNode pair = JSON.readTree(Files.readAllLines(Path.of(dpo.path())).get(0));
      assertEquals("Book a flight", pair.get("prompt").asText());
      assertEquals("Booked.", pair.get("chosen").asText());
      assertEquals("No.", pair.get("rejected").asText());
      assertEquals(Map.of("below-dpo-min-margin", 4, "dpo-only-answer-to-its-task", 1, "not-completed", 1),
          dpo.exclusions());
      assertEquals(Map.of("below-dpo-min-margin", List.of("rolled", "rolled-bad", "tie-a", "tie-b"),
          "dpo-only-answer-to-its-task", List.of("meh"), "not-completed", List.of("open")), dpo.excludedSessionIds());

      ExportResult rl = get(export.forSessions(AGENT, ids, ExportFormat.RL, dir, "rl"));
      assertEquals(List.of("good", "bad", "rolled", "rolled-bad", "tie-a", "tie-b", "r-good", "r-bad"),
          rl.sessionIds(), "RL keeps every reward; only quality below 0.9 (meh) is left out");
      JsonNode task = JSON.readTree(Files.readAllLines(Path.of(rl.path())).get(1));
      assertEquals(-1.0, task.get("reward").asDouble(), "the task carries its reward");
      assertEquals("No.", task.get("reference").asText());
      assertEquals("task:T1", task.get("metadata").get("taskId").asText());
    }
  }

  @Test
  void anExportThatSelectsNothingLeavesNoFileAndSaysWhy() throws Exception {
    Path dir = TestDatabases.outputDir("dataset-empty");
    try (TrainingNode node = TrainingNode.start(node(TestDatabases.h2(dir.resolve("db"))))) {
      DataCollector dc = node.dataCollector();
      get(session(dc, "f1", "v1", null, "q1", "a1", "FAILURE", "thumbs_down"));
      get(session(dc, "f2", "v1", null, "q2", "a2", "FAILURE", "thumbs_down"));
      get(session(dc, "m1", "v1", null, "q3", "a3", "SUCCESS", null));
      Path stale = dir.resolve("job-1.jsonl");
      Files.writeString(stale, "{\"messages\":[]}\n");
      ExportResult r = get(new DatasetExport(node.system())
          .forSessions(AGENT, List.of("f1", "f2", "m1"), ExportFormat.SFT, dir, "job-1"));
      assertTrue(r.empty());
      assertEquals("3 seen: 2 below-sft-min-reward, 1 below-min-quality", r.selectionSummary());
      assertFalse(Files.exists(stale), "no file of that name is left, not even an older one");
      assertFalse(Files.exists(dir.resolve("job-1.manifest.json")));
      assertFalse(Files.exists(dir.resolve(".job-1.jsonl.tmp")));
      assertNull(r.manifestPath());
      assertInstanceOf(String.class, r.path());
    }
  }
}
