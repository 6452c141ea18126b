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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Static per-agent training policies: {@code agentscope.training.agents.<agentId> { … }} overrides
 * training-runner keys for one agent ({@code agents.support-bot { trigger.min-samples = 50,
 * algorithm = dpo }}). Only the keys the agent's coordinator reads are overridable; node-wide keys
 * (backend, endpoints, directories, retries) and the dataset filters (read by the node's exporter)
 * are not. Model-update keys are overridable too, under {@value #MODEL_UPDATE} ({@code
 * agents.support-bot { model-update.canary-ratio = 0.1 }}): any key of {@code
 * agentscope.training.model-update}; they shape the agent's ModelVersion entity, under the run-time
 * ones ({@code PUT …/policy}, {@link io.otl.core.model.RolloutPolicy}). Each agent's
 * effective training-runner and model-update sections are validated like the file, at start-up.
 */
public final class AgentPolicies {
  public static final String PATH = TrainingSettingsValidator.ROOT + ".agents";
  private static final String RUNNER = TrainingSettingsValidator.ROOT + ".training-runner";
  /** The per-agent section of model-update keys. */
  public static final String MODEL_UPDATE = "model-update";
  private static final String UPDATE = TrainingSettingsValidator.ROOT + "." + MODEL_UPDATE;
  /** The model-update keys there are: those of reference.conf. */
  private static final Config KNOWN_UPDATE = com.typesafe.config.ConfigFactory.defaultReference().getConfig(UPDATE);

  /** Overridable keys, relative to training-runner; a key ending in '.' is a section whose keys all are. */
  public static final List<String> OVERRIDABLE = io.otl.core.coordinator.PolicyOverrides.OVERRIDABLE;

  private AgentPolicies() {}

  /**
   * Throws {@link ConfigValidationException} naming every wrong agent id, key or value; returns the
   * warnings of what an agent sets itself: its own cron's day numbers (review t144; the node-wide
   * keys' warnings are the file's, told once).
   */
  public static List<String> validate(Config root) {
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    for (Map.Entry<String, Config> agent : sections(root, errors).entrySet()) {
      String prefix = PATH + "." + agent.getKey();
      boolean keysOk = true;
      for (Map.Entry<String, ConfigValue> e : agent.getValue().entrySet()) {
        if (e.getKey().startsWith(MODEL_UPDATE + ".")) {
          if (!KNOWN_UPDATE.hasPath(e.getKey().substring(MODEL_UPDATE.length() + 1))) {
            errors.add(prefix + "." + e.getKey() + " is not a model-update key; known: "
                + String.join(", ", new java.util.TreeSet<>(KNOWN_UPDATE.root().keySet())));
            keysOk = false;
          }
        } else if (!overridable(e.getKey())) {
          errors.add(prefix + "." + e.getKey() + " cannot be set per agent; allowed: " + String.join(", ", allowed())
              + ", " + MODEL_UPDATE + ".*");
          keysOk = false;
        }
      }
      if (!keysOk) continue;
      Config effective = effectiveRoot(root, agent.getValue());
      try {
        TrainingSettingsValidator.validate(effective);
      } catch (ConfigValidationException e) {
        e.errors().forEach(m -> errors.add(prefix + ": "
            + m.replace(UPDATE + ".", prefix + "." + MODEL_UPDATE + ".").replace(RUNNER + ".", prefix + ".")));
        continue;
      }
      if (agent.getValue().hasPath("trigger.cron")) {
        String cron = agent.getValue().getString("trigger.cron");
        try {
          TrainingRules.dayNumbers(io.otl.core.schedule.CronSchedule.parse(cron))
              .ifPresent(w -> warnings.add(prefix + ".trigger.cron = \"" + cron + "\": " + w));
        } catch (IllegalArgumentException e) {
          // not scheduled, so not checked above: such a cron fires nothing
        }
      }
      if (hasModelUpdate(agent.getValue())) {
        // The entity's own checks across keys (e.g. min-samples-per-step against confidence and steps).
        try {
          io.otl.core.model.ModelSettings.fromConfig(effective.getConfig(TrainingSettingsValidator.ROOT));
        } catch (IllegalArgumentException e) {
          errors.add(prefix + ": " + e.getMessage().replace(UPDATE + ".", prefix + "." + MODEL_UPDATE + "."));
        }
      }
    }
    if (!errors.isEmpty()) throw new ConfigValidationException(errors);
    return warnings;
  }

  /** The training-runner overrides by agent id (empty when none); call {@link #validate} first. */
  public static Map<String, Config> overrides(Config root) {
    Map<String, Config> out = new LinkedHashMap<>();
    sections(root, new ArrayList<>()).forEach((id, c) -> out.put(id, c.withoutPath(MODEL_UPDATE)));
    return out;
  }

  /**
   * The effective {@code agentscope.training} of each agent that overrides model-update keys, by
   * agent id (others use the file's); call {@link #validate} first.
   */
  public static Map<String, Config> modelUpdateTraining(Config root) {
    Config training = root.getConfig(TrainingSettingsValidator.ROOT);
    Map<String, Config> out = new LinkedHashMap<>();
    sections(root, new ArrayList<>()).forEach((id, c) -> {
      if (hasModelUpdate(c)) {
        out.put(id, training.withValue(MODEL_UPDATE,
            c.getConfig(MODEL_UPDATE).withFallback(training.getConfig(MODEL_UPDATE)).root()));
      }
    });
    return out;
  }

  /** {@code agentscope.training} with the agent's overrides laid over its training-runner section. */
  public static Config effectiveTraining(Config training, Config overrides) {
    return training.withValue("training-runner",
        overrides.withoutPath(MODEL_UPDATE).withFallback(training.getConfig("training-runner")).root());
  }

  private static Config effectiveRoot(Config root, Config overrides) {
    Config runner = root.withValue(RUNNER,
        overrides.withoutPath(MODEL_UPDATE).withFallback(root.getConfig(RUNNER)).root());
    return hasModelUpdate(overrides)
        ? runner.withValue(UPDATE, overrides.getConfig(MODEL_UPDATE).withFallback(root.getConfig(UPDATE)).root())
        : runner;
  }

  private static boolean hasModelUpdate(Config overrides) {
    return overrides.hasPath(MODEL_UPDATE) && overrides.getValue(MODEL_UPDATE).valueType() == ConfigValueType.OBJECT;
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
      throw new IllegalArgumentException(String.join("; ", e.errors().stream().map(AgentPolicies::asSent).toList()),
          e);
    }
  }

  /**
   * Checks an agent's effective {@code agentscope.training} section with run-time {@code model-update}
   * overrides: the start-up validator, then the entity's own checks across keys ({@link
   * io.otl.core.model.ModelSettings}, e.g. min-samples-per-step against confidence and steps), each
   * error as the client sent the key (a 400), the value not repeated.
   */
  public static void checkRunTimeRollout(Config agentscopeTraining) {
    checkRunTime(agentscopeTraining);
    try {
      io.otl.core.model.ModelSettings.fromConfig(agentscopeTraining);
    } catch (IllegalArgumentException e) {
      String m = e.getMessage().startsWith(UPDATE + ".") ? e.getMessage().substring(TrainingSettingsValidator.ROOT.length() + 1)
          : e.getMessage();
      int value = m.indexOf(" = ");
      int expected = m.indexOf(" is not allowed; expected ");
      if (value > 0 && expected > value) {
        m = m.substring(0, value) + ": must be " + m.substring(expected + " is not allowed; expected ".length());
      }
      throw new IllegalArgumentException(m, e);
    }
  }

  /**
   * A validator error as the client of {@code PUT …/policy} reads it: the key as it sent it
   * ({@code trigger.min-samples}, not the file's full path), and never the value it sent, which
   * is client text (an e-mail address or a phone number as likely as a typo) and goes back to no one.
   */
  static String asSent(String error) {
    String e = error.startsWith(RUNNER + ".") ? error.substring(RUNNER.length() + 1)
        : error.startsWith(UPDATE + ".") ? error.substring(TrainingSettingsValidator.ROOT.length() + 1) : error;
    int colon = e.indexOf(": ");
    if (!e.contains(" = ") && colon > 0) {
      // An unknown hyperparameter: its name is client text, shown only when it is a plain word.
      return io.otl.core.Ids.shownPath(e.substring(0, colon)) + e.substring(colon);
    }
    int eq = e.indexOf(" = ");
    int must = e.indexOf(": must be ", Math.max(eq, 0));
    if (eq < 0 || must < 0) return e;
    String value = e.substring(eq + 3, must);
    String requirement = withoutValue(e.substring(must + 2), value);
    return e.substring(0, eq) + ": " + requirement;
  }

  /**
   * The requirement with the client's value masked where the validator quoted it. Only whole
   * tokens are masked: a substring replace turned {@code confidence = 1}'s "(0.5, 1)" into "(0.5,
   * (the value given))" and {@code 0}'s into "((the value given).5, 1)". A number of fewer than 7
   * digits is no personal data (the desensitizer's threshold for integers), and the same digits in
   * the allowed range are the range's, so it is left as the requirement states it.
   */
  static String withoutValue(String requirement, String value) {
    boolean quoted = value.length() > 2 && value.startsWith("\"") && value.endsWith("\"");
    String text = quoted ? value.substring(1, value.length() - 1) : value;
    if (value.isEmpty() || SHORT_NUMBER.matcher(value).matches() && value.replaceAll("\\D", "").length() < 7
        || PLAIN_WORD.matcher(text).matches() || CRON_LIKE.matcher(text).matches()) {
      // A metric name sent as a string instead of a list read "must be a list of: (the value given),
      // user-satisfaction, …": a word of letters and dashes is no personal data, and it names what is allowed.
      return requirement;
    }
    String masked = maskToken(requirement, value);
    return quoted ? maskToken(masked, text) : masked;
  }

  private static final Pattern SHORT_NUMBER = Pattern.compile("-?[0-9.eE+-]+");
  private static final Pattern PLAIN_WORD = Pattern.compile("[A-Za-z_-]{1,64}");
  /**
   * A cron expression of numbers under 7 digits and cron symbols: no personal data, and the requirement
   * quotes it inside its example and its suggested fix ("0 0 2 * * ?"), which masking mangled.
   */
  private static final Pattern CRON_LIKE = Pattern.compile("(?!.*[0-9]{7})[0-9 *?,/#LW-]{1,100}");

  private static String maskToken(String text, String token) {
    return text.replaceAll("(?<![A-Za-z0-9]|[0-9]\\.)" + Pattern.quote(token) + "(?![A-Za-z0-9]|\\.[0-9])",
        Matcher.quoteReplacement("(the value given)"));
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
