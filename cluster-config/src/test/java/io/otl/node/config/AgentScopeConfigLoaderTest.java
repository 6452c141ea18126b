package io.otl.node.config;

import static io.otl.node.config.TestFiles.sample;
import static io.otl.node.config.TestFiles.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueType;
import io.otl.node.testing.LogCapture;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentScopeConfigLoaderTest {

  private static final String T = "agentscope.training.";
  private static final Map<String, String> NO_ENV = Map.of();

  @TempDir
  Path dir;

  @Test
  void applicationYmlLoadsUnchanged() {
    Config c = AgentScopeConfigLoader.load(sample("application.yml"), NO_ENV);
    assertTrue(c.getBoolean(T + "enabled"));
    assertEquals("full", c.getString(T + "data-collector.collect-mode"));
    assertEquals(0.1, c.getDouble(T + "data-collector.sample-rate"));
    assertEquals("oss", c.getString(T + "data-collector.store-type"));
    assertEquals("oss-cn-hangzhou.aliyuncs.com", c.getString(T + "data-collector.store-endpoint"));
    assertEquals("agent-trajectories", c.getString(T + "data-collector.store-bucket"));
    assertEquals(List.of("phone", "id_card", "email"),
        c.getStringList(T + "data-collector.desensitize.patterns"));
    assertEquals("http://trinity-rft-service:8080",
        c.getString(T + "training-runner.trinity-endpoint"));
    assertEquals("scheduled", c.getString(T + "training-runner.trigger.type"));
    assertEquals("0 0 2 * * ?", c.getString(T + "training-runner.trigger.cron"));
    assertFalse(c.hasPath(T + "training-runner.trigger.min-samples"), "commented out in the file");
    assertEquals("sft", c.getString(T + "training-runner.algorithm"));
    assertEquals("qwen2.5-7b-instruct", c.getString(T + "training-runner.base-model"));
    assertNumber(c, T + "training-runner.hyperparams.learning-rate", 2e-5);
    assertEquals(16, c.getInt(T + "training-runner.hyperparams.batch-size"));
    assertTrue(c.getBoolean(T + "model-update.auto-deploy"));
    assertEquals(0.05, c.getDouble(T + "model-update.canary-ratio"));
    assertEquals(List.of("task-success-rate", "user-satisfaction", "response-latency"),
        c.getStringList(T + "model-update.evaluation-metrics"));
  }

  @Test
  void settingsJsonLoadsUnchangedWithCamelCaseKeysNormalised() {
    Config c = AgentScopeConfigLoader.load(sample("settings.json"), NO_ENV);
    assertThresholdSample(c);
  }

  @Test
  void configTomlLoadsUnchangedWithSnakeCaseKeysNormalised() {
    Config c = AgentScopeConfigLoader.load(sample("config.toml"), NO_ENV);
    assertThresholdSample(c);
  }

  @Test
  void jsonAndTomlSamplesProduceTheSameShape() {
    Config json = AgentScopeConfigLoader.load(sample("settings.json"), NO_ENV);
    Config toml = AgentScopeConfigLoader.load(sample("config.toml"), NO_ENV);
    assertEquals(json.getConfig("agentscope").root().unwrapped(),
        toml.getConfig("agentscope").root().unwrapped());
  }

  private static void assertThresholdSample(Config c) {
    assertTrue(c.getBoolean(T + "enabled"));
    assertEquals("sampled", c.getString(T + "data-collector.collect-mode"));
    assertNumber(c, T + "data-collector.sample-rate", 0.1);
    assertEquals("local", c.getString(T + "data-collector.store-type"));
    assertEquals("./trajectories", c.getString(T + "data-collector.store-path"));
    assertEquals(List.of("phone", "id_card", "email"),
        c.getStringList(T + "data-collector.desensitize.patterns"));
    assertEquals("http://127.0.0.1:8080", c.getString(T + "training-runner.trinity-endpoint"));
    assertEquals("threshold", c.getString(T + "training-runner.trigger.type"));
    assertEquals(200, c.getInt(T + "training-runner.trigger.min-samples"));
    assertEquals(ConfigValueType.NUMBER,
        c.getValue(T + "training-runner.trigger.min-samples").valueType());
    assertEquals("gpt-4o-mini", c.getString(T + "training-runner.base-model"));
    assertNumber(c, T + "training-runner.hyperparams.learning-rate", 2e-5);
    assertEquals(8, c.getInt(T + "training-runner.hyperparams.batch-size"));
    assertEquals(2, c.getInt(T + "training-runner.hyperparams.epochs"));
    assertNumber(c, T + "training-runner.hyperparams.warmup-ratio", 0.1);
    assertFalse(c.getBoolean(T + "model-update.auto-deploy"));
    assertEquals(ConfigValueType.BOOLEAN, c.getValue(T + "model-update.auto-deploy").valueType());
    assertNumber(c, T + "model-update.canary-ratio", 0.05);
    assertTrue(c.getBoolean(T + "model-update.rollback-on-degradation"));
    assertEquals(List.of("task-success-rate", "response-latency"),
        c.getStringList(T + "model-update.evaluation-metrics"));
    // AgentScope's own model section is kept, kebab-cased, not validated.
    assertEquals("openai-compatible", c.getString("agentscope.model.provider"));
    assertEquals("http://127.0.0.1:9000/api", c.getString("agentscope.model.base-url"));
    assertEquals("gpt-4o-mini", c.getString("agentscope.model.model-name"));
    assertEquals(60, c.getInt("agentscope.model.timeout-seconds"));
    assertEquals("${MODEL_API_KEY}", c.getString("agentscope.model.api-key"));
  }

  /** The value is typed as a number in the Config, not a string that happens to parse. */
  private static void assertNumber(Config c, String key, double expected) {
    assertEquals(ConfigValueType.NUMBER, c.getValue(key).valueType(), key);
    assertEquals(expected, c.getDouble(key), 1e-12, key);
  }

  @Test
  void unsetVariableInAgentScopesOwnSectionOnlyWarnsNamingKeyAndVariable() {
    // named as each file wrote the key (trial t101): agentscope.model.api-key is in neither
    for (Map.Entry<String, String> file : Map.of("settings.json", "agentscope.model.apiKey: ",
        "config.toml", "agentscope.model.api_key: ").entrySet()) {
      try (LogCapture log = new LogCapture(AgentScopeConfigLoader.class)) {
        AgentScopeConfigLoader.load(sample(file.getKey()), NO_ENV);
        List<String> warnings = log.lines("WARN");
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(file.getValue()), warnings.get(0));
        assertTrue(warnings.get(0).contains("MODEL_API_KEY"), warnings.get(0));
        // The model section is v0's (docs/serving.md): the warning must not call it unused.
        assertTrue(warnings.get(0).contains("the base model v0 of the model section is called without an API key"),
            warnings.get(0));
      }
    }
  }

  @Test
  void setVariableIsSubstitutedAndNeverLogged() {
    String secret = "sk-very-secret-4711";
    for (String name : List.of("settings.json", "config.toml")) {
      try (LogCapture log = new LogCapture(AgentScopeConfigLoader.class)) {
        Config c = AgentScopeConfigLoader.load(sample(name), Map.of("MODEL_API_KEY", secret));
        assertEquals(secret, c.getString("agentscope.model.api-key"));
        assertTrue(log.lines().stream().noneMatch(l -> l.contains(secret)), log.lines().toString());
      }
    }
  }

  @Test
  void placeholdersResolveInsideStringsAndListsWithDefaults() {
    Path file = write(dir, "a.yml", String.join("\n",
        "agentscope:",
        "  training:",
        "    db:",
        "      url: jdbc:postgresql://${DB_HOST}:${DB_PORT:-5432}/otl",
        "      user: ${DB_USER:-otl}",
        "      password: ${DB_PASSWORD}",
        "    data-collector:",
        "      desensitize:",
        "        custom: ['${EXTRA_RE}', 'x']",
        ""));
    Config c = AgentScopeConfigLoader.load(file, Map.of("DB_HOST", "db", "DB_PASSWORD",
        "${DB_HOST}", "EXTRA_RE", "ticket-\\d+", "DB_USER", ""));
    assertEquals("jdbc:postgresql://db:5432/otl", c.getString(T + "db.url"));
    assertEquals("otl", c.getString(T + "db.user"), ":- also applies to an empty variable");
    assertEquals("${DB_HOST}", c.getString(T + "db.password"), "substituted text is not rescanned");
    assertEquals(List.of("ticket-\\d+", "x"),
        c.getStringList(T + "data-collector.desensitize.custom"));
  }

  @Test
  void unsetVariablesUnderTrainingAreErrorsNamingKeyAndVariableAllAtOnce() {
    Path file = write(dir, "a.json", "{\"agentscope\":{\"training\":{\"db\":{"
        + "\"password\":\"${DB_PASSWORD}\",\"url\":\"jdbc:postgresql://${DB_HOST}/x\"}}}}");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(file, Map.of("UNRELATED", "s3cr3t")));
    assertEquals(2, e.errors().size(), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.training.db.password"), e.getMessage());
    assertTrue(e.getMessage().contains("DB_PASSWORD"), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.training.db.url"), e.getMessage());
    assertTrue(e.getMessage().contains("DB_HOST"), e.getMessage());
    assertFalse(e.getMessage().contains("s3cr3t"));
  }

  @Test
  void anUnsetVariableUnderTrainingNamesTheKeyAsTheFileWroteIt() {
    Path toml = write(dir, "config.toml", String.join("\n",
        "[agentscope.model]", "provider = \"openai\"", "base_url = \"http://127.0.0.1:8000/v1\"",
        "api_key = \"${OTL_TEST_UNSET_KEY}\"", "model_name = \"qwen\"",
        "[agentscope.training.dataCollector]", "max_text_length = \"${OTL_TEST_UNSET_LENGTH}\"", ""));
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(toml, NO_ENV));
    assertEquals(List.of("agentscope.training.dataCollector.max_text_length: environment variable OTL_TEST_UNSET_LENGTH is"
        + " not set and the placeholder has no default (set OTL_TEST_UNSET_LENGTH, or write ${OTL_TEST_UNSET_LENGTH:-default})"),
        e.errors());
  }

  @Test
  void hoconIsTakenAsIsWithSubstitutionsFromTheGivenEnvironment() {
    Path file = write(dir, "app.conf", String.join("\n",
        "agentscope.training {",
        "  db.password = ${?OTL_TEST_SECRET}",
        "  db.user = \"${OTL_TEST_USER:-otl}\"",
        "  data-collector.sample-rate = 0.25",
        "  trainingRunner.x = 1", // HOCON keys are not renamed
        "}",
        "pekko.loglevel = DEBUG",
        ""));
    Config c = AgentScopeConfigLoader.load(file, Map.of("OTL_TEST_SECRET", "pw"));
    assertEquals("pw", c.getString(T + "db.password"));
    assertEquals("otl", c.getString(T + "db.user"));
    assertEquals(0.25, c.getDouble(T + "data-collector.sample-rate"));
    assertTrue(c.hasPath(T + "trainingRunner.x"));
    assertEquals("DEBUG", c.getString("pekko.loglevel"));
  }

  @Test
  void missingHoconSubstitutionIsAnError() {
    Path file = write(dir, "app.conf", "agentscope.training.db.password = ${OTL_NOT_SET_ANYWHERE}\n");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(file, NO_ENV));
    assertTrue(e.getMessage().contains("OTL_NOT_SET_ANYWHERE"), e.getMessage());
  }

  @Test
  void tomlWithoutModelSectionAndYamlWithoutWrapperMapToAgentScope() {
    Path toml = write(dir, "c.toml", "[training.training_runner.hyperparams]\nlearning_rate = 2e-5\n");
    assertNumber(AgentScopeConfigLoader.load(toml, NO_ENV),
        T + "training-runner.hyperparams.learning-rate", 2e-5);
    Path yml = write(dir, "c.yaml", "training:\n  trainingRunner:\n    base_model: m\n");
    assertEquals("m", AgentScopeConfigLoader.load(yml, NO_ENV)
        .getString(T + "training-runner.base-model"));
  }

  @Test
  void otherTopLevelSectionsNextToAgentScopeAreIgnored() {
    Path yml = write(dir, "c.yml", "spring:\n  application:\n    name: x\nagentscope:\n"
        + "  training:\n    enabled: false\n");
    Config c = AgentScopeConfigLoader.load(yml, NO_ENV);
    assertFalse(c.hasPath("spring"));
    assertFalse(c.getBoolean(T + "enabled"));
  }

  @Test
  void keysWithDotsStayOneKeyAndNullsAreDropped() {
    Path yml = write(dir, "c.yml", "agentscope:\n  training:\n    \"a.b\": 1\n    store-path:\n");
    Config c = AgentScopeConfigLoader.load(yml, NO_ENV);
    assertTrue(c.hasPath(T + "\"a.b\""));
    assertFalse(c.hasPathOrNull(T + "store-path"));
  }

  @Test
  void theSameKeyInTwoSpellingsIsAnError() {
    Path json = write(dir, "c.json", "{\"agentscope\":{\"training\":{\"dataCollector\":"
        + "{\"sampleRate\":0.2,\"sample_rate\":0.3}}}}");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(json, NO_ENV));
    assertTrue(e.getMessage().contains("agentscope.training.data-collector.sample-rate"),
        e.getMessage());
    assertTrue(e.getMessage().contains("sampleRate") && e.getMessage().contains("sample_rate"));
  }

  @Test
  void malformedFilesNameFileAndLineWithoutEchoingContent() {
    String secret = "hunter2-secret-value";
    Path yml = write(dir, "bad.yml", "agentscope:\n  training:\n    db:\n      password: "
        + secret + ": x\n");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(yml, NO_ENV));
    assertTrue(e.getMessage().contains("bad.yml"), e.getMessage());
    assertTrue(e.getMessage().contains("line 4"), e.getMessage());
    assertFalse(e.getMessage().contains(secret), e.getMessage());

    Path json = write(dir, "bad.json", "{\"agentscope\": {\"training\": {\"db\": {\"password\": "
        + secret + "}}}}");
    e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(json, NO_ENV));
    assertTrue(e.getMessage().contains("bad.json"), e.getMessage());
    assertFalse(e.getMessage().contains(secret), e.getMessage());
  }

  @Test
  void unsupportedOrMissingFilesAreClearErrors() {
    Path ini = write(dir, "c.ini", "x=1");
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(ini, NO_ENV));
    assertTrue(e.getMessage().contains(".ini"), e.getMessage());
    e = assertThrows(ConfigValidationException.class,
        () -> AgentScopeConfigLoader.load(dir.resolve("nope.yml"), NO_ENV));
    assertTrue(e.getMessage().contains("nope.yml"), e.getMessage());
  }

  @Test
  void keysAreNormalisedToKebabCase() {
    assertEquals("collect-mode", AgentScopeConfigLoader.kebabCase("collectMode"));
    assertEquals("collect-mode", AgentScopeConfigLoader.kebabCase("collect_mode"));
    assertEquals("collect-mode", AgentScopeConfigLoader.kebabCase("collect-mode"));
    assertEquals("base-url", AgentScopeConfigLoader.kebabCase("baseURL"));
    assertEquals("url-path", AgentScopeConfigLoader.kebabCase("URLPath"));
    assertEquals("api-key", AgentScopeConfigLoader.kebabCase("apiKey"));
    assertEquals("max-retries", AgentScopeConfigLoader.kebabCase("MaxRetries"));
    assertEquals("checkpoint-root-dir", AgentScopeConfigLoader.kebabCase("checkpoint_root_dir"));
  }
}
