package io.otl.node.trinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.core.training.TrainingJobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial t106: a grpo job's rollouts (and the bench's) ran without the agent's system prompt, since
 * Trinity's {@code simple_workflow} builds each chat from the task's prompt and the config's
 * {@code format.system_prompt} alone, and the rendered config named none: the policy learned to
 * answer bare questions its production calls never are.
 */
class RolloutSystemPromptTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private final TrinityConfigRenderer renderer = new TrinityConfigRenderer(1, 2);

  private static final String TRIP = "You are TripBot.\nBe concise: \"one line\".";

  private static String task(String system) {
    return "{\"prompt\":\"Hi\",\"reward\":1.0,\"reference\":\"Hello\",\"system\":"
        + (system == null ? "null" : new ObjectMapper().valueToTree(system).toString())
        + ",\"metadata\":{\"sessionId\":\"s\"}}\n";
  }

  private static TrainingJobSpec spec(Path dir, String algorithm, Map<String, Object> hp) throws Exception {
    Path folder = Files.createDirectories(dir.resolve("job-1"));
    Files.writeString(folder.resolve("train.jsonl"), task(TRIP) + task("Old prompt") + task(TRIP) + task(null));
    Files.writeString(folder.resolve("test.jsonl"), task(null) + task("Old prompt"));
    return new TrainingJobSpec("job-1", "trip-bot", algorithm, "qwen2.5-7b-instruct", hp,
        folder.resolve("train.jsonl").toString(), "/data/checkpoints", Map.of());
  }

  @Test
  void rolloutsRunUnderTheSystemPromptMostTasksRanUnder(@TempDir Path dir) throws Exception {
    for (var job : Map.of("grpo", Map.<String, Object>of("reward-fn-type", "my_judge"),
        "ppo", Map.<String, Object>of("reward-fn-type", "my_judge"),
        "distillation", Map.<String, Object>of("teacher-model", "qwen2.5-72b-instruct")).entrySet()) {
      JsonNode yaml = YAML.readTree(renderer.render(spec(dir, job.getKey(), job.getValue())));
      JsonNode format = yaml.path("buffer").path("explorer_input").path("taskset").path("format");
      assertEquals(TRIP, format.path("system_prompt").asText(), job.getKey() + ": " + format);
      List<String> problems = new ArrayList<>();
      TrinityConfigSchemaTest.check(yaml, TrinityConfigSchemaTest.CONFIG, job.getKey(), problems);
      assertEquals(List.of(), problems, "a key Trinity-RFT's FormatConfig has");
    }
  }

  @Test
  void theBenchRunsUnderTheHeldOutTasksSystemPrompt(@TempDir Path dir) throws Exception {
    JsonNode format = YAML.readTree(renderer.renderBench(spec(dir, "sft", Map.of())))
        .path("buffer").path("explorer_input").path("eval_tasksets").path(0).path("format");
    assertEquals("Old prompt", format.path("system_prompt").asText(), format.toString());
    List<String> problems = new ArrayList<>();
    TrinityConfigSchemaTest.check(YAML.readTree(renderer.renderBench(spec(dir, "sft", Map.of()))),
        TrinityConfigSchemaTest.CONFIG, "bench", problems);
    assertEquals(List.of(), problems);
  }

  @Test
  void tasksWithoutASystemPromptNameNone(@TempDir Path dir) throws Exception {
    Path folder = Files.createDirectories(dir.resolve("job-1"));
    Files.writeString(folder.resolve("train.jsonl"), task(null) + "{\"prompt\":\"earlier build\"}\n");
    TrainingJobSpec spec = new TrainingJobSpec("job-1", "trip-bot", "grpo", "qwen2.5-7b-instruct",
        Map.of("reward-fn-type", "my_judge"), folder.resolve("train.jsonl").toString(), "/data/checkpoints", Map.of());
    JsonNode format = YAML.readTree(renderer.render(spec)).path("buffer").path("explorer_input").path("taskset")
        .path("format");
    assertTrue(format.path("system_prompt").isMissingNode(), format.toString());
  }

  /**
   * Trial t126: a grpo job of an agent that sends no system prompt took 25 new tasks and one
   * replayed task of an earlier prompt; the rendered taskset rolled all 26 out under that prompt.
   */
  @Test
  void tasksMostlyWithoutASystemPromptRollOutWithoutOne(@TempDir Path dir) throws Exception {
    Path folder = Files.createDirectories(dir.resolve("job-1"));
    Files.writeString(folder.resolve("train.jsonl"), task(null) + task(null) + task("Old prompt") + task(" "));
    Files.writeString(folder.resolve("test.jsonl"), task(null) + task(null) + task(TRIP));
    TrainingJobSpec spec = new TrainingJobSpec("job-1", "trip-bot", "grpo", "qwen2.5-7b-instruct",
        Map.of("reward-fn-type", "my_judge"), folder.resolve("train.jsonl").toString(), "/data/checkpoints", Map.of());
    JsonNode format = YAML.readTree(renderer.render(spec)).path("buffer").path("explorer_input").path("taskset")
        .path("format");
    assertTrue(format.path("system_prompt").isMissingNode(), format.toString());
    JsonNode bench = YAML.readTree(renderer.renderBench(spec)).path("buffer").path("explorer_input")
        .path("eval_tasksets").path(0).path("format");
    assertTrue(bench.path("system_prompt").isMissingNode(), bench.toString());
  }
}
