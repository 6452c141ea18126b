package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The AgentScope {@code model} section ({@code agentscope.model}: provider, base URL, API key, model
 * name, timeout, retries), parsed and checked once. It is the agent's base model, registered as
 * version v0; the gateway calls its base URL with its key, timeout and retries. The key comes from
 * {@code ${ENV}} in the file; {@link #toString} never shows it.
 *
 * @param baseUrl the OpenAI base URL as AgentScope users write it (the gateway appends
 *     {@code /chat/completions})
 * @param apiKey empty when none is set (or its variable is unset)
 */
public record ModelSection(
    String provider, String baseUrl, String apiKey, String modelName, int timeoutSeconds, int maxRetries) {

  public static final String PATH = "agentscope.model";

  /** The section of the node's root config, or empty when the configuration has none. */
  public static Optional<ModelSection> fromRoot(Config root) {
    if (!root.hasPath(PATH)) {
      return Optional.empty();
    }
    Config c = root.getConfig(PATH);
    List<String> errors = new ArrayList<>();
    String provider = string(c, "provider", "openai-compatible", errors);
    String baseUrl = string(c, "base-url", null, errors);
    String modelName = string(c, "model-name", null, errors);
    String apiKey = string(c, "api-key", "", errors);
    int timeout = wholeNumber(c, "timeout-seconds", 60, 1, MAX_TIMEOUT_SECONDS, errors);
    int retries = wholeNumber(c, "max-retries", 3, 0, MAX_RETRIES, errors);
    if (baseUrl != null && io.otl.http.gateway.ServingUrls.hasCredentials(baseUrl)) {
      // Not shown: v0's endpoint is logged, journaled and answered by …/route as written, and never sent.
      errors.add(written("base-url", c.getValue("base-url")) + ": must not carry credentials (user:password@…); give the key as " + PATH + ".api-key");
    } else if (baseUrl != null && io.otl.http.gateway.ServingUrls.hasQueryOrFragment(baseUrl)) {
      // Not shown either: the gateway appends /chat/completions to it, so a query made every call of v0 a 404.
      errors.add(written("base-url", c.getValue("base-url")) + ": must not have a query or fragment (?…, #…): the gateway appends /chat/completions"
          + " to it; give a key as " + PATH + ".api-key");
    } else if (baseUrl != null && !isHttpUrl(baseUrl)) {
      errors.add(written("base-url", c.getValue("base-url")) + " = " + TrainingSettingsValidator.render(PATH + ".base-url", c.getValue("base-url"))
          + ": must be an http(s) URL such as http://127.0.0.1:8000/v1");
    }
    if (io.otl.core.Ids.hasControlCharacter(apiKey)) {
      // Sent as the gateway's Authorization header to the base URL, which cannot carry one (not shown: a secret).
      errors.add(written("api-key", c.getValue("api-key")) + ": must be " + ConfigRules.UNSENDABLE);
    }
    if (io.otl.core.Ids.hasControlCharacter(modelName)) {
      // v0's served model name: sent upstream and logged as written (not repeated here).
      errors.add(written("model-name", c.getValue("model-name")) + ": must be a model name without control characters (newline, tab …)");
    }
    if (!errors.isEmpty()) {
      throw new ConfigValidationException(errors);
    }
    // An unresolved ${VAR} stays as written (EnvPlaceholders warns): there is then no key.
    String key = apiKey.startsWith("${") ? "" : apiKey;
    return Optional.of(new ModelSection(provider, baseUrl, key, modelName, timeout, retries));
  }

  /**
   * A day per attempt, and 100 retries: every attempt timing out, twice with fallback-to-stable, then
   * stays within the 248 days a Pekko timer (and the idle timeout grown to cover the wait) can hold.
   */
  static final int MAX_TIMEOUT_SECONDS = 86_400;
  static final int MAX_RETRIES = 100;

  private static final List<String> KEYS =
      List.of("provider", "base-url", "api-key", "model-name", "timeout-seconds", "max-retries");

  /** One line per key of the section that the node does not know (a typo, or another tool's setting). */
  public static List<String> unknownKeys(Config root) {
    if (!root.hasPath(PATH) || !(root.getValue(PATH) instanceof com.typesafe.config.ConfigObject section)) {
      return List.of();
    }
    List<String> lines = new ArrayList<>();
    for (String key : new java.util.TreeSet<>(section.keySet())) {
      if (KEYS.contains(key)) continue;
      String close = UnknownKeys.closest(key, KEYS);
      String full = PATH + "." + key;
      String written = AgentScopeConfigLoader.writtenAs(full, section.get(key)).orElse(null);
      lines.add((written == null ? full : written) + ": unknown key, ignored"
          + (close == null ? "" : " (did you mean " + UnknownKeys.styled(close, written) + "?)"));
    }
    return lines;
  }

  private static String string(Config c, String key, String fallback, List<String> errors) {
    if (!c.hasPath(key)) {
      if (fallback == null) {
        errors.add(PATH + "." + key + ": missing (the base model needs it)");
      }
      return fallback;
    }
    try {
      String v = c.getString(key).trim();
      if (v.isEmpty() && fallback == null) {
        errors.add(written(key, c.getValue(key)) + ": must not be empty");
      }
      return v;
    } catch (ConfigException.WrongType e) {
      // Shown as every key's wrong value is (render masks the api-key's).
      errors.add(written(key, c.getValue(key)) + " = " + TrainingSettingsValidator.render(PATH + "." + key, c.getValue(key))
          + ": must be a string");
      return fallback;
    }
  }

  /**
   * A whole number from {@code min} to {@code max}, named with its value and range as every other key's
   * error is (design §8). {@code getInt} took 1.5 for 1 (a one-second timeout nobody wrote) and answered
   * "sixty" or 99999999999 with "must be a whole number" alone, without the value or the range; a
   * timeout of 2147483647 s passed and stopped the node only after its journal was written, naming the
   * simulator's port (the idle timeout grown to cover the attempts overflowed; trial t50).
   */
  private static int wholeNumber(Config c, String key, int fallback, int min, int max, List<String> errors) {
    if (!c.hasPath(key)) {
      return fallback;
    }
    ConfigValue v = c.getValue(key);
    Double d = ConfigRules.asNumber(v);
    if (d == null || d != Math.rint(d) || d < min || d > max) {
      errors.add(written(key, v) + " = " + TrainingSettingsValidator.render(PATH + "." + key, v)
          + ": must be a whole number from " + min + " to " + max);
      return fallback;
    }
    return d.intValue();
  }

  /** The key's full name as its file wrote it ({@code agentscope.model.timeout_seconds} from a config.toml), as for unknown keys. */
  private static String written(String key, ConfigValue v) {
    return AgentScopeConfigLoader.writtenAs(PATH + "." + key, v).orElse(PATH + "." + key);
  }

  private static boolean isHttpUrl(String s) {
    try {
      URI u = URI.create(s);
      return ("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  public boolean hasApiKey() {
    return !apiKey.isEmpty();
  }

  @Override
  public String toString() {
    return "ModelSection[provider=" + provider + ", baseUrl=" + baseUrl + ", modelName=" + modelName
        + ", apiKey=" + (apiKey.isEmpty() ? "(none)" : Secrets.MASK) + ", timeoutSeconds=" + timeoutSeconds
        + ", maxRetries=" + maxRetries + "]";
  }
}
