package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The system prompt a taskset's rollouts run under. Trinity's task workflows ({@code simple_workflow},
 * the distillation one) build each rollout's chat from the task's prompt and the config's one
 * {@code format.system_prompt}; a task line's own {@code system} is not read. Without it the agent's
 * policy was trained (and benched) answering bare questions it never gets in production, where every
 * call carries its system prompt. A taskset whose sessions ran under several prompts (the agent's
 * prompt changed within the window) takes the one most of its tasks ran under.
 */
final class TaskSystemPrompt {
  private static final ObjectMapper JSON = new ObjectMapper();

  private TaskSystemPrompt() {}

  /** The most common {@code system} of the file's task lines; empty when none has one or no file. */
  static Optional<String> of(Path tasks) {
    if (!Files.isRegularFile(tasks)) return Optional.empty();
    Map<String, Integer> counts = new LinkedHashMap<>();
    try (var lines = Files.lines(tasks)) {
      lines.forEach(line -> {
        if (line.isBlank()) return;
        try {
          JsonNode system = JSON.readTree(line).get("system");
          if (system != null && system.isTextual() && !system.asText().isBlank()) {
            counts.merge(system.asText(), 1, Integer::sum);
          }
        } catch (IOException e) {
          // a line Trinity cannot read either: it names no system prompt
        }
      });
    } catch (IOException | UncheckedIOException e) {
      return Optional.empty();
    }
    String best = null;
    int most = 0;
    for (var e : counts.entrySet()) {
      if (e.getValue() > most) {
        best = e.getKey();
        most = e.getValue();
      }
    }
    return Optional.ofNullable(best);
  }
}
