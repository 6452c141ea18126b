package io.otl.node.config;

import static io.otl.node.config.TestFiles.sample;
import static io.otl.node.config.TestFiles.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TrainingSettingsValidatorTest {

  private static final String T = "agentscope.training.";

  @TempDir
  Path dir;

  private static Config hocon(String... lines) {
    return ConfigFactory.parseString(String.join("\n", lines));
  }

  private static ConfigValidationException invalid(Config c) {
    return assertThrows(ConfigValidationException.class,
        () -> TrainingSettingsValidator.validate(c));
  }

  @Test
  void defaultsHoldEveryKeyAndAreValid() {
    ValidationReport report = TrainingSettingsValidator.validate(ConfigFactory.empty());
    assertEquals(List.of(), report.unknownKeys());
    assertEquals(List.of(), report.warnings());
    Config d = TrainingSettingsValidator.defaults();
    for (String key : List.of("enabled", "persistence", "db.password",
        "data-collector.session.feedback-window", "data-collector.reward.weights.timeout",
        "training-runner.trigger.missed-slots", "training-runner.submit-retry.max-backoff",
        "model-update.tolerance.response-latency", "model-update.retain-previous")) {
      assertTrue(d.hasPath(T + key), key);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"settings.json", "config.toml"})
  void theAgentScopeSamplesValidateWithoutErrorsOrUnknownKeys(String name) {
    Config c = AgentScopeConfigLoader.load(sample(name), Map.of()); // MODEL_API_KEY unset
    ValidationReport report = TrainingSettingsValidator.validate(c);
    assertEquals(List.of(), report.unknownKeys());
  }

  /**
   * application.yml asks for oss, which this node cannot write to: it loads unchanged (design §8), and
   * each oss key gets a warning that says what the node does instead; a value that is no store type at
   * all is still refused.
   */
  @Test
  void theOssSampleLoadsWithAWarningPerOssKey() {
    // its pattern list's own warning is aPatternListThatLeavesBuiltInsOutIsWarnedAbout's
    Config c = AgentScopeConfigLoader.load(sample("application.yml"), Map.of())
        .withoutPath(T + "data-collector.desensitize.patterns");
    ValidationReport report = TrainingSettingsValidator.validate(c);
    assertEquals(List.of(), report.unknownKeys());
    assertEquals(List.of(
        T + "data-collector.store-type = \"oss\": this node has no OSS client (and the file no OSS credentials):"
            + " completed trajectories stay in the journal, as with database, and are read through the API and"
            + " export; set database or local to silence this",
        T + "data-collector.store-endpoint = \"oss-cn-hangzhou.aliyuncs.com\": not used: this node writes no OSS store",
        T + "data-collector.store-bucket = \"agent-trajectories\": not used: this node writes no OSS store"),
        report.warnings());
    Config s3 = c.withValue(T + "data-collector.store-type", com.typesafe.config.ConfigValueFactory.fromAnyRef("s3"));
    assertEquals(List.of(T + "data-collector.store-type = \"s3\": must be one of database, local (or oss, kept in"
        + " the journal)"), invalid(s3).errors());
    Config local = c.withValue(T + "data-collector.store-type", com.typesafe.config.ConfigValueFactory.fromAnyRef("local"))
        .withoutPath(T + "data-collector.store-endpoint").withoutPath(T + "data-collector.store-bucket");
    assertEquals(List.of(), TrainingSettingsValidator.validate(local).warnings(), "the rest of the file is clean");
    Config blankPath = local.withValue(T + "data-collector.store-path", com.typesafe.config.ConfigValueFactory.fromAnyRef(""));
    assertEquals(List.of(T + "data-collector.store-path = \"\": must be a folder (e.g. ./trajectories) when"
        + " store-type = local"), invalid(blankPath).errors());
  }

  /**
   * design §8's pattern list, which AgentScope's samples copy, leaves card numbers, IBANs and API keys raw
   * in the journal: honoured, but said at start-up (trial t5 found them stored with no word of it).
   */
  @Test
  void aPatternListThatLeavesBuiltInsOutIsWarnedAbout() {
    String key = T + "data-collector.desensitize.patterns";
    ValidationReport report = TrainingSettingsValidator.validate(hocon(key + " = [phone, id_card, email]"));
    assertEquals(List.of(key + " = [\"phone\",\"id_card\",\"email\"]: leaves out bank_card, iban, secret: what they"
        + " match is stored as sent (the export's final PII scan still refuses it); list all six, or leave the key"
        + " unset, to replace it"), report.warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(
        hocon(key + " = [phone, id_card, email, bank_card, iban, secret]")).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(hocon(key + " = [phone]",
        T + "data-collector.desensitize.enabled = false")).warnings(), "off: nothing is desensitized anyway");
    Config json = AgentScopeConfigLoader.load(sample("settings.json"), Map.of());
    // settings.json's key as it wrote it (trial t101)
    assertTrue(TrainingSettingsValidator.validate(json).warnings().stream()
        .anyMatch(w -> w.startsWith(T + "dataCollector.desensitize.patterns = ")));
  }

  /**
   * Trial t12: agent keys set and auth.token empty left every route but the gateway open (a version at
   * an attacker's endpoint registered and promoted without a token) with no word at start-up.
   */
  @Test
  void agentKeysWithoutAnApiTokenAreWarnedAboutWithoutShowingTheKeys() {
    String keys = "agentscope.training.gateway.agents { bot-a { api-key = \"akey-s3cret\" } }";
    List<String> open = TrainingSettingsValidator.validate(hocon(keys)).warnings();
    assertEquals(1, open.stream().filter(w -> w.startsWith(T + "gateway.agents: agent keys guard only the gateway")
        && w.contains("auth.token")).count(), open.toString());
    assertFalse(open.toString().contains("akey-s3cret"), open.toString());
    assertEquals(List.of(), TrainingSettingsValidator.validate(hocon(keys,
        "agentscope.training.auth.token = \"t0k\"")).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(hocon(keys,
        "agentscope.training.auth.operators { alice = \"al1ce\" }")).warnings());
  }

  /** Trial t12: the vLLM client appends /v1/load_lora_adapter to the URL; a query swallowed it (and held a key). */
  @Test
  void aVllmUrlWithAQueryIsRefusedWithoutShowingIt() {
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.serving.vllm.url = \"http://127.0.0.1:8000?api_key=sk-leak\""));
    assertEquals(List.of(T + "serving.vllm.url: must not have a query or fragment (?…, #…), which the paths appended"
        + " to it would follow; give a key as agentscope.training.serving.vllm.api-key"), e.errors(), e.getMessage());
  }

  /**
   * Trial t59: {@code OTL_VLLM_URL=ftp://x} (or {@code notaurl}) started the node, which then sent every
   * adapter load and every routed call to a URL no HTTP client can call; the model section's
   * {@code base_url} and {@code trinity-endpoint} were already held to an http(s) URL.
   */
  @Test
  void aVllmUrlThatIsNoHttpUrlIsRefusedByKey() {
    TrainingSettingsValidator.validate(hocon("agentscope.training.serving.vllm.url = \"\""));
    TrainingSettingsValidator.validate(hocon("agentscope.training.serving.vllm.url = \"https://vllm.internal:8000/v1\""));
    for (String bad : List.of("ftp://x", "notaurl", "http://")) {
      ConfigValidationException e = invalid(hocon("agentscope.training.serving.vllm.url = \"" + bad + "\""));
      assertEquals(1, e.errors().size(), e.getMessage());
      assertTrue(e.errors().get(0).startsWith(T + "serving.vllm.url = \"" + bad + "\": must be empty (the simulator"
          + " in this node) or an http:// or https:// URL with a host"), e.getMessage());
    }
  }

  /** Model names go upstream, into Trinity's YAML and into log lines as written: a newline split them. */
  @Test
  void modelNamesWithControlCharactersAreRefusedByKey() {
    TrainingSettingsValidator.validate(hocon("agentscope.training.training-runner.base-model = \"Qwen/Qwen2.5-7B\"",
        "agentscope.training.serving.static.served-model = \"my-lora:v1\""));
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.training-runner.base-model = \"qwen\\nINFO forged line\"",
        "agentscope.training.serving.static.served-model = \"m\\tx\"",
        "agentscope.training.training-runner.hyperparams.teacher-model = \"t\\u2028x\""));
    assertEquals(List.of(
        T + "serving.static.served-model = \"m\\tx\": must be a name without control characters (newline, tab …)",
        T + "training-runner.base-model = \"qwen\\nINFO forged line\": must be a name without control characters"
            + " (newline, tab …)",
        T + "training-runner.hyperparams.teacher-model = \"t\\u2028x\": must be a name without control"
            + " characters (newline, tab …)"),
        e.errors().stream().sorted().toList(), e.getMessage());
  }

  @Test
  void datasetFiltersAreKnownAndChecked() {
    TrainingSettingsValidator.validate(hocon(
        "agentscope.training.training-runner { sft-min-reward = 0.8, dpo-min-margin = 1 }"));
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.training-runner { sft-min-reward = high, dpo-min-margin = 0 }"));
    assertEquals(List.of(
        T + "training-runner.sft-min-reward = \"high\": must be a number <= 1",
        T + "training-runner.dpo-min-margin = 0: must be a number in (0, 2]"), e.errors(), e.getMessage());
  }

  /**
   * Trial t43: rewards are clipped to [-1, 1], so {@code sft-min-reward = 4} (a rating of 4 of 5
   * read as a reward) made every SFT job fail its pre-flight on an empty dataset, and a margin
   * above 2 paired no answers; both started the node.
   */
  @Test
  void datasetFiltersBeyondTheRewardRangeStopTheNode() {
    TrainingSettingsValidator.validate(hocon(
        "agentscope.training.training-runner { sft-min-reward = -1, dpo-min-margin = 2 }"));
    // Below -1 selects every trajectory, as -1 does: a file saying "no filter" with -1e9 loads.
    TrainingSettingsValidator.validate(hocon("agentscope.training.training-runner { sft-min-reward = -1e9 }"));
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.training-runner { sft-min-reward = 4, dpo-min-margin = 2.5 }"));
    assertEquals(List.of(
        T + "training-runner.sft-min-reward = 4: must be a number <= 1",
        T + "training-runner.dpo-min-margin = 2.5: must be a number in (0, 2]"), e.errors(), e.getMessage());
  }

  @Test
  void continualTrainingKeysAreKnownAndChecked() {
    TrainingSettingsValidator.validate(hocon("agentscope.training.training-runner { start-from = base,"
        + " replay-fraction = 0, data-half-life = 7d, eval-fraction = 0.25 }"));
    ConfigValidationException e = invalid(hocon("agentscope.training.training-runner { start-from = newest,"
        + " replay-fraction = 1, data-half-life = soon, eval-fraction = -0.1 }"));
    assertEquals(4, e.errors().size(), e.getMessage());
    for (String key : List.of("start-from = \"newest\"", "replay-fraction = 1", "data-half-life = \"soon\"",
        "eval-fraction = -0.1")) {
      assertTrue(e.errors().stream().anyMatch(x -> x.startsWith(T + "training-runner." + key)), key + " in " + e.errors());
    }
    assertTrue(e.getMessage().contains("stable") && e.getMessage().contains("base"), e.getMessage());
  }

  @Test
  void typosAreReportedByFullNameWithASuggestion() {
    Path yml = write(dir, "typo.yml", String.join("\n",
        "agentscope:",
        "  training:",
        "    data-collector:",
        "      sampel-rate: 0.5",
        "    trainingRuner:",
        "      algorithm: sft",
        "    model-update:",
        "      tolerance:",
        "        latency: 0.1",
        "      autoDeploy: false",
        ""));
    ValidationReport report = TrainingSettingsValidator.validate(
        AgentScopeConfigLoader.load(yml, Map.of()));
    assertEquals(List.of(T + "data-collector.sampel-rate", T + "model-update.tolerance.latency",
        T + "trainingRuner"), report.unknownKeys().stream().sorted().toList()); // as written (trial t52)
    String warnings = String.join("\n", report.warnings());
    assertTrue(warnings.contains(T + "data-collector.sampel-rate: unknown key, ignored"
        + " (did you mean sample-rate?)"), warnings);
    assertTrue(warnings.contains(T + "trainingRuner: unknown key, ignored"
        + " (did you mean trainingRunner?)"), warnings);
    assertFalse(report.unknownKeys().contains(T + "model-update.auto-deploy"));
  }

  /**
   * A configuration that fails start-up still names its unknown keys (design §8): the node never
   * starts to log them as warnings, and the typo is often the reason a value is wrong or missing.
   */
  @Test
  void unknownKeysAreNamedBesideTheErrorsThatStopTheStart() {
    String m = invalid(hocon(
        "agentscope.training.data-collector.collect-mode = partial",
        "agentscope.training.training-runner.trigger.min-sampels = 50")).getMessage();
    assertTrue(m.startsWith("Invalid configuration (1 error):"), m);
    assertTrue(m.contains(T + "data-collector.collect-mode = \"partial\": must be one of full, sampled"), m);
    assertTrue(m.contains("Also found (not errors):"), m);
    assertTrue(m.contains(T + "training-runner.trigger.min-sampels: unknown key, ignored (did you mean min-samples?)"), m);
  }

  /**
   * A hyperparameter no job reads would train with the default in its place: an unknown name is an
   * error (not a warning), naming the key, the close known name and every known one.
   */
  @Test
  void anUnknownHyperparameterIsAnErrorNamingTheKnownOnes() {
    String m = invalid(hocon("agentscope.training.training-runner.hyperparams.lerning-rate = 1e-5")).getMessage();
    assertTrue(m.contains(T + "training-runner.hyperparams.lerning-rate: not a hyperparameter the training backend "
        + "reads (did you mean learning-rate?); known: learning-rate, batch-size, epochs, warmup-ratio,"), m);
    for (String name : io.otl.node.trinity.Hyperparameters.names()) {
      assertTrue(m.contains(name), name);
    }
    // Another spelling of a known name is not the name: one spelling per hyperparameter.
    m = invalid(hocon("agentscope.training.training-runner.hyperparams.lr = 1e-5")).getMessage();
    assertTrue(m.contains(T + "training-runner.hyperparams.lr: not a hyperparameter"), m);
    m = invalid(hocon("agentscope.training.training-runner.hyperparams.learning_rate = 1e-5")).getMessage();
    assertTrue(m.contains("(did you mean learning-rate?)"), m);
  }

  /**
   * A file that sets only {@code canary-ratio} at or above the default steps' first ratio starts: the
   * default steps above it follow (trial t119: {@code canary-ratio = 0.2} failed start-up on
   * {@code model-update.steps}, a key the file never wrote). Steps the file sets must start above it.
   */
  @Test
  void theDefaultStepsFollowAnyCanaryRatioWhileStepsSetMustStartAboveIt() {
    Config onlyRatio = hocon("agentscope.training.model-update.canary-ratio = 0.2");
    assertEquals(List.of(), TrainingSettingsValidator.validate(onlyRatio).unknownKeys());
    assertEquals(List.of(0.2, 0.5, 1.0), io.otl.core.model.ModelSettings.fromConfig(
        onlyRatio.withFallback(TrainingSettingsValidator.defaults()).getConfig("agentscope.training")).steps());
    String m = invalid(hocon("agentscope.training.model-update { canary-ratio = 0.2, steps = [0.2, 1.0] }"))
        .getMessage();
    assertTrue(m.contains(T + "model-update.steps = [0.2,1]: must be ratios above model-update.canary-ratio (0.2)"), m);
  }

  /** Every name the renderer reads is accepted, and its value checked before a job would fail on it. */
  @Test
  void everyKnownHyperparameterIsAcceptedAndItsValueChecked() {
    ValidationReport report = TrainingSettingsValidator.validate(hocon(
        "agentscope.training.training-runner.hyperparams {",
        "  total-steps = 10, max-model-len = 4096, max-response-tokens = 512, repeat-times = 4,",
        "  save-interval = 5, lr-scheduler-type = cosine, workflow-type = simple_workflow,",
        "  reward-fn-type = accuracy_reward, eval-reward-fn-type = \"\", teacher-model = \"Qwen/Qwen2.5-72B\",",
        "  teacher-tensor-parallel-size = 2, kl-coef = 0.5, lora-rank = 8, lora-alpha = 16 }"));
    assertEquals(List.of(), report.unknownKeys());
    String m = invalid(hocon("agentscope.training.training-runner.hyperparams { lora-rank = 0, kl-coef = -1 }"))
        .getMessage();
    assertTrue(m.contains(T + "training-runner.hyperparams.lora-rank = 0: must be an integer >= 1"), m);
    assertTrue(m.contains(T + "training-runner.hyperparams.kl-coef = -1: must be a number >= 0"), m);
  }

  /** A key one section off names where it belongs: a misplaced privacy rule must not go by unnoticed. */
  @Test
  void aKeyInTheWrongSectionPointsToWhereItBelongs() {
    ValidationReport report = TrainingSettingsValidator.validate(
        hocon("agentscope.training.desensitize.custom = [\"secret-[0-9]+\"]"));
    assertEquals(List.of(T + "desensitize"), report.unknownKeys());
    assertTrue(report.warnings().get(0).endsWith("unknown key, ignored (did you mean "
        + T + "data-collector.desensitize?)"), report.warnings().toString());
  }

  @Test
  void camelCaseKeysInHoconAreUnknownAndPointToTheKebabName() {
    ValidationReport report = TrainingSettingsValidator.validate(
        hocon("agentscope.training.modelUpdate.autoDeploy = false"));
    assertEquals(List.of(T + "modelUpdate"), report.unknownKeys());
    assertTrue(report.warnings().get(0).contains("did you mean model-update?"));
  }

  @Test
  void everyWrongValueIsReportedInOneMessageWithKeyValueAndAllowed() {
    Config c = hocon(
        "agentscope.training {",
        "  enabled = maybe",
        "  persistence = mysql",
        "  data-collector {",
        "    collect-mode = partial",
        "    sample-rate = 1.5",
        "    store-type = s3",
        "    max-text-length = 0",
        "    max-events-per-request = 2.5",
        "    desensitize { enabled = 1, patterns = [phone, fone], custom = [\"ok\\\\d\", \"([a-z\"] }",
        "    session { idle-timeout = 0s, feedback-window = -1s, passivate-after = soon }",
        "    reward.weights.thumbs-up = lots",
        "  }",
        "  training-runner {",
        "    trinity-endpoint = \"ftp://x\"",
        "    backend = local",
        "    trigger { type = \"threshold, sometimes\", cron = \"0 0 25 * * ?\", min-samples = -3,"
            + " missed-slots = later }",
        "    algorithm = rlhf",
        "    base-model = \"\"",
        "    hyperparams { learning-rate = 0, batch-size = \"x\", epochs = 0, warmup-ratio = 2,"
            + " bench-metrics = \"upstream-error-rate=accuracy\" }",
        "    min-quality = -0.1",
        "    poll-interval = 0",
        "    submit-retry { min-backoff = 10s, max-backoff = 1s }",
        "  }",
        "  model-update {",
        "    auto-deploy = sometimes",
        "    canary-ratio = 1",
        "    evaluation-metrics = [task-success-rate, accuracy]",
        "    steps = [0.5, 0.2, 1.0]",
        "    step-duration = forever",
        "    min-samples-per-step = 0",
        "    confidence = 0.5",
        "    tolerance.response-latency = -1",
        "    retain-previous = 0d",
        "  }",
        "}");
    ConfigValidationException e = invalid(c);
    String m = e.getMessage();
    List<String> expected = List.of(
        T + "enabled = \"maybe\": must be true or false",
        T + "persistence = \"mysql\": must be one of h2, postgres",
        T + "data-collector.collect-mode = \"partial\": must be one of full, sampled",
        T + "data-collector.sample-rate = 1.5: must be a number in [0, 1]",
        T + "data-collector.store-type = \"s3\": must be one of database, local",
        T + "data-collector.max-text-length = 0: must be an integer >= 1",
        T + "data-collector.max-events-per-request = 2.5: must be an integer >= 1",
        T + "data-collector.desensitize.enabled = 1: must be true or false",
        T + "data-collector.desensitize.patterns[1] = \"fone\": must be one of phone, id_card, email, bank_card, iban, secret",
        T + "data-collector.desensitize.custom[1] = \"([a-z\": must be a valid Java regular"
            + " expression (Unclosed character class near index 4)",
        T + "data-collector.session.idle-timeout = \"0s\": must be a duration > 0",
        T + "data-collector.session.feedback-window = \"-1s\": must be a duration >= 0",
        T + "data-collector.session.passivate-after = \"soon\": must be a duration > 0",
        T + "data-collector.reward.weights.thumbs-up = \"lots\": must be a number",
        T + "training-runner.trinity-endpoint = \"ftp://x\": must be an http:// or https:// URL",
        T + "training-runner.backend = \"local\": must be one of ray-jobs, trinity-proxy",
        T + "training-runner.trigger.type = \"threshold, sometimes\": must be one or more of"
            + " threshold, scheduled, manual",
        T + "training-runner.trigger.cron = \"0 0 25 * * ?\": must be a 6-field cron expression",
        T + "training-runner.trigger.min-samples = -3: must be an integer >= 1",
        T + "training-runner.trigger.missed-slots = \"later\": must be one of fire, skip",
        T + "training-runner.algorithm = \"rlhf\": must be one of sft, ppo, grpo, dpo, distillation",
        T + "training-runner.base-model = \"\": must be a non-empty string",
        T + "training-runner.hyperparams.learning-rate = 0: must be a number > 0",
        T + "training-runner.hyperparams.batch-size = \"x\": must be an integer >= 1",
        T + "training-runner.hyperparams.epochs = 0: must be an integer >= 1",
        T + "training-runner.hyperparams.warmup-ratio = 2: must be a number in [0, 1]",
        T + "training-runner.hyperparams.bench-metrics = \"upstream-error-rate=accuracy\": must be a"
            + " comma-separated list of <evaluation metric>=<Trinity bench metric>, e.g."
            + " \"task-success-rate=accuracy\"",
        T + "training-runner.min-quality = -0.1: must be a number in [0, 1]",
        T + "training-runner.poll-interval = 0: must be a duration > 0",
        T + "training-runner.submit-retry.max-backoff = \"1s\": must be a duration >="
            + " submit-retry.min-backoff",
        T + "model-update.auto-deploy = \"sometimes\": must be true or false",
        T + "model-update.canary-ratio = 1: must be a number in (0, 1)",
        T + "model-update.evaluation-metrics[1] = \"accuracy\": must be one of task-success-rate,"
            + " user-satisfaction, response-latency",
        T + "model-update.steps = [0.5,0.2,1]: must be a list of numbers in (0, 1], increasing,"
            + " ending at 1.0 (not increasing at index 1)",
        T + "model-update.step-duration = \"forever\": must be a duration > 0",
        T + "model-update.min-samples-per-step = 0: must be an integer >= 1",
        T + "model-update.confidence = 0.5: must be a number in (0.5, 1)",
        T + "model-update.tolerance.response-latency = -1: must be a number >= 0",
        T + "model-update.retain-previous = \"0d\": must be a duration > 0");
    for (String fragment : expected) {
      assertTrue(m.contains(fragment), "missing «" + fragment + "» in:\n" + m);
    }
    assertEquals(expected.size(), e.errors().size(), m);
    assertTrue(m.contains("hours field \"25\""), m);
  }

  @Test
  void httpEdgeLimitsAreValidated() {
    String m = invalid(hocon(
        "agentscope.training.http.max-json-depth = 1",
        "agentscope.training.http.metrics-top-agents = 0",
        "agentscope.training.http.max-connections-per-address = -1")).getMessage();
    assertTrue(m.contains(T + "http.max-json-depth = 1: must be an integer from 2 to 1000"), m);
    assertTrue(m.contains(T + "http.max-connections-per-address = -1"), m);
    assertTrue(m.contains(T + "http.metrics-top-agents = 0"), m);
    assertTrue(invalid(hocon("agentscope.training.http.max-json-depth = 5000")).getMessage()
        .contains("http.max-json-depth"));
    TrainingSettingsValidator.validate(hocon("agentscope.training.http.max-json-depth = 64",
        "agentscope.training.http.max-connections-per-address = 0",
        "agentscope.training.auth.metrics-token = \"scrape\""));
  }

  @Test
  void aWrongTypeGetsTheSameStyleOfMessage() {
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.data-collector.sample-rate = [0.1]",
        "agentscope.training.data-collector.desensitize.patterns = phone",
        "agentscope.training.training-runner.hyperparams = 3",
        "agentscope.training.model-update.auto-deploy { x = 1 }"));
    String m = e.getMessage();
    assertTrue(m.contains(T + "data-collector.sample-rate = [0.1]: must be a number in [0, 1]"), m);
    assertTrue(m.contains(T + "data-collector.desensitize.patterns = \"phone\": must be a list of:"
        + " phone, id_card, email, bank_card, iban, secret"), m);
    assertTrue(m.contains(T + "training-runner.hyperparams = 3: must be a section with the keys"
        + " learning-rate, batch-size, epochs, warmup-ratio, total-steps,"), m);
    assertTrue(m.contains(T + "model-update.auto-deploy = {\"x\":1}: must be true or false"), m);
    assertEquals(4, e.errors().size(), m);
  }

  @Test
  void stringsFromSystemPropertiesAreAcceptedWhereTheyParse() {
    ValidationReport report = TrainingSettingsValidator.validate(hocon(
        "agentscope.training.data-collector.sample-rate = \"0.5\"",
        "agentscope.training.enabled = \"off\"",
        "agentscope.training.training-runner.trigger.min-samples = \"200\"",
        "agentscope.training.training-runner.hyperparams.learning-rate = \"2e-5\"",
        "agentscope.training.data-collector.desensitize.patterns.0 = email"));
    assertEquals(List.of(), report.unknownKeys());
  }

  @Test
  void tomlScientificNotationIsANumber() {
    Path toml = write(dir, "lr.toml", "[training.training_runner.hyperparams]\n"
        + "learning_rate = 2e-5\nbatch_size = 8\n");
    Config c = AgentScopeConfigLoader.load(toml, Map.of());
    TrainingSettingsValidator.validate(c);
    assertEquals(2e-5, c.getDouble(T + "training-runner.hyperparams.learning-rate"));
  }

  @Test
  void triggerTypeMayBeAStringAListOrACommaSeparatedString() {
    String key = "agentscope.training.training-runner.trigger.type";
    TrainingSettingsValidator.validate(hocon(key + " = scheduled"));
    TrainingSettingsValidator.validate(hocon(key + " = [threshold, scheduled, manual]"));
    TrainingSettingsValidator.validate(hocon(key + " = \"threshold, manual\""));
    String m = invalid(hocon(key + " = [threshold, cron]")).getMessage();
    assertTrue(m.contains("\"cron\" is not one"), m);
    assertTrue(invalid(hocon(key + " = \"\"")).getMessage().contains(key + " = \"\""));
  }

  @Test
  void scheduledTriggerNeedsAValidCronThatFires() {
    String tr = "agentscope.training.training-runner.trigger.";
    String m = invalid(hocon(tr + "type = scheduled", tr + "cron = \"\"")).getMessage();
    assertTrue(m.contains(tr + "cron = \"\": must be a 6-field cron expression such as"
        + " \"0 0 2 * * ?\" when trigger.type includes scheduled"), m);
    TrainingSettingsValidator.validate(hocon(tr + "type = threshold", tr + "cron = \"\""));
    m = invalid(hocon(tr + "cron = \"0 0 0 31 2 ?\"")).getMessage();
    assertTrue(m.contains("never matches"), m);
    m = invalid(hocon(tr + "cron = \"0 0 2 * *\"")).getMessage();
    assertTrue(m.contains(tr + "cron = \"0 0 2 * *\": must be a 6-field cron"), m);
    TrainingSettingsValidator.validate(hocon(tr + "cron = \"0 */15 9-17 ? * MON-FRI\""));
  }

  /**
   * An AgentScope Java user writes Spring's cron, where 1-5 is MON-FRI; read as Quartz (1 = SUN) it fires
   * SUN-THU. Accepted as before, but start-up says which days the numbers name (it said nothing, trial t142).
   */
  @Test
  void aCronWithDayNumbersSaysWhichDaysTheyName() {
    String key = "agentscope.training.training-runner.trigger.cron";
    assertEquals(List.of(key + " = \"0 0 2 * * 1-5\": fires on SUN-THU: day-of-week numbers count as in Quartz,"
        + " 1 = SUN … 7 = SAT (Spring's @Scheduled counts 1 = MON … 7 = SUN); write the days as names (MON-FRI)"
        + " to say which are meant"), TrainingSettingsValidator.validate(hocon(key + " = \"0 0 2 * * 1-5\"")).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(hocon(key + " = \"0 0 2 ? * MON-FRI\"")).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(hocon(key + " = \"0 0 2 * * ?\"")).warnings());
  }

  @Test
  void stepsMustEndAtOneAndStartAboveTheCanaryRatio() {
    String mu = "agentscope.training.model-update.";
    String m = invalid(hocon(mu + "steps = [0.2, 0.5]")).getMessage();
    assertTrue(m.contains(mu + "steps = [0.2,0.5]: must be a list of numbers in (0, 1],"
        + " increasing, ending at 1.0"), m);
    m = invalid(hocon(mu + "canary-ratio = 0.3", mu + "steps = [0.2, 1.0]")).getMessage();
    assertTrue(m.contains("above model-update.canary-ratio (0.3)"), m);
    m = invalid(hocon(mu + "steps = [0, 1.0]")).getMessage();
    assertTrue(m.contains(mu + "steps[0] = 0: must be a number in (0, 1]"), m);
    TrainingSettingsValidator.validate(hocon(mu + "steps = [1.0]"));
  }

  @Test
  void postgresNeedsAPostgresUrl() {
    String m = invalid(hocon("agentscope.training.persistence = postgres")).getMessage();
    assertTrue(m.contains(T + "db.url = \"\": must be set when persistence = postgres"), m);
    TrainingSettingsValidator.validate(hocon("agentscope.training.persistence = postgres",
        "agentscope.training.db.url = \"jdbc:postgresql://db:5432/otl\""));
  }

  @Test
  void secretValuesAreMaskedInEveryMessageAndReport() {
    String secret = "correct-horse-battery-staple";
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.db.password = [\"" + secret + "\"]",
        "agentscope.training.db.api-token { value = \"" + secret + "\" }",
        "agentscope.training.data-collector.sample-rate = 7"));
    assertTrue(e.getMessage().contains(T + "db.password = ****: must be a string"),
        e.getMessage());
    assertFalse(e.getMessage().contains(secret), e.getMessage());
    assertFalse(e.toString().contains(secret));

    ValidationReport report = TrainingSettingsValidator.validate(hocon(
        "agentscope.training.db.password = \"" + secret + "\"",
        "agentscope.training.db.secret-key = \"" + secret + "\""));
    assertEquals(List.of(T + "db.secret-key"), report.unknownKeys());
    assertFalse(report.toString().contains(secret), report.toString());
  }

  @Test
  void aNonSectionTrainingRootIsAnError() {
    String m = invalid(hocon("agentscope.training = 5")).getMessage();
    assertTrue(m.contains("agentscope.training = 5: must be a section of settings"), m);
  }

  /**
   * An RL algorithm on the default one-GPU Trinity cluster starts (the simulator runs it) with a
   * warning naming gpu-per-node, since Trinity-RFT refuses the rendered config; with 2 GPUs, sft,
   * or trinity-proxy there is none.
   */
  @Test
  void anRlAlgorithmOnOneGpuStartsWithAWarningNamingGpuPerNode() {
    Config grpo = ConfigFactory.parseString(T + "training-runner.algorithm = grpo");
    List<String> warnings = TrainingSettingsValidator.validate(grpo).warnings();
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).startsWith(T + "training-runner.trinity.gpu-per-node = 1: grpo needs at least 2 GPUs"),
        warnings.get(0));
    assertEquals(List.of(), TrainingSettingsValidator.validate(
        grpo.withFallback(ConfigFactory.parseString(T + "training-runner.trinity.gpu-per-node = 2"))).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(
        grpo.withFallback(ConfigFactory.parseString(T + "training-runner.backend = trinity-proxy"))).warnings());
    assertEquals(List.of(), TrainingSettingsValidator.validate(
        ConfigFactory.parseString(T + "training-runner.algorithm = dpo")).warnings());
  }

  /**
   * PUT /v1/training/{agentId}/policy with {"trigger.min-samples":99999999999999999999} answered
   * "must be an integer >= 1" (trial t9): the value is one, the bound it passed was not said.
   */
  @Test
  void anIntegerPastTheLargestIsToldTheUpperBound() {
    String m = invalid(hocon("agentscope.training.training-runner.trigger.min-samples = 3000000000")).getMessage();
    assertTrue(m.contains(T + "training-runner.trigger.min-samples = 3000000000: must be an integer from 1 to 2147483647"),
        m);
    m = invalid(hocon("agentscope.training.training-runner.trigger.min-samples = 0")).getMessage();
    assertTrue(m.contains(T + "training-runner.trigger.min-samples = 0: must be an integer >= 1"), m);
  }

  /**
   * Trial t34: the Authorization header's token is read trimmed, so an auth.token, metrics token or
   * agent key with white space or a newline around it (a secret file's last line) matched no request:
   * the node started and answered every call 401 "the bearer token is wrong". Refused by key, masked.
   */
  @Test
  void bearerSecretsWithWhiteSpaceAroundThemAreRefusedWithoutShowingThem() {
    TrainingSettingsValidator.validate(hocon("agentscope.training.auth.token = \"in side\"",
        "agentscope.training.gateway.agents { a1 { api-key = \"k-1\" } }"));
    ConfigValidationException e = invalid(hocon(
        "agentscope.training.auth.token = \"s3cret-op\\n\"",
        "agentscope.training.auth.metrics-token = \" s3cret-m\"",
        "agentscope.training.gateway.agents { a1 { api-key = \"s3cret-a \" }, \"a.2\" { api-key = \"\\ts3cret-b\" } }"));
    String must = ": must be a token without white space or a control character (a newline …) at its start or end:"
        + " the Authorization header's token is read trimmed, so no request could match it; remove it";
    assertEquals(List.of(T + "auth.metrics-token = ****" + must, T + "auth.token = ****" + must,
        T + "gateway.agents.a.2.api-key = ****" + must, T + "gateway.agents.a1.api-key = ****" + must),
        e.errors().stream().sorted().toList(), e.getMessage());
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }

  /** Trial t34: an agent key equal to the metrics token let that agent's client read /metrics. */
  @Test
  void anAgentKeyEqualToTheMetricsTokenIsRefused() {
    ConfigValidationException e = invalid(hocon("agentscope.training.auth.metrics-token = \"s3cret-m\"",
        "agentscope.training.gateway.agents { a1 { api-key = \"s3cret-m\" } }"));
    assertEquals(List.of(T + "gateway.agents.a1.api-key: the same secret as " + T + "auth.metrics-token; give the"
        + " agent a key of its own, or its client reads /metrics (every agent's figures)"), e.errors(), e.getMessage());
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }
}
