package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review t170, on trial t165's desensitizing as written (a journal an earlier build stored raw, exported by a node
 * whose rules take more): only the training content is rewritten. A number keeps its type (the line's own
 * {@code tools} schema says what it is), the ids in {@code metadata} stay as the manifest has them, and a job's
 * file is deduplicated as written. Run once per database.
 */
abstract class DesensitizedAsWrittenContract {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ExportFilters EVERYTHING = new ExportFilters(-1.0, 0.0, 1e-9);

  /** Node overrides selecting this contract's database; a fresh, empty journal each call. */
  protected abstract Config database() throws Exception;

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  /** The database with the earlier build's rules: every built-in rule but {@code left}. */
  private static Config earlierRules(Config db, String left) {
    List<String> patterns = new ArrayList<>(List.of("phone", "id_card", "email", "bank_card", "iban", "secret"));
    patterns.remove(left);
    return ConfigFactory.parseString("agentscope.training.data-collector.desensitize.patterns = ["
        + String.join(",", patterns) + "]").withFallback(db);
  }

  private static void session(DataCollector dc, String id, String agent, String prompt, String answer,
      SessionInput.ToolCall call) throws Exception {
    session(dc, id, agent, prompt, answer, call, "SUCCESS");
  }

  private static void session(DataCollector dc, String id, String agent, String prompt, String answer,
      SessionInput.ToolCall call, String result) throws Exception {
    List<SessionInput> inputs = new ArrayList<>();
    inputs.add(new SessionInput.Start("start", null, "1.0", "v1", Map.of()));
    inputs.add(new SessionInput.Message("u1", null, "user", prompt, null, null));
    if (call != null) inputs.add(call);
    inputs.add(new SessionInput.Message("a1", null, "assistant", answer, null, 400L));
    inputs.add(new SessionInput.Result("res", null, result, "r"));
    get(dc.record(id, agent, inputs));
  }

  private static List<JsonNode> read(ExportResult r) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(r.path()))) out.add(JSON.readTree(line));
    return out;
  }

  /**
   * A customer's mobile an earlier build stored raw as a tool's integer argument: rewritten, it became the string
   * "[PHONE]" under the line's own schema {@code "type": "integer"}. The line is left out, counted (a DPO pair's
   * two trajectories); the same number in a string is desensitized and its line written.
   */
  @Test
  void aNumberIsNeverTurnedIntoAStringAgainstTheLinesOwnSchema() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config db = database();
    try (TrainingNode earlier = TrainingNode.start(TestDatabases.node(earlierRules(db, "phone"), false))) {
      DataCollector dc = earlier.dataCollector();
      session(dc, "num-1", "agent-n", "call the customer", "calling", new SessionInput.ToolCall("t1", null, "call-1",
          "dial", JSON.readTree("{\"number\":13812345678,\"retries\":2}"), JSON.readTree("\"ok\""), true, 30L));
      session(dc, "str-1", "agent-n", "text the customer", "sent", new SessionInput.ToolCall("t1", null, "call-1",
          "sms", JSON.readTree("{\"to\":\"13812345678\",\"retries\":2}"), JSON.readTree("\"ok\""), true, 30L));
      session(dc, "num-2", "agent-n", "call the customer", "no answer", new SessionInput.ToolCall("t1", null, "call-1",
          "dial", JSON.readTree("{\"number\":13812345678,\"retries\":2}"), JSON.readTree("\"busy\""), true, 30L),
          "FAILURE");
    }
    try (TrainingNode upgraded = TrainingNode.start(TestDatabases.node(db, false))) {
      ExportResult r = get(new DatasetExport(upgraded.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-n", List.of("num-1", "str-1"), ExportFormat.SFT, dir, "numbers"));
      assertEquals(List.of(), r.piiFindings());
      String file = Files.readString(Path.of(r.path()));
      assertFalse(file.contains("13812345678"), file);
      for (JsonNode line : read(r)) assertArgumentsMatchTheLinesSchema(line);
      assertEquals(List.of("str-1"), r.sessionIds(), file);
      assertEquals(Map.of("pii-in-a-number", 1), r.exclusions());
      assertEquals(2, r.seen());
      assertEquals(1, r.desensitizedAsWritten());
      assertTrue(file.contains("\"to\":\"[PHONE]\",\"retries\":2"), file);

      ExportResult dpo = get(new DatasetExport(upgraded.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-n", List.of("num-1", "num-2", "str-1"), ExportFormat.DPO, dir, "pairs"));
      assertEquals(0, dpo.count());
      assertEquals(Map.of("pii-in-a-number", 2, "dpo-only-answer-to-its-task", 1), dpo.exclusions());
      assertFalse(Files.exists(Path.of(dpo.path())));
    }
  }

  /** Every tool call's argument has the JSON type the line's {@code tools} entry gives its parameter. */
  private static void assertArgumentsMatchTheLinesSchema(JsonNode line) {
    for (JsonNode m : line.get("messages")) {
      for (JsonNode call : m.path("tool_calls")) {
        String name = call.get("function").get("name").asText();
        JsonNode props = null;
        for (JsonNode tool : line.get("tools")) {
          if (name.equals(tool.get("function").get("name").asText())) {
            props = tool.get("function").get("parameters").get("properties");
          }
        }
        JsonNode schema = props;
        call.get("function").get("arguments").fields().forEachRemaining(a -> {
          String type = schema.get(a.getKey()).get("type").asText();
          JsonNode v = a.getValue();
          boolean fits = switch (type) {
            case "integer" -> v.isIntegralNumber();
            case "number" -> v.isNumber();
            case "string" -> v.isTextual();
            case "boolean" -> v.isBoolean();
            default -> true;
          };
          assertTrue(fits, a.getKey() + " = " + v + " is no " + type + " in " + line);
        });
      }
    }
  }

  /**
   * The doors take a session id with a national phone form ({@code s-555-123-4567}); rewritten in an RL line's
   * {@code metadata} it no longer joined the manifest's {@code sessionIds}, the lineage and the journal. The ids
   * stay as stored: a line whose ids hold what the node's rules take is left out, counted; a line whose prompt
   * an earlier build stored raw has its prompt desensitized and its ids as they are.
   */
  @Test
  void theIdsInMetadataAreNeverRewritten() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config db = database();
    String phoneId = "s-555-123-4567";
    try (TrainingNode earlier = TrainingNode.start(TestDatabases.node(earlierRules(db, "email"), false))) {
      DataCollector dc = earlier.dataCollector();
      session(dc, phoneId, "agent-m", "what is the refund policy?", "30 days", null);
      session(dc, "mail-1", "agent-m", "mail it to ann@example.com", "sent", null);
      session(dc, "clean-m", "agent-m", "hello", "hi", null);
    }
    try (TrainingNode upgraded = TrainingNode.start(TestDatabases.node(db, false))) {
      ExportResult r = get(new DatasetExport(upgraded.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-m", List.of(phoneId, "mail-1", "clean-m"), ExportFormat.RL, dir, "ids"));
      assertEquals(List.of(), r.piiFindings());
      List<JsonNode> lines = read(r);
      assertEquals(r.sessionIds().size(), lines.size());
      for (int i = 0; i < lines.size(); i++) {
        assertEquals(r.sessionIds().get(i), lines.get(i).get("metadata").get("sessionId").asText(),
            "the line joins the manifest by its session id");
      }
      assertEquals(List.of("mail-1", "clean-m"), r.sessionIds());
      assertEquals(Map.of("pii-in-metadata", 1), r.exclusions());
      assertEquals("mail it to [EMAIL]", lines.get(0).get("prompt").asText());
      assertEquals(1, r.desensitizedAsWritten());
      assertFalse(Files.readString(Path.of(r.path())).contains("555-123-4567"));
    }
  }

  /**
   * Two sessions an earlier build stored raw that differ only in a phone number are one line once desensitized:
   * a job's file was deduplicated before, and held that line twice. Deduplicated as written, the second is a
   * counted {@code duplicate-exact}.
   */
  @Test
  void aJobsFileIsDeduplicatedAsWritten() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config db = database();
    try (TrainingNode earlier = TrainingNode.start(TestDatabases.node(earlierRules(db, "phone"), false))) {
      DataCollector dc = earlier.dataCollector();
      session(dc, "d-1", "agent-d", "call me back at 555-123-4567", "we will call you", null);
      session(dc, "d-2", "agent-d", "call me back at 555-987-6543", "we will call you", null);
      session(dc, "d-3", "agent-d", "hello", "hi", null);
    }
    try (TrainingNode upgraded = TrainingNode.start(TestDatabases.node(db, false))) {
      DatasetExport export = new DatasetExport(upgraded.system(), 4, Clock.systemUTC(), EVERYTHING);
      ExportResult train = get(new JobDatasetExport(export, ContinualSettings.NONE)
          .export("agent-d", "job-d", List.of("d-1", "d-2", "d-3"), ExportFormat.SFT, dir)).train();
      List<String> lines = Files.readAllLines(Path.of(train.path()));
      assertEquals(lines.size(), lines.stream().distinct().count(), "no line twice: " + lines);
      assertEquals(List.of("d-1", "d-3"), train.sessionIds());
      assertEquals(Map.of("duplicate-exact", 1), train.exclusions());
      assertEquals(1, train.desensitizedAsWritten(), "only lines written are counted");
      assertTrue(lines.get(0).contains("call me back at [PHONE]"), lines.get(0));
      String manifest = Files.readString(Path.of(train.manifestPath()));
      assertTrue(manifest.contains("\"desensitizedAsWritten\" : 1") && manifest.contains("\"duplicate-exact\" : 1"),
          manifest);
    }
  }
}
