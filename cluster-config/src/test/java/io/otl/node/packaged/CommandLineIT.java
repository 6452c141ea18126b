package io.otl.node.packaged;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.JarProcess;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The jar's command line as a user first meets it ({@code java -jar otl-node.jar --help}, a typo):
 * the exit codes and texts the usage and README promise. {@code --help} used to be taken for an
 * unknown option of the default {@code run} command (exit 1).
 */
class CommandLineIT {

  @Test
  void everySpellingOfHelpPrintsTheCommandsAndExitsZero() throws Exception {
    for (List<String> args : List.of(List.of("--help"), List.of("-h"), List.of("help"), List.of("run", "--help"))) {
      try (JarProcess p = JarProcess.start("help", List.of(), args)) {
        int exit = p.awaitExit(60);
        String out = p.output();
        assertEquals(0, exit, args + ":\n" + out);
        assertTrue(out.contains("usage: java -jar otl-node.jar <command>"), args + ":\n" + out);
        for (String command : List.of("run [--config <file>]", "export --agent", "audit <session", "simulator [--host")) {
          assertTrue(out.contains(command), args + " lists " + command + ":\n" + out);
        }
        assertFalse(out.contains("error:"), args + ":\n" + out);
      }
    }
  }

  @Test
  void mistakesExitNonZeroNamingTheMistake() throws Exception {
    record Case(List<String> args, int exit, String says) {}
    for (Case c : List.of(
        new Case(List.of("trian"), 2, "unknown command: trian"),
        new Case(List.of("run", "--conifg", "x.conf"), 1, "error: unknown option for run: --conifg"),
        new Case(List.of("--config"), 1, "error: --config needs a file"),
        new Case(List.of("--config", "no-such.conf"), 1, "error: --config no-such.conf: no such readable file"))) {
      try (JarProcess p = JarProcess.start("mistake", List.of(), c.args())) {
        int exit = p.awaitExit(60);
        String out = p.output();
        assertEquals(c.exit(), exit, c.args() + ":\n" + out);
        assertTrue(out.contains(c.says()), c.args() + ":\n" + out);
      }
    }
  }
}
