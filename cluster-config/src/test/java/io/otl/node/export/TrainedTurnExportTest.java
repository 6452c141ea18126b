package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.core.training.TrainingJobSpec;
import io.otl.node.TrainingNode;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import io.otl.node.trinity.TrinityConfigRenderer;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What each line teaches, for sessions that do not end on the agent's answer. Trinity-RFT's SFT reader
 * learns the last message of {@code messages}, prompted by the ones before it, so an SFT line ends
 * with the agent's last turn (a user's closing "thanks" or the result of a tool call the session
 * ended on was learned as the model's words), a blank answer is no answer (the model learned to say
 * nothing), and a line needs a user message before that turn (an empty prompt failed the trainer's
 * read of the whole file). An RL task's reference is the last answer with text, and a DPO pair never
 * has the same answer on both sides. Sessions go in through a real node's DataCollector (H2); the SFT
 * job's rows are checked in Python as Trinity's SFTFormatter splits them
 * (hf_dataset_formats_check.py, skipped loudly without Python).
 */
class TrainedTurnExportTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-turns";

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static SessionInput msg(String id, String role, String text) {
    return new SessionInput.Message(id, null, role, text, null, null);
  }

  private static SessionInput feedback(String kind) {
    return new SessionInput.Feedback("f", null, kind, null, "fb", "user", null);
  }

  private static void record(DataCollector dc, String id, String taskId, String result, SessionInput... middle)
      throws Exception {
    List<SessionInput> in = new ArrayList<>();
    in.add(new SessionInput.Start("start", null, "1.0", "v1", taskId == null ? Map.of() : Map.of("taskId", taskId)));
    in.addAll(List.of(middle));
    in.add(new SessionInput.Result("res", null, result, "r"));
    get(dc.record(id, AGENT, in));
  }

  private static List<JsonNode> lines(ExportResult r) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(r.path()))) out.add(JSON.readTree(line));
    return out;
  }

  private static String roles(JsonNode line) {
    StringBuilder sb = new StringBuilder();
    for (JsonNode m : line.get("messages")) sb.append(m.get("role").asText()).append(' ');
    return sb.toString().strip();
  }

  @Test
  void sftLinesEndOnTheAgentsTurnAndBlankAnswersTeachNothing() throws Exception {
    Path dir = TestDatabases.outputDir("trained-turn");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      record(dc, "thanks", null, "SUCCESS", msg("u1", "user", "What is 2+2?"), msg("a1", "assistant", "4"),
          msg("u2", "user", "thanks!"));
      record(dc, "ends-on-tool", null, "SUCCESS", msg("u1", "user", "Restart the web pod"),
          msg("a1", "assistant", "Restarting."),
          new SessionInput.ToolCall("t1", null, "c1", "kubectl", JSON.readTree("{\"cmd\":\"rollout restart\"}"),
              JSON.readTree("\"ok\""), true, 20L, null));
      record(dc, "blank", null, "SUCCESS", msg("u1", "user", "Say something"), msg("a1", "assistant", "   "));
      record(dc, "then-empty", null, "SUCCESS", msg("u1", "user", "Hi"), msg("a1", "assistant", "Hello!"),
          msg("u2", "user", "bye"), msg("a2", "assistant", ""));
      record(dc, "no-user", null, "SUCCESS", msg("a1", "assistant", "Welcome!"), msg("u1", "user", "hi"));
      DatasetExport export = new DatasetExport(node.system());
      List<String> ids = List.of("thanks", "ends-on-tool", "blank", "then-empty", "no-user");

      ExportResult sft = get(export.forSessions(AGENT, ids, ExportFormat.SFT, dir, "sft"));
      assertEquals(List.of("thanks", "ends-on-tool", "then-empty"), sft.sessionIds());
      assertEquals(Map.of("no-assistant-answer", 1, "no-user-message", 1), sft.exclusions(),
          "the blank answer is no answer; the greeting has no user message before it");
      List<JsonNode> rows = lines(sft);
      assertEquals("user assistant", roles(rows.get(0)), "the unanswered thanks is not learned: " + rows.get(0));
      assertEquals("4", rows.get(0).at("/messages/1/content").asText());
      assertEquals("user assistant", roles(rows.get(1)), "the tool's result is not learned: " + rows.get(1));
      assertEquals("kubectl", rows.get(1).at("/messages/1/tool_calls/0/function/name").asText(),
          "the call the agent made is its turn");
      assertEquals(1, rows.get(1).get("tools").size());
      assertEquals("user assistant", roles(rows.get(2)), rows.get(2).toString());
      assertEquals("Hello!", rows.get(2).at("/messages/1/content").asText());

      ExportResult rl = get(export.forSessions(AGENT, List.of("blank", "then-empty"), ExportFormat.RL, dir, "rl"));
      List<JsonNode> tasks = lines(rl);
      assertTrue(tasks.get(0).get("reference").isNull(), "a blank answer is no reference: " + tasks.get(0));
      assertEquals("Hello!", tasks.get(1).get("reference").asText(), "the last answer that says something");

      // The same rows as a job's folder, read the way Trinity-RFT's SFT reader reads them.
      PythonVenv.python();
      JobDatasetExport.Result job = get(new JobDatasetExport(export, ContinualSettings.NONE)
          .export(AGENT, "job-sft", ids, ExportFormat.SFT, dir.resolve("datasets")));
      TrainingJobSpec spec = new TrainingJobSpec("job-sft", AGENT, "sft", "base-model", Map.of(),
          job.train().path(), dir.resolve("checkpoints").toString(), Map.of());
      JsonNode buffer = new ObjectMapper(new YAMLFactory()).readTree(new TrinityConfigRenderer(1, 1).render(spec))
          .at("/buffer/trainer_input/experience_buffer");
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/hf_dataset_formats_check.py");
      PythonVenv.Result r = PythonVenv.run(script, List.of("--sft", buffer.path("path").asText(), "-",
          buffer.path("split").asText(), job.train().path()), dir, 600);
      assertEquals(0, r.exitCode(), r.output());
      assertEquals(3, JSON.readTree(r.lastLine()).path("sft_rendered").asInt(), r.lastLine());
    }
  }

  private static SessionInput response(String id, String text, String msgId) {
    return new SessionInput.Message(id, null, "assistant", text, msgId, 9L, null, null, null);
  }

  private static SessionInput rated(String id, String kind, String msgId) {
    return new SessionInput.Feedback(id, null, kind, null, id, "user", msgId);
  }

  /**
   * Trial t27: per-turn feedback (msgId) rated a session's last answer down while its reward passed
   * (thumbs up on the first answer, SUCCESS). The SFT line ended before that answer, but the GRPO
   * job's task took it as its {@code reference}, the ground truth Trinity's reward function scores
   * every rollout against. The reference is now the last answer its user did not rate down; a task
   * with none (every answer rated down, or no answer) is left out of a PPO/GRPO file.
   */
  @Test
  void aGrpoTaskIsNeverScoredAgainstAnAnswerItsUserRatedDown() throws Exception {
    Path dir = TestDatabases.outputDir("rl-rated-down");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      record(dc, "rated-last", null, "SUCCESS", msg("u1", "user", "Book me a flight"),
          response("a1", "Where to?", "resp-1"), msg("u2", "user", "Lisbon"),
          response("a2", "Booked to Oslo.", "resp-2"), rated("f1", "THUMBS_UP", "resp-1"),
          rated("f2", "THUMBS_DOWN", "resp-2"));
      record(dc, "all-rated", null, "SUCCESS", msg("u1", "user", "Cancel my order"),
          response("a1", "No.", "resp-1"), rated("f1", "THUMBS_UP", null), rated("f2", "THUMBS_DOWN", "resp-1"));
      record(dc, "no-answer", null, "SUCCESS", msg("u1", "user", "Track my parcel"), rated("f1", "THUMBS_UP", null));
      JobDatasetExport.Result job = get(new JobDatasetExport(new DatasetExport(node.system()), ContinualSettings.NONE)
          .export(AGENT, "job-grpo", List.of("rated-last", "all-rated", "no-answer"), "grpo", dir.resolve("datasets")));
      assertEquals(List.of("rated-last"), job.train().sessionIds());
      assertEquals(Map.of("rated-down-answer", 1, "no-assistant-answer", 1), job.train().exclusions());
      JsonNode task = lines(job.train()).get(0);
      assertEquals("Where to?", task.get("reference").asText(), "not the answer its user rated down: " + task);
      assertEquals(1.0, task.get("reward").asDouble());
    }
  }

  @Test
  void aDpoPairRejectsTheWorstAnswerThatSaysSomethingElse() throws Exception {
    Path dir = TestDatabases.outputDir("dpo-distinct");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      // T1: the worst (-1) answered as the best did; the worst that differs (-0.5, a timeout) is rejected.
      record(dc, "best", "T1", "SUCCESS", msg("u", "user", "When does it ship?"), msg("a", "assistant", "Tomorrow."),
          feedback("thumbs_up"));
      record(dc, "alike-worst", "T1", "FAILURE", msg("u", "user", "When does it ship?"),
          msg("a", "assistant", "tomorrow. "), feedback("thumbs_down"));
      record(dc, "different", "T1", "TIMEOUT", msg("u", "user", "When does it ship?"),
          msg("a", "assistant", "No idea."));
      // T2: both answers say the same: no pair.
      record(dc, "same-a", "T2", "SUCCESS", msg("u", "user", "Cancel it"), msg("a", "assistant", "Done."),
          feedback("thumbs_up"));
      record(dc, "same-b", "T2", "FAILURE", msg("u", "user", "Cancel it"), msg("a", "assistant", "Done."),
          feedback("thumbs_down"));
      ExportResult dpo = get(new DatasetExport(node.system()).forSessions(AGENT,
          List.of("best", "alike-worst", "different", "same-a", "same-b"), ExportFormat.DPO, dir, "dpo"));
      assertEquals(List.of("best", "different"), dpo.sessionIds());
      JsonNode pair = lines(dpo).get(0);
      assertEquals("Tomorrow.", pair.get("chosen").asText());
      assertEquals("No idea.", pair.get("rejected").asText());
      assertEquals(Map.of("dpo-neither-best-nor-worst-of-its-task", 1, "dpo-no-different-answer", 2),
          dpo.exclusions());
      assertFalse(pair.get("chosen").asText().equalsIgnoreCase(pair.get("rejected").asText().strip()));
    }
  }
}
