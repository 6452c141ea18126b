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
 * unknown option of the default {@code run} command (exit 1). Wrong usage exits 2 with the usage, for
 * every sub-command; 1 is kept for a node that could not start.
 */
class CommandLineIT {

  @Test
  void everySpellingOfHelpPrintsTheCommandsAndExitsZero() throws Exception {
    // "help help" was exit 2 naming help as no command (trial-api)
    for (List<String> args : List.of(List.of("--help"), List.of("-h"), List.of("help"), List.of("help", "help"))) {
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
  void runHelpShowsWhatRunTakes() throws Exception {
    // like export --help and audit --help: the command's own options, not the list of commands
    for (List<String> args : List.of(List.of("run", "--help"), List.of("help", "run"))) {
      try (JarProcess p = JarProcess.start("run-help", List.of(), args)) {
        int exit = p.awaitExit(60);
        String out = p.output();
        assertEquals(0, exit, args + ":\n" + out);
        assertTrue(out.contains("usage: java -jar otl-node.jar [run] [--config <file>]"), out);
        assertTrue(out.contains("OTL_HTTP_PORT"), "names where the ports come from:\n" + out);
        assertFalse(out.contains("export --agent"), out);
      }
    }
  }

  @Test
  void mistakesExitNonZeroNamingTheMistake() throws Exception {
    String conf = java.nio.file.Files.createTempFile("otl-cli-", ".conf").toAbsolutePath().toString();
    record Case(List<String> args, int exit, String says) {}
    for (Case c : List.of(
        new Case(List.of("trian"), 2, "unknown command: trian"),
        // help took any argument and exited 0 (trial t175)
        new Case(List.of("help", "extra"), 2, "error: help takes one command (run, export, audit, simulator), not extra"),
        new Case(List.of("run", "--conifg", "x.conf"), 2, "error: unknown option for run: --conifg"),
        new Case(List.of("--config"), 2, "error: --config needs a file"),
        new Case(List.of("run", "--config", "--help"), 2, "error: --config needs a file; it is followed by the option --help"),
        new Case(List.of("--config", "no-such.conf"), 2, "error: --config no-such.conf: no such readable file"),
        new Case(List.of("run", "--config", conf, "--config", conf), 2, "error: --config is given twice"),
        // the first of two is missing: it is the one named, before the second is looked at
        new Case(List.of("run", "--config", "no-such-a.conf", "--config", conf), 2,
            "error: --config no-such-a.conf: no such readable file"),
        // a file as --out was exit 1 after the journal was read ("cannot write …")
        new Case(List.of("export", "--agent", "a", "--format", "sft", "--out", conf), 2,
            "error: --out " + conf + ": is a file, not a folder"))) {
      try (JarProcess p = JarProcess.start("mistake", List.of(), c.args())) {
        int exit = p.awaitExit(60);
        String out = p.output();
        assertEquals(c.exit(), exit, c.args() + ":\n" + out);
        assertTrue(out.contains(c.says()), c.args() + ":\n" + out);
        // an unknown command gets the list of commands; a mistake of run, run's own usage
        String usage = List.of("trian", "help").contains(c.args().get(0)) ? "usage: java -jar otl-node.jar <command>"
            : c.args().get(0).equals("export") ? "usage: java -jar otl-node.jar export"
            : "usage: java -jar otl-node.jar [run] [--config <file>]";
        assertTrue(out.contains(usage), "the usage follows: " + c.args() + ":\n" + out);
      }
    }
  }

  /**
   * Every sub-command calls a flag it does not know unknown (not "needs a value", which sent users
   * looking for a value), shows its usage, and exits 2 having started nothing.
   */
  @Test
  void anUnknownFlagOfEverySubCommandIsCalledUnknownWithTheUsage() throws Exception {
    record Case(List<String> args, String says, String usage) {}
    for (Case c : List.of(
        new Case(List.of("simulator", "--bogus"), "error: unknown option for simulator: --bogus", "usage: simulator"),
        new Case(List.of("simulator", "--bogus", "1"), "error: unknown option for simulator: --bogus",
            "usage: simulator"),
        new Case(List.of("simulator", "--port"), "error: --port needs a value", "usage: simulator"),
        // A bad value names the option as typed, not the setting's field ("port must be 0..65535").
        new Case(List.of("simulator", "--port", "99999"), "error: --port: must be an integer from 0 to 65535",
            "usage: simulator"),
        new Case(List.of("simulator", "--commit-batch", "0"), "error: --commit-batch: must be an integer >= 1",
            "usage: simulator"),
        new Case(List.of("run", "--bogus"), "error: unknown option for run: --bogus", "usage: java -jar otl-node.jar"),
        new Case(List.of("export", "--bogus"), "error: unknown option for export: --bogus", "usage: java -jar otl-node.jar export"),
        new Case(List.of("audit", "--bogus"), "error: unknown option --bogus", "usage: audit"),
        new Case(List.of("audit", "verify", "--as-of", "2026-01-01T00:00:00Z"), "error: --as-of belongs to audit",
            "audit verify [--kind session|coordinator|model|all] [--config <file>]"),
        new Case(List.of("audit", "verify", "--format", "json"), "error: --format belongs to audit",
            "audit verify [--kind session|coordinator|model|all] [--config <file>]"))) {
      try (JarProcess p = JarProcess.start("unknown-flag", List.of(), c.args())) {
        int exit = p.awaitExit(60);
        String out = p.output();
        assertEquals(2, exit, c.args() + ":\n" + out);
        assertTrue(out.contains(c.says()), c.args() + ":\n" + out);
        assertTrue(out.contains(c.usage()), c.args() + " shows the usage:\n" + out);
        assertFalse(out.contains("SIMULATOR ***"), "nothing started: " + out);
      }
    }
  }

  /**
   * A new user's 8080 is often taken: the start must stop with the one line that names the port and
   * the setting that moves that listener (each of the four), not after Pekko's 27-line "Bind failed" stack
   * trace, nor with every port variable for the user to guess from (trial t141).
   */
  @Test
  void aTakenPortStopsTheStartWithOneClearLineNamingItsSetting() throws Exception {
    record Listener(String key, String variable) {}
    for (Listener l : List.of(new Listener("agentscope.training.http.port", "OTL_HTTP_PORT"),
        new Listener("pekko.remote.artery.canonical.port", "OTL_CLUSTER_PORT"),
        new Listener("agentscope.training.simulator.port", "OTL_SIMULATOR_PORT"),
        new Listener("agentscope.training.otlp.port", "OTL_OTLP_PORT"))) {
      try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
        int port = taken.getLocalPort();
        // A loaded machine took longer than the binds' defaults (3 s, 1 s) for a free port: the start then failed
        // with a timeout, not with the taken port.
        List<String> jvm = new java.util.ArrayList<>(List.of("-Dagentscope.training.http.host=127.0.0.1",
            "-Dpekko.remote.artery.bind.bind-timeout=60s"));
        for (String key : List.of("agentscope.training.http.port", "pekko.remote.artery.canonical.port",
            "agentscope.training.simulator.port", "agentscope.training.otlp.port")) {
          jvm.add("-D" + key + "=" + (key.equals(l.key()) ? port : JarProcess.freePort()));
        }
        try (JarProcess p = JarProcess.start("port-taken", jvm, List.of())) {
          int exit = p.awaitExit(180);
          String out = p.output();
          assertEquals(1, exit, out);
          String error = out.lines().filter(line -> line.startsWith("error: ")).findFirst().orElse(out);
          assertTrue(error.contains("port " + port + " is in use (another process listens on it): start this node with"
              + " another " + l.variable() + " (" + l.key() + ")"), error);
          for (String other : List.of("OTL_HTTP_PORT", "OTL_CLUSTER_PORT", "OTL_SIMULATOR_PORT", "OTL_OTLP_PORT")) {
            assertTrue(other.equals(l.variable()) || !error.contains(other), "names only " + l.variable() + ": " + error);
          }
          assertFalse(out.lines().anyMatch(line -> line.startsWith("\tat ") || line.startsWith("java.net.BindException")),
              "no stack trace:\n" + out);
        }
      }
    }
  }

  /**
   * A host that is no address of this machine (192.0.2.1, TEST-NET) failed the bind with "Cannot assign requested
   * address" and the line said "another process listens on that port" (trial t146): it names the host setting.
   */
  @Test
  void aHostThatIsNotThisMachinesStopsTheStartNamingTheHostSetting() throws Exception {
    List<String> jvm = new java.util.ArrayList<>(List.of("-Dagentscope.training.http.host=192.0.2.1",
        "-Dpekko.remote.artery.bind.bind-timeout=60s"));
    for (String key : List.of("agentscope.training.http.port", "pekko.remote.artery.canonical.port",
        "agentscope.training.simulator.port")) {
      jvm.add("-D" + key + "=" + JarProcess.freePort());
    }
    try (JarProcess p = JarProcess.start("host-not-here", jvm, List.of())) {
      int exit = p.awaitExit(180);
      String out = p.output();
      assertEquals(1, exit, out);
      String error = out.lines().filter(line -> line.startsWith("error: ")).findFirst().orElse(out);
      assertTrue(error.contains("the HTTP API's host 192.0.2.1 is not an address of this machine (cannot listen on"
          + " it): set OTL_HTTP_HOST (agentscope.training.http.host) to one of its addresses"), error);
      assertFalse(error.contains("another process listens"), error);
      assertFalse(out.lines().anyMatch(line -> line.startsWith("\tat ") || line.startsWith("java.net.BindException")),
          "no stack trace:\n" + out);
    }
  }
}
