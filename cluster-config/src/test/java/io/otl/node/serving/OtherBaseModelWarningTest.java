package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.LogCapture;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent whose own {@code base-model} is not the node's is told at start that its v0 (what its first
 * fine-tune canaries against) is the node's base model: trial t39 set {@code agents.support-bot.base-model}
 * to a 1.5b model, saw v0 serve the 7b and found no word of it. On vllm-lora the line also says the
 * adapters must be trained from the server's base model. An agent on the node's model is not named.
 */
class OtherBaseModelWarningTest {
  @Test
  void anAgentTrainingFromAnotherBaseModelIsNamedAtStart(@TempDir Path dir) throws Exception {
    List<String> warnings;
    try (LogCapture logged = new LogCapture(ServingWiring.class)) {
      try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
              "agentscope.training.simulator.enabled", true,
              "agentscope.training.simulator.port", 0,
              "agentscope.training.simulator.work-dir", dir.resolve("sim").toString(),
              "agentscope.training.serving.backend", "vllm-lora",
              "agentscope.training.training-runner.base-model", "base-7b",
              "agentscope.training.agents.support-bot.base-model", "small-1.5b",
              "agentscope.training.agents.same-bot.base-model", "base-7b",
              "agentscope.training.agents.other-bot.trigger.min-samples", 5))
          .withFallback(TestDatabases.node(TestDatabases.h2(dir), false)))) {
        warnings = logged.lines("WARN");
      }
    }
    assertEquals(1, warnings.size(), warnings.toString());
    String line = warnings.get(0);
    assertTrue(line.startsWith("WARN agent support-bot: agents.support-bot.base-model is small-1.5b, but its v0"
        + " (the base model its first fine-tune canaries against) is the node's base-7b at "), line);
    assertTrue(line.endsWith("serving.backend = vllm-lora loads its adapters onto that server's base model,"
        + " so they must be trained from it"), line);
  }

  /**
   * An agent section that does not name a base-model inherits the node's: with v0 from the model
   * section (another name than training-runner.base-model) it was warned of a base-model it never set
   * (review). Only an agent's own base-model is named.
   */
  @Test
  void anAgentThatInheritsTheNodesBaseModelIsNotNamed(@TempDir Path dir) throws Exception {
    List<String> warnings;
    try (LogCapture logged = new LogCapture(ServingWiring.class)) {
      try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
              "agentscope.model.base-url", "http://127.0.0.1:9/v1",
              "agentscope.model.model-name", "qwen-plus",
              "agentscope.training.training-runner.base-model", "base-7b",
              "agentscope.training.agents.bot.model-update.canary-ratio", 0.1,
              "agentscope.training.agents.own-bot.base-model", "small-1.5b"))
          .withFallback(TestDatabases.node(TestDatabases.h2(dir), false)))) {
        warnings = logged.lines("WARN");
      }
    }
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).startsWith("WARN agent own-bot: agents.own-bot.base-model is small-1.5b, but its v0"
        + " (the base model its first fine-tune canaries against) is the node's qwen-plus at http://127.0.0.1:9/v1"),
        warnings.get(0));
  }
}
