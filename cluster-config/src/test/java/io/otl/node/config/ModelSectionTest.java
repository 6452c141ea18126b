package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The AgentScope {@code model} section: parsed once, checked, key from the environment, never shown. */
class ModelSectionTest {

  private static final Map<String, String> ENV = Map.of("MODEL_API_KEY", "sk-test-secret-123");

  @Test
  void tomlAndJsonSamplesGiveTheSameBaseModelWithTheKeyFromTheEnvironment() {
    for (String sample : new String[] {"config.toml", "settings.json"}) {
      ModelSection m = ModelSection.fromRoot(AgentScopeConfigLoader.load(TestFiles.sample(sample), ENV)).orElseThrow();
      assertEquals("openai-compatible", m.provider(), sample);
      assertEquals("http://127.0.0.1:9000/api", m.baseUrl(), sample);
      assertEquals("gpt-4o-mini", m.modelName(), sample);
      assertEquals("sk-test-secret-123", m.apiKey(), sample);
      assertEquals(60, m.timeoutSeconds(), sample);
      assertEquals(3, m.maxRetries(), sample);
      assertFalse(m.toString().contains("sk-test-secret-123"), "the key is never printed: " + m);
      assertTrue(m.toString().contains("****"));
    }
  }

  @Test
  void anUnsetKeyVariableMeansNoKey() {
    ModelSection m = ModelSection.fromRoot(AgentScopeConfigLoader.load(TestFiles.sample("config.toml"), Map.of()))
        .orElseThrow();
    assertFalse(m.hasApiKey());
  }

  @Test
  void noSectionNoBaseModel() {
    assertEquals(Optional.empty(), ModelSection.fromRoot(ConfigFactory.parseString("agentscope.training.enabled = true")));
  }

  /** v0's served model name goes upstream and into log lines as written. */
  @Test
  void aModelNameWithAControlCharacterIsRefusedByKey() {
    Config bad = ConfigFactory.parseString("agentscope.model { base-url = \"http://127.0.0.1:8000/v1\", "
        + "model-name = \"qwen\\nINFO forged\" }");
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> ModelSection.fromRoot(bad));
    assertEquals(List.of("agentscope.model.model-name: must be a model name without control characters (newline, tab …)"),
        e.errors());
  }

  /** Trial t12: the gateway appends /chat/completions to base-url, so a query made every call of v0 a 404. */
  @Test
  void aBaseUrlWithAQueryIsRefusedWithoutShowingIt() {
    Config bad = ConfigFactory.parseString("agentscope.model { base-url = \"http://127.0.0.1:8000/v1?key=sk-leak\", "
        + "model-name = \"qwen\" }");
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> ModelSection.fromRoot(bad));
    assertEquals(List.of("agentscope.model.base-url: must not have a query or fragment (?…, #…): the gateway appends"
        + " /chat/completions to it; give a key as agentscope.model.api-key"), e.errors());
  }

  @Test
  void wrongValuesAreReportedByKeyWithoutTheKeyValue() {
    Config bad = ConfigFactory.parseString("agentscope.model { base-url = \"ftp://x\", api-key = \"sk-leak\", "
        + "timeout-seconds = 0 }");
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> ModelSection.fromRoot(bad));
    String message = e.getMessage();
    assertTrue(message.contains("agentscope.model.base-url"), message);
    assertTrue(message.contains("agentscope.model.model-name"), message);
    assertTrue(message.contains("agentscope.model.timeout-seconds"), message);
    assertFalse(message.contains("sk-leak"), message);
  }

  /**
   * Trial t50: timeout_seconds = 1.5 was taken as 1 s; "sixty" and 99999999999 were refused as "must be a whole
   * number" without the value or the range; 2147483647 passed and stopped the node after its journal was
   * written, naming the simulator's port. Each is now refused with key, value and range, as design §8 asks.
   */
  @Test
  void timeoutAndRetriesAreWholeNumbersInRangeNamedWithTheirValue() {
    String base = "agentscope.model { base-url = \"http://127.0.0.1:8000/v1\", model-name = \"m\", ";
    Map<String, String> refused = Map.of(
        "timeout-seconds = 1.5", "agentscope.model.timeout-seconds = 1.5: must be a whole number from 1 to 86400",
        "timeout-seconds = sixty", "agentscope.model.timeout-seconds = \"sixty\": must be a whole number from 1 to 86400",
        "timeout-seconds = 99999999999",
        "agentscope.model.timeout-seconds = 99999999999: must be a whole number from 1 to 86400",
        "timeout-seconds = 2147483647",
        "agentscope.model.timeout-seconds = 2147483647: must be a whole number from 1 to 86400",
        "timeout-seconds = 0", "agentscope.model.timeout-seconds = 0: must be a whole number from 1 to 86400",
        "max-retries = -1", "agentscope.model.max-retries = -1: must be a whole number from 0 to 100",
        "max-retries = 101", "agentscope.model.max-retries = 101: must be a whole number from 0 to 100",
        "max-retries = true", "agentscope.model.max-retries = true: must be a whole number from 0 to 100");
    refused.forEach((setting, error) -> {
      Config bad = ConfigFactory.parseString(base + setting + " }");
      ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> ModelSection.fromRoot(bad),
          setting);
      assertEquals(List.of(error), e.errors(), setting);
    });
    // A value of the wrong type is shown too, the key's masked.
    ConfigValidationException types = assertThrows(ConfigValidationException.class, () -> ModelSection.fromRoot(
        ConfigFactory.parseString("agentscope.model { base-url = [x], model-name = m, api-key = [sk-leak] }")));
    assertEquals(List.of("agentscope.model.base-url = [\"x\"]: must be a string",
        "agentscope.model.api-key = ****: must be a string"), types.errors());
    // The longest accepted, and numbers written as strings (YAML quotes, an environment variable) still load.
    ModelSection longest = ModelSection.fromRoot(ConfigFactory.parseString(
        base + "timeout-seconds = 86400, max-retries = \"100\" }")).orElseThrow();
    assertEquals(86_400, longest.timeoutSeconds());
    assertEquals(100, longest.maxRetries());
  }

  @Test
  void yamlModelSectionTakesDefaultsForWhatItOmits() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "model-section");
    Path yml = TestFiles.write(dir, "a.yml", "agentscope:\n  model:\n    base-url: http://vllm:8000/v1\n"
        + "    model-name: qwen2.5-7b-instruct\n  training:\n    enabled: true\n");
    ModelSection m = ModelSection.fromRoot(AgentScopeConfigLoader.load(yml, Map.of())).orElseThrow();
    assertEquals("http://vllm:8000/v1", m.baseUrl());
    assertEquals("openai-compatible", m.provider());
  }

  @Test
  void aWrongModelSectionFailsNodeConfigurationBeforeAnythingStarts() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "model-section-node");
    Path toml = TestFiles.write(dir, "bad.toml", "[model]\nbase_url = \"not a url\"\nmodel_name = \"m\"\n");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(toml), ConfigFactory.empty(), Map.of()));
    // Named as the file wrote it (trial t101): a config.toml has base_url, not base-url.
    assertTrue(e.getMessage().contains("agentscope.model.base_url = \"not a url\""), e.getMessage());
  }
}
