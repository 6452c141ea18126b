package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's effective configuration. Layers, highest first:
 *
 * <ol>
 *   <li>{@code -Dkey=value} system properties;
 *   <li>environment overrides: {@code OTL_DB_URL}, {@code OTL_DB_USER}, {@code OTL_DB_PASSWORD}
 *       into {@code agentscope.training.db.url/user/password}, {@code OTL_PERSISTENCE} into
 *       {@code agentscope.training.persistence};
 *   <li>the user's file ({@code --config}, any format {@link AgentScopeConfigLoader} reads);
 *   <li>{@code base}: an embedding application's overrides, then application.conf;
 *   <li>the node's Pekko settings ({@code otl-node.conf});
 *   <li>every module's {@code reference.conf}, where the defaults live with a comment per key.
 * </ol>
 *
 * <p>The node's Pekko settings cannot live in reference.conf: once jars are shaded together the
 * order in which reference.conf files are concatenated is not ours, and Pekko's own defaults
 * (e.g. {@code actor.provider = local}) would win.
 *
 * The result is validated: wrong values throw {@link ConfigValidationException}; each unknown key
 * under {@code agentscope.training} is logged as one WARN line.
 */
public final class NodeConfig {

  private static final Logger log = LoggerFactory.getLogger(NodeConfig.class);

  /** Environment variable → the key it overrides. */
  static final Map<String, String> ENV_OVERRIDES;

  static {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("OTL_DB_URL", TrainingSettingsValidator.ROOT + ".db.url");
    m.put("OTL_DB_USER", TrainingSettingsValidator.ROOT + ".db.user");
    m.put("OTL_DB_PASSWORD", TrainingSettingsValidator.ROOT + ".db.password");
    m.put("OTL_PERSISTENCE", TrainingSettingsValidator.ROOT + ".persistence");
    ENV_OVERRIDES = Map.copyOf(m);
  }

  private NodeConfig() {}

  /**
   * Builds, resolves and validates the node's configuration.
   *
   * @param configFile the user's file, if any
   * @param base the caller's overrides over {@code ConfigFactory.defaultApplication()}
   * @param env the environment (normally {@code System.getenv()})
   * @throws ConfigValidationException when the file cannot be loaded or a value is wrong
   */
  public static Config resolve(Optional<Path> configFile, Config base, Map<String, String> env) {
    Objects.requireNonNull(configFile, "configFile");
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(env, "env");
    Config file = configFile.map(p -> AgentScopeConfigLoader.load(p, env))
        .orElseGet(ConfigFactory::empty);
    ConfigFactory.invalidateCaches();
    Config merged = ConfigFactory.defaultOverrides()
        .withFallback(envOverrides(env))
        .withFallback(file)
        .withFallback(base)
        .withFallback(ConfigFactory.parseResources(NodeConfig.class.getClassLoader(), "otl-node.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
    // Every wrong value of every section at once, then the unknown keys beside them: a start that
    // stopped at the first section hid the model section's errors and every unknown key.
    List<String> errors = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    try {
      ValidationReport report = TrainingSettingsValidator.validate(merged);
      for (String line : report.warnings()) {
        boolean unknownKey = report.unknownKeys().stream().anyMatch(k -> line.startsWith(k + ": unknown key"));
        (unknownKey ? unknown : warnings).add(line);
      }
    } catch (ConfigValidationException e) {
      errors.addAll(e.errors());
      unknown.addAll(e.unknownKeys());
    }
    for (Runnable check : List.<Runnable>of(() -> warnings.addAll(AgentPolicies.validate(merged)),
        () -> ModelSection.fromRoot(merged))) { // the base model's section fails start-up here, not mid-way
      try {
        check.run();
      } catch (ConfigValidationException e) {
        errors.addAll(e.errors());
        unknown.addAll(e.unknownKeys());
      }
    }
    errors.addAll(ClusterAddressKeys.errors(merged, env));
    errors.addAll(ClusterBootstrapKeys.errors(merged, env));
    errors.addAll(ListenHostKey.errors(merged));
    errors.addAll(OwnListenerUrls.errors(merged));
    unknown.addAll(UnknownKeys.outsideTheSections(merged));
    unknown.addAll(ModelSection.unknownKeys(merged));
    if (!errors.isEmpty()) throw new ConfigValidationException(errors, unknown);
    unknown.forEach(log::warn);
    warnings.forEach(log::warn);
    return merged;
  }

  private static Config envOverrides(Map<String, String> env) {
    Config overrides = ConfigFactory.empty("environment overrides");
    for (Map.Entry<String, String> e : ENV_OVERRIDES.entrySet()) {
      String value = env.get(e.getKey());
      if (value != null && !value.isEmpty()) {
        overrides = overrides.withValue(e.getValue(),
            ConfigValueFactory.fromAnyRef(value, "environment variable " + e.getKey()));
      }
    }
    return overrides;
  }
}
