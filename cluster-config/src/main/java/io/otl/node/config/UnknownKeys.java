package io.otl.node.config;

import static io.otl.node.config.TrainingSettingsValidator.ROOT;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import com.typesafe.config.ConfigValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Finds keys under {@code agentscope.training} that no rule knows. They are warnings, not errors,
 * so a file written for a newer AgentScope still loads; a close known name is suggested because
 * most unknown keys are typos (or camelCase spellings of a kebab-case key). The exception is
 * {@code training-runner.hyperparams}: an unknown name there is an error ({@link
 * io.otl.node.trinity.Hyperparameters}).
 */
final class UnknownKeys {

  private UnknownKeys() {}

  static void findUnknown(Config merged, SettingsCheck check, List<String> unknown,
      List<String> warnings) {
    if (!merged.hasPathOrNull(ROOT)) {
      return;
    }
    ConfigValue root = merged.getIsNull(ROOT) ? ConfigValueFactory.fromAnyRef(null)
        : merged.getValue(ROOT);
    if (root.valueType() != ConfigValueType.OBJECT) {
      check.error(ROOT, root, "a section of settings");
      return;
    }
    walk((ConfigObject) root, new ArrayList<>(), check, unknown, warnings);
  }

  private static void walk(ConfigObject object, List<String> prefix, SettingsCheck check,
      List<String> unknown, List<String> warnings) {
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      List<String> path = new ArrayList<>(prefix);
      path.add(e.getKey());
      String relative = ConfigUtil.joinPath(path);
      String full = ROOT + "." + relative;
      if (TrainingKeys.RULES.containsKey(relative)) {
        continue;
      }
      if (TrainingKeys.SECTIONS.contains(relative)) {
        if (e.getValue().valueType() == ConfigValueType.OBJECT) {
          walk((ConfigObject) e.getValue(), path, check, unknown, warnings);
        } else {
          check.error(full, e.getValue(), "a section with the keys " + String.join(", ",
              TrainingKeys.childrenOf(relative)));
        }
        continue;
      }
      String section = prefix.isEmpty() ? "" : ConfigUtil.joinPath(prefix);
      String written = AgentScopeConfigLoader.writtenAs(full, e.getValue()).orElse(null);
      String name = written == null ? full : written;
      if (section.equals(TrainingKeys.HYPERPARAMS_SECTION)) {
        // Every job reads its hyperparameters by name: one nobody reads is a typo, and training
        // with the default instead of the value given must stop the node (or the PUT), not warn.
        String close = suggest(e.getKey(), section);
        check.errors.add(name + ": not a hyperparameter the training backend reads"
            + (close == null ? "" : " (did you mean " + styled(close, written) + "?)") + "; known: "
            + String.join(", ", TrainingKeys.childrenOf(section)));
        continue;
      }
      unknown.add(name);
      String suggestion = suggest(e.getKey(), section);
      if (suggestion == null) suggestion = elsewhere(e.getKey());
      warnings.add(name + ": unknown key, ignored"
          + (suggestion == null ? "" : " (did you mean " + styled(suggestion, written) + "?)"));
    }
  }


  /** The sections of {@code agentscope} the node reads. */
  static final List<String> AGENTSCOPE_SECTIONS = List.of("training", "model");

  /**
   * One line per key directly under {@code agentscope} besides its training and model sections. A
   * misspelt section ({@code trainin:} in an application.yml, {@code [trainin]} in a config.toml) was
   * read by nobody and reported by nobody: the node started on its defaults, the file's trigger,
   * algorithm and desensitize patterns ignored without a word (trial t50). Another tool's section
   * (AgentScope's own) is named too, as ignored, with no suggestion unless a section's name is close.
   */
  static List<String> outsideTheSections(Config root) {
    if (!root.hasPath("agentscope") || !(root.getValue("agentscope") instanceof ConfigObject top)) {
      return List.of();
    }
    List<String> lines = new ArrayList<>();
    for (String key : new java.util.TreeSet<>(top.keySet())) {
      if (AGENTSCOPE_SECTIONS.contains(key)) continue;
      // A file without an agentscope root is read as that section, so a misspelt root shows up here too.
      String close = closest(key, List.of("training", "model", "agentscope"));
      lines.add(named(ConfigUtil.joinPath("agentscope", key), top.get(key)) + ": unknown key, ignored"
          + (close == null ? "" : " (did you mean " + close + "?)"));
    }
    return lines;
  }

  /**
   * An unknown key's name as its file wrote it ({@code dataCollector.collectMod} in a settings.json,
   * {@code min_sample} in a config.toml), else its full name: the kebab-case name the node reads it by
   * is not in the user's file, so the warning named a key they could not find (trial t52).
   */
  static String named(String full, ConfigValue value) {
    return AgentScopeConfigLoader.writtenAs(full, value).orElse(full);
  }

  /**
   * A suggested name (a key, or a full path) in the style the unknown key was written in: {@code
   * collectMode} beside a {@code collectMod}, {@code min_samples} beside a {@code min_sample}, as is
   * when that key was kebab-case (or is not from a file).
   */
  static String styled(String suggestion, String written) {
    if (written == null) return suggestion;
    List<String> path = ConfigUtil.splitPath(written);
    String last = path.get(path.size() - 1);
    boolean snake = last.indexOf('_') >= 0;
    boolean camel = !snake && last.indexOf('-') < 0 && !last.equals(last.toLowerCase(java.util.Locale.ROOT));
    if (!snake && !camel) return suggestion;
    StringBuilder out = new StringBuilder(suggestion.length());
    boolean upper = false;
    for (char c : suggestion.toCharArray()) {
      if (c == '-') {
        if (snake) out.append('_');
        upper = camel;
        continue;
      }
      out.append(upper ? Character.toUpperCase(c) : c);
      upper = false;
    }
    return out.toString();
  }

  private static String suggest(String name, String section) {
    return closest(name, TrainingKeys.childrenOf(section));
  }

  /** The candidate a typo of {@code name} most likely meant, or null when none is close. */
  static String closest(String name, java.util.Collection<String> candidates) {
    String normalised = AgentScopeConfigLoader.kebabCase(name);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int d = distance(normalised, candidate);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate;
      }
    }
    int limit = Math.max(2, normalised.length() / 3);
    return best != null && bestDistance <= limit ? best : null;
  }

  /**
   * The full name of a known key or section of the same name in another section: a key put one
   * level off ({@code agentscope.training.desensitize} for {@code data-collector.desensitize}) is
   * otherwise ignored with no hint, and for a privacy rule that means running without it.
   */
  private static String elsewhere(String name) {
    String normalised = AgentScopeConfigLoader.kebabCase(name);
    List<String> known = new ArrayList<>(TrainingKeys.SECTIONS);
    known.addAll(TrainingKeys.RULES.keySet());
    return known.stream()
        .filter(k -> k.equals(normalised) || k.endsWith("." + normalised))
        .sorted().findFirst().map(k -> ROOT + "." + k).orElse(null);
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
