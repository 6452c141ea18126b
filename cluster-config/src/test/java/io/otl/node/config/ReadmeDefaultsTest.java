package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every default the README's configuration tables state is the node's default: each row of a table
 * whose second column is "default" is compared, key by key, with the node's merged reference
 * configuration (every module's {@code reference.conf} under the node's {@code otl-node.conf}).
 *
 * <p>Row grammar, so that a row cannot drift unnoticed: the key cell lists keys in backticks,
 * separated by commas, with {@code {a,b}} expanding to several keys; the header's own backticked
 * prefix (e.g. {@code training-runner.}) is put before them. The default cell lists one value per
 * key, separated by commas outside backticks and brackets; a remark in parentheses after a value is
 * ignored; {@code on}/{@code off} are booleans and {@code empty} is the empty string.
 */
class ReadmeDefaultsTest {
  private static final Path ROOT_DIR = Path.of("..").toAbsolutePath().normalize();

  /** The README and every page under docs/: their defaults tables are checked alike. */
  private static List<Path> docs() throws java.io.IOException {
    List<Path> docs = new ArrayList<>(List.of(ROOT_DIR.resolve("README.md")));
    try (var pages = Files.list(ROOT_DIR.resolve("docs"))) {
      pages.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs;
  }
  private static final String ROOT = "agentscope.training.";
  private static final Pattern HEADER = Pattern.compile("^\\| key( \\(`([^`]+)`\\))? \\| default \\|.*");

  private static Config nodeDefaults() {
    ConfigFactory.invalidateCaches();
    return ConfigFactory.parseResources(NodeConfig.class.getClassLoader(), "otl-node.conf")
        .withFallback(ConfigFactory.defaultReference()).resolve();
  }

  @Test
  void everyDefaultInTheReadmeTablesIsTheCodes() throws Exception {
    Config defaults = nodeDefaults();
    List<String> lines = new ArrayList<>();
    for (Path doc : docs()) lines.addAll(Files.readAllLines(doc));
    List<String> problems = new ArrayList<>();
    int compared = 0;
    String prefix = null;
    for (String line : lines) {
      Matcher header = HEADER.matcher(line);
      if (header.matches()) {
        prefix = ROOT + (header.group(2) == null ? "" : header.group(2));
        continue;
      }
      if (prefix == null) continue;
      if (!line.startsWith("|")) {
        prefix = null; // the table ended
        continue;
      }
      if (line.startsWith("|---")) continue;
      String[] cells = line.split("\\|", -1);
      List<String> keys = keys(cells[1].trim());
      List<String> values = values(cells[2].trim());
      if (keys.isEmpty() || keys.size() != values.size()) {
        problems.add("row does not list one default per key: " + line);
        continue;
      }
      for (int i = 0; i < keys.size(); i++) {
        String key = prefix + keys.get(i);
        String problem = compare(defaults, key, values.get(i));
        if (problem != null) problems.add(problem);
        compared++;
      }
    }
    assertEquals(List.of(), problems, "README defaults that are not the code's");
    assertTrue(compared >= 40, "only " + compared + " defaults found in the README's tables");
  }

  /** {@code `a.{b,c}`, `d`} → a.b, a.c, d. */
  static List<String> keys(String cell) {
    List<String> keys = new ArrayList<>();
    Matcher m = Pattern.compile("`([^`]+)`").matcher(cell);
    while (m.find()) {
      String k = m.group(1);
      int open = k.indexOf('{');
      if (open < 0) {
        keys.add(k);
        continue;
      }
      int close = k.indexOf('}', open);
      for (String part : k.substring(open + 1, close).split(",")) {
        keys.add(k.substring(0, open) + part.trim() + k.substring(close + 1));
      }
    }
    return keys;
  }

  /** Split at commas outside backticks and brackets; strip backticks and trailing remarks. */
  static List<String> values(String cell) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean tick = false;
    int depth = 0;
    for (char c : cell.toCharArray()) {
      if (c == '`') tick = !tick;
      if (!tick && (c == '[' || c == '(')) depth++;
      if (!tick && (c == ']' || c == ')')) depth--;
      if (c == ',' && !tick && depth == 0) {
        out.add(clean(cur.toString()));
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    out.add(clean(cur.toString()));
    return out;
  }

  private static String clean(String v) {
    String s = v.trim().replaceAll("\\s*\\([^`]*\\)$", "").trim();
    if (s.startsWith("`") && s.endsWith("`") && s.length() >= 2) s = s.substring(1, s.length() - 1);
    return s;
  }

  /** Null when the README's {@code stated} default is the value at {@code key}, else what differs. */
  static String compare(Config defaults, String key, String stated) {
    if (!defaults.hasPathOrNull(key)) return key + ": in the README, not in reference.conf";
    ConfigValue actual = defaults.getValue(key);
    String mismatch = key + ": README says " + stated + ", reference.conf has " + actual.render();
    switch (actual.valueType()) {
      case BOOLEAN -> {
        boolean expected = switch (stated) {
          case "on", "true" -> true;
          case "off", "false" -> false;
          default -> !defaults.getBoolean(key); // a non-boolean statement never matches
        };
        return expected == defaults.getBoolean(key) ? null : mismatch;
      }
      case NUMBER -> {
        try {
          return Double.parseDouble(stated) == defaults.getDouble(key) ? null : mismatch;
        } catch (NumberFormatException e) {
          return mismatch;
        }
      }
      case LIST -> {
        Config parsed = ConfigFactory.parseString("v = " + stated);
        return parsed.getValue("v").valueType() == ConfigValueType.LIST
            && parsed.getList("v").unwrapped().equals(defaults.getList(key).unwrapped()) ? null : mismatch;
      }
      case STRING -> {
        String value = defaults.getString(key);
        String expected = stated.equals("empty") ? "" : stated;
        if (expected.equals(value)) return null;
        try { // durations: 24h in the README, 1d in the file
          return ConfigFactory.parseString("v = \"" + expected + "\"").getDuration("v")
              .equals(defaults.getDuration(key)) ? null : mismatch;
        } catch (ConfigException e) {
          return mismatch;
        }
      }
      case OBJECT -> { // a section of names the user chooses: stated as {} when empty by default
        return stated.equals("{}") && defaults.getConfig(key).isEmpty() ? null : mismatch;
      }
      default -> fail(key + " is a " + actual.valueType() + "; the README table cannot state it");
    }
    return mismatch;
  }
}
