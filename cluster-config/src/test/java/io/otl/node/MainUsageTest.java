package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.simulator.SimulatorCommandAccess;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar otl-node.jar --help} is the summary a user reads first: each sub-command's line
 * lists every option that sub-command's own usage documents. It once left out export's {@code --name}.
 */
class MainUsageTest {
  private static final Pattern OPTION = Pattern.compile("--[a-z][a-z-]*");

  @Test
  void theSummaryListsEveryOptionOfEverySubCommand() {
    assertListsAll("export", ExportCommand.USAGE);
    assertListsAll("audit", AuditCommand.USAGE);
    assertListsAll("simulator", SimulatorCommandAccess.usage());
  }

  /**
   * docs/api.md and verify's own refusal say a PostgreSQL journal is verified beside running nodes; the
   * help said "from the journal, which no running node may hold", so a user stopped a cluster to verify.
   */
  @Test
  void theHelpOfVerifySaysWhenANodeMayRunBesideIt() {
    for (String usage : new String[] {Main.USAGE, AuditCommand.USAGE}) {
      String flat = usage.replaceAll("\\s+", " ");
      assertFalse(flat.contains("which no running node may hold"), flat);
      assertTrue(flat.contains("the embedded H2 journal with its node stopped; PostgreSQL beside running nodes"), flat);
    }
  }

  /**
   * The names {@code help <command>} accepts and the commands the dispatch runs are one map; the
   * summary lists each of them, and no other (they were a list beside a switch, kept in sync by hand).
   */
  @Test
  void theSummaryListsExactlyTheCommandsMainRuns() {
    Set<String> listed = new LinkedHashSet<>();
    Matcher m = Pattern.compile("(?m)^  ([a-z]+)\\b").matcher(Main.USAGE);
    while (m.find()) listed.add(m.group(1));
    listed.remove("help"); // help is not a command of its own but the text of the others
    assertEquals(java.util.List.copyOf(Main.commandNames()), java.util.List.copyOf(listed), Main.USAGE);
  }

  private static void assertListsAll(String command, String ownUsage) {
    Set<String> options = options(ownUsage);
    assertFalse(options.isEmpty(), command + " documents no option");
    StringBuilder summary = new StringBuilder();
    for (String line : Main.USAGE.lines().toList()) {
      if (line.trim().startsWith(command + " ")) summary.append(line).append('\n');
    }
    Set<String> listed = options(summary.toString());
    for (String option : options) {
      assertTrue(listed.contains(option), "--help leaves " + command + "'s " + option + " out:\n" + summary);
    }
  }

  private static Set<String> options(String text) {
    Set<String> found = new LinkedHashSet<>();
    Matcher m = OPTION.matcher(text);
    while (m.find()) found.add(m.group());
    // Every command takes --help; the summary says so once, at its end.
    found.remove("--help");
    return found;
  }
}
