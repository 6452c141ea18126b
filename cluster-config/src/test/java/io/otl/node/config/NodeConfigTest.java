package io.otl.node.config;

import static io.otl.node.config.TestFiles.sample;
import static io.otl.node.config.TestFiles.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.LogCapture;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeConfigTest {

  private static final String T = "agentscope.training.";

  @TempDir
  Path dir;

  @Test
  void withoutAFileTheDefaultsApply() {
    Config c = NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of());
    assertEquals("h2", c.getString(T + "persistence"));
    assertEquals(1000, c.getInt(T + "training-runner.trigger.min-samples"));
  }

  @Test
  void theTrinityEndpointFollowsTheNodesSimulatorUnlessConfigured() {
    assertEquals("http://127.0.0.1:8265", NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of())
        .getString(T + "training-runner.trinity-endpoint"));
    Config moved = ConfigFactory.parseString("agentscope.training.simulator.port = 18465");
    assertEquals("http://127.0.0.1:18465", NodeConfig.resolve(Optional.empty(), moved, Map.of())
        .getString(T + "training-runner.trinity-endpoint"), "jobs go where the simulator listens");
    Config configured = moved.withFallback(ConfigFactory.parseString(
        "agentscope.training.training-runner.trinity-endpoint = \"http://ray-head:8265\""));
    assertEquals("http://ray-head:8265", NodeConfig.resolve(Optional.empty(), configured, Map.of())
        .getString(T + "training-runner.trinity-endpoint"), "a configured endpoint wins");
  }

  /**
   * On the embedded default every job went SUBMITTED → SUCCEEDED: the simulator ran it for 5 s, the
   * coordinator polls every 10 s, so no poll saw it RUNNING and the console's jobs table said it
   * never ran. A simulated job now runs longer than a poll interval.
   */
  @Test
  void theEmbeddedSimulatorRunsAJobLongerThanTheCoordinatorsPollInterval() {
    Config c = NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of());
    java.time.Duration running = c.getDuration("agentscope.training.simulator.running");
    java.time.Duration poll = c.getDuration("agentscope.training.training-runner.poll-interval");
    assertTrue(running.compareTo(poll.plusSeconds(5)) >= 0,
        "a simulated job runs " + running + ", the coordinator polls every " + poll);
  }

  @Test
  void theUsersFileOverridesBaseWhichOverridesDefaults() {
    Config base = ConfigFactory.parseString(
        "agentscope.training.training-runner.hyperparams.epochs = 5\n"
            + "agentscope.training.training-runner.backend = trinity-proxy\n");
    Config c = NodeConfig.resolve(Optional.of(sample("config.toml")), base, Map.of());
    assertEquals(2, c.getInt(T + "training-runner.hyperparams.epochs"), "file over base");
    assertEquals("trinity-proxy", c.getString(T + "training-runner.backend"), "base over defaults");
    assertEquals(0.6, c.getDouble(T + "training-runner.min-quality"), "defaults");
  }

  @Test
  void environmentOverridesTheFileAndSystemPropertiesOverrideTheEnvironment() {
    Path file = write(dir, "p.yml", "agentscope:\n  training:\n    persistence: h2\n"
        + "    db:\n      user: from-file\n");
    Map<String, String> env = Map.of("OTL_PERSISTENCE", "postgres",
        "OTL_DB_URL", "jdbc:postgresql://db:5432/otl", "OTL_DB_USER", "from-env",
        "OTL_DB_PASSWORD", "pw-from-env");
    Config c = NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), env);
    assertEquals("postgres", c.getString(T + "persistence"));
    assertEquals("jdbc:postgresql://db:5432/otl", c.getString(T + "db.url"));
    assertEquals("from-env", c.getString(T + "db.user"));
    assertEquals("pw-from-env", c.getString(T + "db.password"));

    String property = T + "db.user";
    System.setProperty(property, "from-property");
    try {
      c = NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), env);
      assertEquals("from-property", c.getString(T + "db.user"));
    } finally {
      System.clearProperty(property);
    }
  }

  @Test
  void unknownKeysAreLoggedOneWarnLinePerKey() {
    Path file = write(dir, "u.json", "{\"agentscope\":{\"training\":{\"enabeld\":true,"
        + "\"dataCollector\":{\"sampleRat\":0.2}}}}");
    try (LogCapture log = new LogCapture(NodeConfig.class)) {
      NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), Map.of());
      List<String> warnings = log.lines("WARN");
      assertEquals(2, warnings.size(), warnings.toString());
      assertTrue(warnings.stream().anyMatch(w -> w.contains(T + "enabeld")), warnings.toString());
      assertTrue(warnings.stream().anyMatch(w -> w.contains(T + "dataCollector.sampleRat")), // as written
          warnings.toString());
    }
  }

  @Test
  void wrongValuesStopStartUpAndNameTheEnvironmentVariable() {
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(sample("application.yml")), ConfigFactory.empty(),
            Map.of("OTL_PERSISTENCE", "mysql")));
    assertTrue(e.getMessage().contains(T + "persistence = \"mysql\" (from environment variable"
        + " OTL_PERSISTENCE): must be one of h2, postgres"), e.getMessage());
  }

  @Test
  void theDatabasePasswordNeverAppearsInMessagesOrLogs() {
    String secret = "pg-pass-0xDEADBEEF";
    Path file = write(dir, "s.yml", "agentscope:\n  training:\n    persistence: postgres\n"
        + "    db:\n      password: ${PG_PASS}\n    data-collector:\n      sample-rate: 2\n"
        + "    passwort: x\n");
    try (LogCapture nodeLog = new LogCapture(NodeConfig.class);
        LogCapture loaderLog = new LogCapture(AgentScopeConfigLoader.class)) {
      ConfigValidationException e = assertThrows(ConfigValidationException.class,
          () -> NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(),
              Map.of("PG_PASS", secret, "OTL_DB_PASSWORD", secret)));
      assertEquals(2, e.errors().size(), e.getMessage()); // db.url missing, sample-rate
      assertFalse(e.getMessage().contains(secret), e.getMessage());
      assertTrue(nodeLog.lines().stream().noneMatch(l -> l.contains(secret)));
      assertTrue(loaderLog.lines().stream().noneMatch(l -> l.contains(secret)));
    }
  }

  @Test
  void theLocalStoreSamplesResolveWithTheModelKeyUnset() {
    for (String name : List.of("settings.json", "config.toml")) {
      Config c = NodeConfig.resolve(Optional.of(sample(name)), ConfigFactory.empty(), Map.of());
      assertTrue(c.getBoolean(T + "enabled"), name);
    }
    // application.yml asks for store-type oss: it loads, trajectories stay in the journal, and the log says so.
    try (LogCapture log = new LogCapture(NodeConfig.class)) {
      Config c = NodeConfig.resolve(Optional.of(sample("application.yml")), ConfigFactory.empty(), Map.of());
      assertTrue(c.getBoolean(T + "enabled"));
      assertTrue(log.lines("WARN").stream().anyMatch(l -> l.contains(T + "data-collector.store-type = \"oss\"")
          && l.contains("stay in the journal")), log.lines("WARN").toString());
    }
  }

  /**
   * The samples list design §8's three patterns and load unchanged; a listed set is exactly what
   * runs (cards, IBANs and keys stay as sent there), while a config that lists none gets all six.
   */
  @Test
  void aListOfPatternsIsExactlyWhatRunsAndTheDefaultIsAllSix() {
    String card = "card 4111 1111 1111 1111";
    for (String name : List.of("application.yml", "settings.json", "config.toml")) {
      Config c = NodeConfig.resolve(Optional.of(sample(name)), ConfigFactory.empty(), Map.of());
      io.otl.core.session.SessionSettings s = io.otl.core.session.SessionSettings.fromConfig(c.getConfig("agentscope.training"));
      assertEquals(List.of("phone", "id_card", "email"), s.desensitizePatterns(), name);
      assertEquals(card, s.desensitizer().apply(card), name);
      assertEquals("call [PHONE]", s.desensitizer().apply("call 13812345678"), name);
    }
    Config none = NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of());
    io.otl.core.session.SessionSettings s = io.otl.core.session.SessionSettings.fromConfig(none.getConfig("agentscope.training"));
    assertEquals(List.of("phone", "id_card", "email", "bank_card", "iban", "secret"), s.desensitizePatterns());
    assertEquals("card [BANK_CARD]", s.desensitizer().apply(card));
  }

  /**
   * Trial t50: application.yml with "trainin:" for "training:" started the node on its defaults, the file's
   * trigger, algorithm and desensitize patterns read by nobody and reported by nobody. A key directly under
   * agentscope other than its two sections is now an unknown key by name, with the section it resembles.
   */
  @Test
  void aMisspeltSectionIsReportedByNameWithTheSectionItResembles() throws Exception {
    String yml = java.nio.file.Files.readString(sample("application.yml"));
    assertTrue(yml.contains("\n  training:\n"), "the sample's training section");
    Path typo = write(dir, "application.yml", yml.replace("\n  training:\n", "\n  trainin:\n")
        + "  modle:\n    base-url: ftp://x\n  studio:\n    url: http://localhost:3000\n");
    assertEquals(List.of("agentscope.modle: unknown key, ignored (did you mean model?)",
        "agentscope.studio: unknown key, ignored",
        "agentscope.trainin: unknown key, ignored (did you mean training?)"),
        UnknownKeys.outsideTheSections(NodeConfig.resolve(Optional.of(typo), ConfigFactory.empty(), Map.of())));

    // Reported beside the errors when the start fails, as every other unknown key is.
    Path withError = write(dir, "config.toml", String.join("\n",
        "[model]", "base_url = \"ftp://x\"", "model_name = \"m\"", "[trainin]", "enabled = true", ""));
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(withError), ConfigFactory.empty(), Map.of()));
    assertEquals(List.of("agentscope.trainin: unknown key, ignored (did you mean training?)"), e.unknownKeys());

    // The three samples have no key outside the two sections.
    for (String sample : new String[] {"application.yml", "settings.json", "config.toml"}) {
      assertEquals(List.of(), UnknownKeys.outsideTheSections(
          NodeConfig.resolve(Optional.of(sample(sample)), ConfigFactory.empty(), Map.of())), sample);
    }
  }

  /**
   * A file with mistakes in both sections: the model section's errors stopped the start without the
   * training section's unknown key, and a model-section key nobody reads was never mentioned at all.
   */
  @Test
  void everySectionsErrorsAndUnknownKeysAreReportedTogether() {
    Path toml = write(dir, "config.toml", String.join("\n",
        "[model]", "base_url = \"ftp://x\"", "model_name = \"m\"", "timeout_seconds = \"abc\"", "temprature = 0.7",
        "[training]", "enabled = true", "enabeld = true", ""));
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(toml), ConfigFactory.empty(), Map.of()));
    assertEquals(2, e.errors().size(), e.getMessage());
    // The keys as the file wrote them (trial t101), as the unknown ones below.
    assertTrue(e.getMessage().contains("agentscope.model.base_url = \"ftp://x\": must be an http(s) URL"), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.model.timeout_seconds = \"abc\": must be a whole number from 1 to 86400"), e.getMessage());
    assertEquals(List.of(T + "enabeld: unknown key, ignored (did you mean enabled?)",
        "agentscope.model.temprature: unknown key, ignored"), e.unknownKeys());

    Path wrongTraining = write(dir, "both.toml", String.join("\n",
        "[model]", "base_url = \"ftp://x\"", "model_name = \"m\"", "[training]", "enabled = \"maybe\"", ""));
    ConfigValidationException both = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(wrongTraining), ConfigFactory.empty(), Map.of()));
    assertEquals(2, both.errors().size(), "the training section's error and the model section's: " + both.getMessage());

    Path typo = write(dir, "typo.toml", String.join("\n",
        "[model]", "base_url = \"http://127.0.0.1:9000/api\"", "model_name = \"m\"", "max_retrys = 2", ""));
    Config ok = NodeConfig.resolve(Optional.of(typo), ConfigFactory.empty(), Map.of());
    assertEquals(List.of("agentscope.model.max_retrys: unknown key, ignored (did you mean max_retries?)"),
        ModelSection.unknownKeys(ok));
  }

  /**
   * Trial t52: an unknown key was reported by its kebab-case name ({@code collect-mod}), which is not in
   * the user's file when it was written {@code collectMod} (settings.json) or {@code min_sample}
   * (config.toml, an application.yml in snake case). It is now named as written, with the suggestion in
   * the same style, in the warning of a start and in the listing of a failed one.
   */
  @Test
  void unknownKeysAreNamedAsTheFileWroteThem() throws Exception {
    String json = java.nio.file.Files.readString(sample("settings.json"));
    String toml = java.nio.file.Files.readString(sample("config.toml"));
    String yml = java.nio.file.Files.readString(sample("application.yml"));
    assertTrue(json.contains("\"collectMode\"") && json.contains("\"baseUrl\""), "the sample's keys");
    assertTrue(toml.contains("\nmin_samples = 200\n") && toml.contains("\nmax_retries = 3\n"), "the sample's keys");
    assertTrue(yml.contains("\n        cron: "), "the sample's trigger");
    Path jsonTypo = write(dir, "settings.json", json.replace("\"collectMode\"", "\"collectMod\"")
        .replace("\"baseUrl\"", "\"baseUrl\": \"http://127.0.0.1:9000/api\", \"baseUri\""));
    Path tomlTypo = write(dir, "config.toml", toml.replace("\nmin_samples = 200\n", "\nmin_sample = 200\n")
        .replace("\nmax_retries = 3\n", "\nmax_retries = 3\nmax_retrys = 3\n"));
    Path ymlTypo = write(dir, "application.yml", yml.replace("\n        cron: ", "\n        min_sample: 5\n        cron: "));
    Map<Path, List<String>> expected = Map.of(
        jsonTypo, List.of(T + "dataCollector.collectMod: unknown key, ignored (did you mean collectMode?)",
            "agentscope.model.baseUri: unknown key, ignored (did you mean baseUrl?)"),
        tomlTypo, List.of(T + "training_runner.trigger.min_sample: unknown key, ignored (did you mean min_samples?)",
            "agentscope.model.max_retrys: unknown key, ignored (did you mean max_retries?)"),
        ymlTypo, List.of(T + "training-runner.trigger.min_sample: unknown key, ignored (did you mean min_samples?)"));
    Map<String, String> env = Map.of("MODEL_API_KEY", "sk-test-key-1234");
    for (Map.Entry<Path, List<String>> c : expected.entrySet()) {
      Path file = c.getKey();
      try (LogCapture log = new LogCapture(NodeConfig.class)) {
        NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), env);
        List<String> unknown = log.lines("WARN").stream().filter(l -> l.contains("unknown key")).toList();
        assertEquals(c.getValue().size(), unknown.size(), file + ": " + unknown);
        for (String line : c.getValue()) {
          assertTrue(unknown.stream().anyMatch(l -> l.contains(line)), file + ": " + line + " in " + unknown);
        }
      }
      // The same names in the listing of a start that fails (here on a wrong value of enabled).
      String text = java.nio.file.Files.readString(file);
      String broken = file.toString().endsWith(".json") ? text.replace("\"enabled\": true,\n      \"dataCollector\"",
              "\"enabled\": \"maybe\",\n      \"dataCollector\"")
          : file.toString().endsWith(".toml") ? text.replace("[training]\nenabled = true", "[training]\nenabled = \"maybe\"")
          : text.replace("\n    enabled: true\n", "\n    enabled: maybe\n");
      assertFalse(broken.equals(text), file.toString());
      Path failing = write(dir, "failing-" + file.getFileName(), broken);
      ConfigValidationException e = assertThrows(ConfigValidationException.class,
          () -> NodeConfig.resolve(Optional.of(failing), ConfigFactory.empty(), env));
      assertEquals(1, e.errors().size(), e.getMessage());
      assertEquals(new java.util.HashSet<>(c.getValue()), new java.util.HashSet<>(e.unknownKeys()), e.getMessage());
      for (String line : c.getValue()) assertTrue(e.getMessage().contains(line), e.getMessage());
    }

    // A hyperparameter no job reads stops the start, named as written too.
    Path hyper = write(dir, "hyper.json", "{\"agentscope\":{\"training\":{\"trainingRunner\":"
        + "{\"hyperparams\":{\"learningRat\":0.1}}}}}");
    ConfigValidationException h = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(hyper), ConfigFactory.empty(), Map.of()));
    assertTrue(h.getMessage().contains(T + "trainingRunner.hyperparams.learningRat: not a hyperparameter the training"
        + " backend reads (did you mean learningRate?)"), h.getMessage());
  }
}
