package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wrong value names its key as the user's file wrote it, as an unknown key already did (design §8: "wrong
 * values fail start-up with the key"): {@code maxTextLength: abc} in a camelCase application.yml was
 * reported as {@code agentscope.training.data-collector.max-text-length}, a name the file does not hold,
 * and so were settings.json's camelCase and config.toml's snake_case keys, the model section's too (trials
 * t99, t101). Kebab-case files, HOCON and {@code -D} keep the kebab-case name, which is how they wrote it.
 */
class BadValueNamedAsWrittenTest {
  @TempDir Path dir;

  private List<String> errors(String fileName, String text) throws Exception {
    Path file = dir.resolve(fileName);
    Files.writeString(file, text);
    return assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), Map.of())).errors();
  }

  @Test
  void aCamelCaseYamlKeysWrongValueIsNamedAsWritten() throws Exception {
    List<String> errors = errors("application.yml", """
        agentscope:
          training:
            dataCollector:
              maxTextLength: abc
              session:
                idleTimeout: forever
            modelUpdate:
              autoDeploy: maybe
            training-runner:
              algorithm: sftx
        """);
    assertEquals(List.of(
        "agentscope.training.dataCollector.maxTextLength = \"abc\": must be an integer >= 1",
        "agentscope.training.dataCollector.session.idleTimeout = \"forever\": must be a duration > 0 and at most"
            + " 248d (e.g. 500ms, 30s, 5m, 2h, 7d)",
        "agentscope.training.modelUpdate.autoDeploy = \"maybe\": must be true or false",
        "agentscope.training.training-runner.algorithm = \"sftx\": must be one of sft, ppo, grpo, dpo, distillation"),
        errors.stream().sorted().toList());
  }

  @Test
  void settingsJsonAndConfigTomlKeysAreNamedAsWrittenTheModelSectionsToo() throws Exception {
    assertEquals(List.of("agentscope.training.dataCollector.sampleRate = \"abc\": must be a number in [0, 1]",
            "agentscope.model.timeoutSeconds = \"soon\": must be a whole number from 1 to 86400"),
        errors("settings.json", """
            {"agentscope": {"model": {"baseUrl": "http://127.0.0.1:9000/v1", "modelName": "m", "timeoutSeconds": "soon"},
              "training": {"dataCollector": {"sampleRate": "abc"}}}}
            """));
    assertEquals(List.of("agentscope.training.data_collector.collect_mode = \"some\": must be one of full, sampled",
            "agentscope.model.base_url = \"ftp://x\": must be an http(s) URL such as http://127.0.0.1:8000/v1"),
        errors("config.toml", """
            [model]
            base_url = "ftp://x"
            model_name = "m"
            [training.data_collector]
            collect_mode = "some"
            """));
  }

  @Test
  void aListElementIsNamedByItsListAsWritten() throws Exception {
    assertEquals(List.of("agentscope.training.modelUpdate.evaluationMetrics[1] = \"latency\": must be one of"
            + " task-success-rate, user-satisfaction, response-latency"),
        errors("settings.json", """
            {"agentscope": {"training": {"modelUpdate": {"evaluationMetrics": ["task-success-rate", "latency"]}}}}
            """));
  }

  /** A start-up warning names its key the same way (settings.json's pattern list, which leaves card numbers raw). */
  @Test
  void aWarningNamesItsKeyAsWrittenToo() throws Exception {
    Path file = dir.resolve("settings.json");
    Files.writeString(file, "{\"agentscope\": {\"training\": {\"dataCollector\": {\"desensitize\":"
        + " {\"patterns\": [\"phone\", \"id_card\", \"email\"]}}}}}");
    List<String> warnings = TrainingSettingsValidator.validate(
        AgentScopeConfigLoader.load(file, Map.of())).warnings();
    assertEquals(1, warnings.size(), warnings.toString());
    assertEquals(true, warnings.get(0).startsWith("agentscope.training.dataCollector.desensitize.patterns = "
        + "[\"phone\",\"id_card\",\"email\"]: leaves out bank_card, iban, secret"), warnings.get(0));
  }

  @Test
  void aHoconKeyKeepsItsKebabCaseName() throws Exception {
    assertEquals(List.of("agentscope.training.data-collector.max-text-length = \"abc\": must be an integer >= 1"),
        errors("node.conf", "agentscope.training.data-collector.max-text-length = abc\n"));
  }
}
