package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The exported files as a trainer reads them: Hugging Face {@code datasets} loads SFT, DPO and RL
 * ({@code load_dataset("json", …)}), and {@code transformers} renders every SFT row with
 * {@code apply_chat_template(messages, tools=tools)} through a tool-calling template that reads
 * {@code arguments} as a mapping (cluster-config/src/test/python/hf_dataset_formats_check.py, pinned
 * versions in scripts/python-requirements.txt). Sessions go in through the real DataCollector: text
 * before a tool call, several tools with different argument shapes, a non-object input, a plain chat.
 * Skipped loudly without Python (failed when OTL_REQUIRE_PYTHON=true).
 */
class HfDatasetFormatsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-hf";

  private static SessionInput.ToolCall call(String id, String tool, String input, String output) throws Exception {
    return new SessionInput.ToolCall("t-" + id, null, id, tool, JSON.readTree(input), JSON.readTree(output), true, 20L);
  }

  private static void record(DataCollector dc, String id, String taskId, String result, SessionInput... middle)
      throws Exception {
    List<SessionInput> in = new ArrayList<>();
    in.add(new SessionInput.Start("start", null, "1.0", "v1", taskId == null ? Map.of() : Map.of("taskId", taskId)));
    in.addAll(List.of(middle));
    in.add(new SessionInput.Result("res", null, result, "r"));
    dc.record(id, AGENT, in).toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static SessionInput.Message msg(String id, String role, String text) {
    return new SessionInput.Message(id, null, role, text, null, null);
  }

  @Test
  void huggingFaceDatasetsLoadsEveryFormatAndTransformersRendersEverySftRowWithItsTools() throws Exception {
    PythonVenv.python();
    Path dir = TestDatabases.outputDir("hf-formats");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      record(dc, "s1", "W", "SUCCESS", msg("u", "user", "Weather in Paris?"), msg("a0", "assistant", "Let me check."),
          call("c1", "weather", "{\"city\":\"Paris\",\"days\":2}", "{\"temp\":21}"),
          msg("a1", "assistant", "21 degrees."));
      record(dc, "s2", null, "SUCCESS", msg("u", "user", "And Lyon?"),
          call("c1", "weather", "{\"city\":\"Lyon\"}", "\"sunny\""),
          call("c2", "search", "{\"q\":\"lyon news\",\"limit\":3}", "{\"hits\":[\"a\",\"b\"]}"),
          msg("a1", "assistant", "Sunny in Lyon."), msg("a2", "assistant", "Anything else?"));
      record(dc, "s3", null, "SUCCESS", msg("u", "user", "hi"), msg("a1", "assistant", "hello"));
      record(dc, "s4", "W", "FAILURE", msg("u", "user", "weather in  PARIS?"), msg("a1", "assistant", "No idea."));
      record(dc, "s5", null, "SUCCESS", msg("u", "user", "Tag this"),
          call("c1", "tag", "[\"red\",\"blue\"]", "\"ok\""), msg("a1", "assistant", "Tagged."));
      List<String> ids = List.of("s1", "s2", "s3", "s4", "s5");
      DatasetExport export = new DatasetExport(node.system());
      ExportResult sft = export.forSessions(AGENT, ids, ExportFormat.SFT, dir, "sft").toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      ExportResult dpo = export.forSessions(AGENT, ids, ExportFormat.DPO, dir, "dpo").toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      ExportResult rl = export.forSessions(AGENT, ids, ExportFormat.RL, dir, "rl").toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      assertEquals(List.of("s1", "s2", "s3", "s5"), sft.sessionIds(), "the failed s4 is not imitated");
      assertEquals(List.of("s1", "s4"), dpo.sessionIds());

      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/hf_dataset_formats_check.py");
      PythonVenv.Result r = PythonVenv.run(script, List.of(sft.path(), dpo.path(), rl.path()), dir, 600);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = JSON.readTree(r.lastLine());
      assertEquals(4, report.path("sft_rows").asInt(), report.toString());
      assertEquals(4, report.path("sft_rendered").asInt(), "every SFT row renders: " + report);
      assertEquals(4, report.path("sft_tool_calls_rendered").asInt(), report.toString());
      assertEquals(4, report.path("sft_tools_listed").asInt(), report.toString());
      assertEquals(1, report.path("dpo_rows").asInt(), report.toString());
      assertEquals(5, report.path("rl_rows").asInt(), report.toString());
      assertEquals("[-1.0,1.0,1.0,1.0,1.0]", report.path("rl_rewards").toString());
      assertTrue(report.path("string_tools_refused").asBoolean(),
          "transformers refuses tools given as a JSON string, the shape this export no longer writes: " + report);
    }
  }
}
