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
 * prompt changed within the window) takes the one most of its tasks ran under. "No system prompt" is
 * one of the candidates: a taskset of an agent that sends none, joined by a few replayed tasks of an
 * earlier prompt, rolled every bare question out under that prompt (trial t126: 25 of 26 tasks had
 * none, one replayed task's prompt was rendered); a tie keeps the prompt. A line without the field (an earlier build's) is
 * not counted either way: what it ran under is unknown.
 */
final class TaskSystemPrompt {
  private static final ObjectMapper JSON = new ObjectMapper();

  private TaskSystemPrompt() {}

  /**
   * The most common {@code system} of the file's task lines; empty when no line has one, when more
   * lines have none ({@code null} or blank) than have that one, or when there is no file.
   */
  static Optional<String> of(Path tasks) {
    if (!Files.isRegularFile(tasks)) return Optional.empty();
    Map<String, Integer> counts = new LinkedHashMap<>();
    int[] without = {0};
    try (var lines = Files.lines(tasks)) {
      lines.forEach(line -> {
        if (line.isBlank()) return;
        try {
          JsonNode system = JSON.readTree(line).get("system");
          if (system != null && system.isTextual() && !system.asText().isBlank()) {
            counts.merge(system.asText(), 1, Integer::sum);
          } else if (system != null && (system.isNull() || system.isTextual())) {
            without[0]++;
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
    return most >= without[0] ? Optional.ofNullable(best) : Optional.empty();
  }
}
