package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigResolver;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Resolves {@code ${VAR}} and {@code ${VAR:-default}} in string values from an environment map.
 *
 * <p>An unset variable without a default is an error naming the key and the variable, except
 * under {@code agentscope} outside {@code agentscope.training} (e.g. {@code agentscope.model.api-key},
 * optional for the base model v0): there the placeholder is left as written and a warning names
 * the key, the variable and what that means. Messages never contain values.
 * Substituted text is not scanned again.
 */
final class EnvPlaceholders {

  private static final Pattern PLACEHOLDER =
      Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  private EnvPlaceholders() {}

  /** Returns {@code config} with placeholders replaced; adds to {@code errors} and {@code warnings}. */
  static Config substitute(Config config, Map<String, String> env, List<String> errors,
      List<String> warnings) {
    Config result = config;
    for (Map.Entry<String, ConfigValue> e : config.entrySet()) {
      String key = e.getKey();
      // Named as the file wrote it (agentscope.model.api_key in a config.toml): the kebab-case
      // name is not in the user's file (trial t101).
      String shown = AgentScopeConfigLoader.writtenAs(key, e.getValue()).orElse(key);
      ConfigValue replaced = substitute(shown, e.getValue(), env, isUnusedSection(key), errors,
          warnings);
      if (replaced != e.getValue()) {
        result = result.withValue(key, replaced);
      }
    }
    return result;
  }

  /** A resolver for HOCON substitutions ({@code ${VAR}}, {@code ${?VAR}}) backed by the map. */
  static ConfigResolver resolver(Map<String, String> env) {
    return new MapResolver(env, null);
  }

  private static boolean isUnusedSection(String key) {
    List<String> path = ConfigUtil.splitPath(key);
    return path.size() > 1 && path.get(0).equals("agentscope")
        && !path.get(1).equals("training");
  }

  /**
   * What an unresolved placeholder costs, for the warning: the model section is the base model v0
   * (ModelSection), whose key then counts as unset; other AgentScope sections are not read.
   */
  private static String unresolvedMeans(String key) {
    List<String> path = ConfigUtil.splitPath(key);
    if (path.size() > 2 && AgentScopeConfigLoader.kebabCase(path.get(1)).equals("model")) {
      return AgentScopeConfigLoader.kebabCase(path.get(path.size() - 1)).equals("api-key")
          ? "the base model v0 of the model section is called without an API key"
          : "the model section's " + path.get(path.size() - 1) + " is taken as written";
    }
    return "this node does not use that section";
  }

  /** Returns the same instance when nothing changed. */
  private static ConfigValue substitute(String key, ConfigValue value, Map<String, String> env,
      boolean lenient, List<String> errors, List<String> warnings) {
    switch (value.valueType()) {
      case STRING: {
        String text = (String) value.unwrapped();
        String replaced = substitute(key, text, env, lenient, errors, warnings);
        return replaced.equals(text) ? value
            : ConfigValueFactory.fromAnyRef(replaced).withOrigin(value.origin());
      }
      case LIST: {
        ConfigList list = (ConfigList) value;
        List<ConfigValue> out = new ArrayList<>(list.size());
        boolean changed = false;
        for (int i = 0; i < list.size(); i++) {
          ConfigValue element = list.get(i);
          ConfigValue replaced = substitute(key + "[" + i + "]", element, env, lenient, errors,
              warnings);
          changed |= replaced != element;
          out.add(replaced);
        }
        return changed ? ConfigValueFactory.fromIterable(out).withOrigin(value.origin()) : value;
      }
      case OBJECT: { // only reached for objects inside lists; entrySet() flattens the rest
        ConfigObject object = (ConfigObject) value;
        Map<String, ConfigValue> out = new LinkedHashMap<>();
        boolean changed = false;
        for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
          ConfigValue replaced = substitute(key + "." + ConfigUtil.quoteString(e.getKey()),
              e.getValue(), env, lenient, errors, warnings);
          changed |= replaced != e.getValue();
          out.put(e.getKey(), replaced);
        }
        return changed ? ConfigValueFactory.fromMap(out).withOrigin(value.origin()) : value;
      }
      default:
        return value;
    }
  }

  private static String substitute(String key, String text, Map<String, String> env,
      boolean lenient, List<String> errors, List<String> warnings) {
    if (!text.contains("${")) {
      return text;
    }
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String variable = m.group(1);
      String fallback = m.group(2);
      String value = env.get(variable);
      String replacement;
      if (value != null && !(fallback != null && value.isEmpty())) {
        replacement = value;
      } else if (fallback != null) {
        replacement = fallback;
      } else if (lenient) {
        warnings.add(key + ": environment variable " + variable + " is not set; the placeholder"
            + " is left unresolved (" + unresolvedMeans(key) + ")");
        replacement = m.group();
      } else {
        errors.add(key + ": environment variable " + variable + " is not set and the placeholder"
            + " has no default (set " + variable + ", or write ${" + variable + ":-default})");
        replacement = m.group();
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }

  private record MapResolver(Map<String, String> env, ConfigResolver fallback)
      implements ConfigResolver {

    @Override
    public ConfigValue lookup(String path) {
      String value = env.get(path);
      if (value != null) {
        return ConfigValueFactory.fromAnyRef(value, "environment variable " + path);
      }
      return fallback == null ? null : fallback.lookup(path);
    }

    @Override
    public ConfigResolver withFallback(ConfigResolver next) {
      return new MapResolver(env, fallback == null ? next : fallback.withFallback(next));
    }

    @Override
    public String toString() {
      return "MapResolver"; // never print the environment
    }
  }
}
