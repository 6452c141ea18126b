package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The errors of one validation and the typed values that passed, for the cross-checks. One per
 * {@code validate} call, handed to every rule, so the rules stay stateless and problems come out
 * in the order the rules ran.
 */
final class SettingsCheck {
  final Config config;
  final List<String> errors = new ArrayList<>();
  final List<String> warnings = new ArrayList<>();
  final Map<String, Object> typed = new HashMap<>();

  SettingsCheck(Config config) {
    this.config = config;
  }

  /**
   * The key is named as its file wrote it ({@code agentscope.training.dataCollector.maxTextLength} from a
   * camelCase application.yml or a settings.json, {@code …data_collector.collect_mode} from a config.toml),
   * as unknown keys are: the kebab-case name the node reads is not in the user's file, so a search for it
   * found nothing (trials t99, t101). A HOCON file's keys, {@code -D} properties and variables keep theirs.
   */
  void error(String key, ConfigValue v, String requirement) {
    String from = EnvironmentVariables.source(key, v).map(s -> " (from " + s + ")").orElse("");
    errors.add(written(key, v) + " = " + TrainingSettingsValidator.render(key, v) + from + ": must be " + requirement);
  }

  private static final java.util.regex.Pattern ELEMENT = java.util.regex.Pattern.compile("(.+)(\\[\\d+])");

  /** The key as written; a list's element ({@code evaluation-metrics[1]}) by its list's name as written. */
  private String written(String key, ConfigValue v) {
    Optional<String> written = AgentScopeConfigLoader.writtenAs(key, v);
    java.util.regex.Matcher element = ELEMENT.matcher(key);
    if (written.isEmpty() && element.matches()) {
      try {
        written = AgentScopeConfigLoader.writtenAs(element.group(1), config.getValue(element.group(1)))
            .map(list -> list + element.group(2));
      } catch (ConfigException e) {
        return key; // not a path after all
      }
    }
    return written.orElse(key);
  }

  /** A value the node accepts but cannot honour as written: start-up goes on, the log says why (key as written). */
  void warn(String key, ConfigValue v, String consequence) {
    warnings.add(written(key, v) + " = " + TrainingSettingsValidator.render(key, v) + ": " + consequence);
  }

  ConfigValue valueAt(String key) {
    return config.getValue(key);
  }

  /** The list at key (lists, or objects with numeric keys from -D), or an error. */
  List<ConfigValue> list(String key, ConfigValue v, String requirement) {
    List<ConfigValue> list = listOrNull(key, v);
    if (list == null) {
      error(key, v, requirement);
    }
    return list;
  }

  List<ConfigValue> listOrNull(String key, ConfigValue v) {
    if (v.valueType() == ConfigValueType.LIST) {
      return (ConfigList) v;
    }
    if (v.valueType() == ConfigValueType.OBJECT) {
      try {
        return config.getList(key);
      } catch (ConfigException e) {
        return null;
      }
    }
    return null;
  }
}
