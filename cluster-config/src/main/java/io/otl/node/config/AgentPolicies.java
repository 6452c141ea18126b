package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.otl.core.Ids;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Static per-agent training policies: {@code agentscope.training.agents.<agentId> { … }} overrides
 * training-runner keys for one agent ({@code agents.support-bot { trigger.min-samples = 50,
 * algorithm = dpo }}). Only the keys the agent's coordinator reads are overridable; node-wide keys
 * (backend, endpoints, directories, retries) and the dataset filters (read by the node's exporter)
 * are not. Each agent's effective training-runner section is validated like the file, at start-up.
 */
public final class AgentPolicies {
  public static final String PATH = TrainingSettingsValidator.ROOT + ".agents";
  private static final String RUNNER = TrainingSettingsValidator.ROOT + ".training-runner";

  /** Overridable keys, relative to training-runner; a key ending in '.' is a section whose keys all are. */
  public static final List<String> OVERRIDABLE = io.otl.core.coordinator.PolicyOverrides.OVERRIDABLE;

  private AgentPolicies() {}

  /** Throws {@link ConfigValidationException} naming every wrong agent id, key or value. */
  public static void validate(Config root) {
    List<String> errors = new ArrayList<>();
    for (Map.Entry<String, Config> agent : sections(root, errors).entrySet()) {
      String prefix = PATH + "." + agent.getKey();
      boolean keysOk = true;
      for (Map.Entry<String, ConfigValue> e : agent.getValue().entrySet()) {
        if (!overridable(e.getKey())) {
          errors.add(prefix + "." + e.getKey() + " cannot be set per agent; allowed: " + String.join(", ", allowed()));
          keysOk = false;
        }
      }
      if (!keysOk) continue;
      try {
        TrainingSettingsValidator.validate(effectiveRoot(root, agent.getValue()));
      } catch (ConfigValidationException e) {
        e.errors().forEach(m -> errors.add(prefix + ": " + m.replace(RUNNER + ".", prefix + ".")));
      }
    }
    if (!errors.isEmpty()) throw new ConfigValidationException(errors);
  }

  /** The overrides by agent id (empty when none); call {@link #validate} first. */
  public static Map<String, Config> overrides(Config root) {
    return sections(root, new ArrayList<>());
  }

  /** {@code agentscope.training} with the agent's overrides laid over its training-runner section. */
  public static Config effectiveTraining(Config training, Config overrides) {
    return training.withValue("training-runner",
        overrides.withFallback(training.getConfig("training-runner")).root());
  }

  private static Config effectiveRoot(Config root, Config overrides) {
    return root.withValue(RUNNER, overrides.withFallback(root.getConfig(RUNNER)).root());
  }

  static boolean overridable(String key) {
    return io.otl.core.coordinator.PolicyOverrides.overridable(key);
  }

  private static List<String> allowed() {
    return OVERRIDABLE.stream().map(k -> k.endsWith(".") ? k + "*" : k).toList();
  }

  /**
   * Checks an agent's effective {@code agentscope.training} section (with run-time overrides) as
   * the start-up validator would; its errors become one IllegalArgumentException (a 400).
   */
  public static void checkRunTime(Config agentscopeTraining) {
    try {
      TrainingSettingsValidator.validate(agentscopeTraining.atPath(TrainingSettingsValidator.ROOT));
    } catch (ConfigValidationException e) {
      throw new IllegalArgumentException(String.join("; ", e.errors()), e);
    }
  }

  private static Map<String, Config> sections(Config root, List<String> errors) {
    Map<String, Config> out = new LinkedHashMap<>();
    if (!root.hasPath(PATH)) return out;
    ConfigValue agents = root.getValue(PATH);
    if (agents.valueType() != ConfigValueType.OBJECT) {
      errors.add(PATH + " must be a section of agentId { key = value } sections");
      return out;
    }
    for (Map.Entry<String, ConfigValue> e : ((ConfigObject) agents).entrySet()) {
      String id = e.getKey();
      if (!Ids.isValidAgentId(id)) {
        errors.add(PATH + ".\"" + id + "\": not a valid agent id");
      } else if (e.getValue().valueType() != ConfigValueType.OBJECT) {
        errors.add(PATH + "." + id + " must be a section of training-runner keys");
      } else {
        out.put(id, ((ConfigObject) e.getValue()).toConfig());
      }
    }
    return out;
  }
}
