package io.otl.node.config;

import static io.otl.node.config.TestFiles.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.core.model.Metric;
import io.otl.core.model.ModelSettings;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.localstore.StoreSettings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No seed key is silently ignored: every key of the three AgentScope files users copy
 * ({@code src/test/resources/config}, identical to the shared samples) is either honoured — the value
 * written in the file is what the node's parsed settings hold — or accepted with a start-up warning
 * naming it (accepted, not honoured). A key in neither list fails this test.
 */
class SeedKeysWalkTest {
  private static final String T = "agentscope.training.";

  /** What the node parses from the merged config: the objects its entities and wiring are built from. */
  private record Parsed(SessionSettings session, TrainingPolicy policy, ModelSettings model, StoreSettings store) {}

  /** Honoured keys (relative to agentscope.training) and where their value shows in the parsed settings. */
  private static final Map<String, Function<Parsed, Object>> HONOURED = new LinkedHashMap<>();

  static {
    HONOURED.put("enabled", p -> p.policy().trainingEnabled());
    String dc = "data-collector.";
    HONOURED.put(dc + "collect-mode", p -> p.session().collectMode());
    HONOURED.put(dc + "sample-rate", p -> p.session().sampleRate());
    // LocalStoreTest shows what a local store writes.
    HONOURED.put(dc + "store-type", p -> p.store().storeType());
    HONOURED.put(dc + "store-path", p -> p.store().storePath().toString());
    HONOURED.put(dc + "desensitize.enabled", p -> p.session().desensitizeEnabled());
    HONOURED.put(dc + "desensitize.patterns", p -> p.session().desensitizePatterns());
    String tr = "training-runner.";
    HONOURED.put(tr + "trinity-endpoint", p -> p.policy().trinityEndpoint());
    HONOURED.put(tr + "trigger.type", p -> String.join(",", p.policy().triggerNames()));
    HONOURED.put(tr + "trigger.cron", p -> p.policy().cron().expression());
    HONOURED.put(tr + "trigger.min-samples", p -> p.policy().minSamples());
    HONOURED.put(tr + "algorithm", p -> p.policy().algorithm());
    HONOURED.put(tr + "base-model", p -> p.policy().baseModel());
    for (String h : List.of("learning-rate", "batch-size", "epochs", "warmup-ratio")) {
      HONOURED.put(tr + "hyperparams." + h, p -> p.policy().hyperparams().get(h));
    }
    String mu = "model-update.";
    HONOURED.put(mu + "auto-deploy", p -> p.model().autoDeploy());
    HONOURED.put(mu + "canary-ratio", p -> p.model().canaryRatio());
    HONOURED.put(mu + "rollback-on-degradation", p -> p.model().rollbackOnDegradation());
    HONOURED.put(mu + "evaluation-metrics", p -> p.model().evaluationMetrics().stream().map(Metric::key).toList());
  }

  /** Refused at start-up when set (the validator's error names the key and says why). */
  /** Accepted as written but not honoured (no OSS client): each must be named by a start-up warning. */
  private static final Set<String> WARNED = Set.of(
      "data-collector.store-type=oss", "data-collector.store-endpoint", "data-collector.store-bucket");

  /**
   * The article's {@code model} section: the base model, registered as version v0 and served through
   * the gateway (docs/serving.md). Each honoured key against where the node uses it: v0's registration
   * (ServingWiring) and the key the gateway sends to v0's server.
   */
  private static final Map<String, Function<Merged, Object>> MODEL_SECTION = Map.of(
      "agentscope.model.provider", m -> m.section().provider(),
      "agentscope.model.base-url", m -> m.section().baseUrl(),
      "agentscope.model.model-name", m -> m.section().modelName(),
      "agentscope.model.api-key", m -> m.node().gateway().orElseThrow()
          .upstreamKeyFor("any-agent", m.section().baseUrl()),
      // How the gateway calls v0's server: what the gateway will use, not only what was parsed.
      "agentscope.model.timeout-seconds", m -> m.node().gateway().orElseThrow()
          .callsTo(m.section().baseUrl()).timeout().toSeconds(),
      "agentscope.model.max-retries", m -> m.node().gateway().orElseThrow()
          .callsTo(m.section().baseUrl()).maxRetries());

  private record Merged(ModelSection section, NodeSettings node) {}

  @ParameterizedTest
  @ValueSource(strings = {"application.yml", "settings.json", "config.toml"})
  void everyKeyIsHonouredOrRefused(String name) {
    Config file = AgentScopeConfigLoader.load(sample(name), Map.of("MODEL_API_KEY", "sk-walk-test"));
    Config merged = file.withFallback(ConfigFactory.defaultReference()).resolve();
    Config training = merged.getConfig("agentscope.training");
    Parsed parsed = new Parsed(SessionSettings.fromConfig(training), TrainingPolicy.fromConfig(training),
        ModelSettings.fromConfig(training), StoreSettings.fromConfig(training));
    List<String> errors = validationErrors(file);

    Set<String> keys = new TreeSet<>();
    for (Map.Entry<String, ConfigValue> e : file.entrySet()) keys.add(e.getKey());
    assertTrue(keys.size() >= 20, name + " has only " + keys);
    List<String> walked = new ArrayList<>();
    for (String key : keys) {
      Object written = file.getValue(key).unwrapped();
      if (key.startsWith("agentscope.model.")) {
        Function<Merged, Object> field = MODEL_SECTION.get(key);
        if (field == null) fail(key + " of " + name + " is silently ignored: neither honoured nor warned about");
        Merged m = new Merged(ModelSection.fromRoot(merged).orElseThrow(), NodeSettings.from(merged));
        Object expected = key.endsWith("api-key") ? "sk-walk-test" : written;
        assertEquals(normalise(expected), normalise(field.apply(m)), key + " of " + name + " is not honoured");
        walked.add(key);
        continue;
      }
      assertTrue(key.startsWith(T), key + " of " + name + " is outside agentscope.training and agentscope.model");
      String relative = key.substring(T.length());
      if (WARNED.contains(relative) || WARNED.contains(relative + "=" + written)) {
        List<String> warnings = TrainingSettingsValidator.validate(file).warnings();
        assertTrue(warnings.stream().anyMatch(m -> m.startsWith(key + " = ")),
            key + " of " + name + " is not honoured, so a start-up warning must name it; warnings: " + warnings);
        walked.add(key);
        continue;
      }
      Function<Parsed, Object> honoured = HONOURED.get(relative);
      if (honoured == null) fail(key + " of " + name + " is silently ignored: neither honoured nor warned about");
      assertEquals(normalise(written), normalise(honoured.apply(parsed)), key + " of " + name + " is not honoured");
      assertFalse(errors.stream().anyMatch(m -> m.startsWith(key + " = ")), key + " is honoured yet refused: " + errors);
      walked.add(key);
    }
    assertEquals(keys.size(), walked.size());
    assertEquals(List.of(), errors, name + " starts a node");
  }

  private static List<String> validationErrors(Config file) {
    try {
      TrainingSettingsValidator.validate(file);
      return List.of();
    } catch (ConfigValidationException e) {
      return e.errors();
    }
  }

  /** Numbers as doubles (a file may write 16 where the settings hold 16.0), the rest as written. */
  private static Object normalise(Object v) {
    if (v instanceof Number n) return n.doubleValue();
    if (v instanceof List<?> list) return list.stream().map(SeedKeysWalkTest::normalise).toList();
    return v;
  }
}
