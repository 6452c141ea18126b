package io.otl.node.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code simulator} refuses a bad value of any option with a message that starts with the option
 * as the user typed it ({@code --port: …}); main prints it with the usage and exits 2 (CommandLineIT
 * runs the jar). Range checks used to surface as the settings' own words ("port must be 0..65535",
 * "commitBatchSize must be >= 1", "durations must not be negative"), naming no option.
 */
class SimulatorCommandTest {

  private static String refusal(String... args) {
    return assertThrows(IllegalArgumentException.class, () -> SimulatorCommand.parse(args)).getMessage();
  }

  @Test
  void everyBadOptionValueNamesTheOptionAsTyped() {
    record Bad(String option, String value, String says) {}
    for (Bad b : List.of(
        new Bad("--port", "abc", "--port: must be an integer from 0 to 65535 (0 picks a free port), was 'abc'"),
        new Bad("--port", "99999", "--port: must be an integer from 0 to 65535 (0 picks a free port), was '99999'"),
        new Bad("--port", "-1", "--port: must be an integer from 0 to 65535 (0 picks a free port), was '-1'"),
        new Bad("--commit-batch", "0", "--commit-batch: must be an integer >= 1, was '0'"),
        new Bad("--commit-batch", "many", "--commit-batch: must be an integer >= 1, was 'many'"),
        new Bad("--pending", "soon", "--pending: must be a duration like 500ms, 2s or 1m, was 'soon'"),
        new Bad("--pending", "-1s", "--pending: must not be negative, was '-1s'"),
        new Bad("--running", "-5s", "--running: must not be negative, was '-5s'"),
        new Bad("--running", "later", "--running: must be a duration like 500ms, 2s or 1m, was 'later'"),
        // a bare number was 30 ms: jobs finished before a poll saw them RUNNING (review)
        new Bad("--running", "30", "--running: must be a duration with its unit, like 500ms, 2s or 1m, was '30' "
            + "(a bare number would be milliseconds)"),
        new Bad("--host", "", "--host: must be an interface's address or name (127.0.0.1, 0.0.0.0), was ''"),
        new Bad("--host", "local host", "--host: must be an interface's address or name (127.0.0.1, 0.0.0.0), "
            + "was 'local host'"),
        new Bad("--work-dir", "", "--work-dir: must name a directory, was empty"),
        new Bad("--work-dir", "a\u0000b", "--work-dir: is not a valid path (Nul character not allowed)"))) {
      // after a good option, so a bad value is named wherever it stands
      List<String> before = b.option().equals("--port") ? List.of("--commit-batch", "2") : List.of("--port", "8265");
      assertEquals(b.says(), refusal(before.get(0), before.get(1), b.option(), b.value()), b.option() + " " + b.value());
    }
  }

  /**
   * An option whose value is missing before the next option: {@code --work-dir --pending} started the simulator
   * with its jobs in a folder called "--pending" (new-user trial, session 50), where a usage error (exit 2) was due.
   */
  @Test
  void anOptionFollowedByAnotherOptionHasNoValue() {
    assertEquals("--work-dir needs a value; it is followed by the option --pending",
        refusal("--port", "19222", "--work-dir", "--pending", "1s"));
    assertEquals("--host needs a value; it is followed by the option --port", refusal("--host", "--port", "0"));
    // A negative duration is a value (refused as negative), not an option.
    assertEquals("--pending: must not be negative, was '-1s'", refusal("--pending", "-1s"));
  }

  @Test
  void anOptionGivenTwiceIsRefusedAsExportAndAuditRefuseIt() {
    assertEquals("--port is given twice; give it once", refusal("--port", "8265", "--port", "8266"));
  }

  @Test
  void goodValuesStillBecomeSettings() {
    SimulatorSettings s = SimulatorCommand.parse(new String[] {"--host", "0.0.0.0", "--port", "0",
        "--commit-batch", "3", "--pending", "0s", "--running", "2s"});
    assertEquals("0.0.0.0", s.host());
    assertEquals(0, s.port());
    assertEquals(3, s.commitBatchSize());
    assertEquals(java.time.Duration.ofSeconds(2), s.runningDuration());
  }

  /**
   * A taken port (a real one, bound here) is one line that starts with "error:", names the address and
   * the option that moves it; it printed pekko's inner class name and BindException text (trial t73).
   */
  @Test
  void aTakenPortIsOneErrorLineNamingTheAddressAndTheOption() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
      SimulatorSettings settings = SimulatorCommand.parse(new String[] {"--host", "127.0.0.1", "--port",
          String.valueOf(taken.getLocalPort()), "--work-dir",
          java.nio.file.Files.createTempDirectory("otl-sim-taken").toString()});
      var system = org.apache.pekko.actor.typed.ActorSystem.create(
          org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "sim-taken", SimulatorCommand.config());
      try {
        RuntimeException failure = assertThrows(RuntimeException.class, () -> TrinitySimulator.start(system, settings));
        String line = SimulatorCommand.startFailure(settings, failure);
        assertEquals("error: the Trinity simulator cannot listen on 127.0.0.1:" + taken.getLocalPort()
            + ": another process listens on that port; start it on another with --port (0 picks a free one)", line);
      } finally {
        system.terminate();
      }
    }
  }

  /**
   * {@code simulator --host 192.0.2.1} (TEST-NET, never this machine's) failed with "Cannot assign requested
   * address", and the line said another process listened on the port: it names the host and --host now.
   */
  @Test
  void aHostThatIsNotThisMachinesIsOneErrorLineNamingTheHostOption() throws Exception {
    SimulatorSettings settings = SimulatorCommand.parse(new String[] {"--host", "192.0.2.1", "--port", "0",
        "--work-dir", java.nio.file.Files.createTempDirectory("otl-sim-not-here").toString()});
    var system = org.apache.pekko.actor.typed.ActorSystem.create(
        org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "sim-not-here", SimulatorCommand.config());
    try {
      RuntimeException failure = assertThrows(RuntimeException.class, () -> TrinitySimulator.start(system, settings));
      assertEquals("error: the Trinity simulator cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this"
          + " machine; start it with another --host (127.0.0.1, or 0.0.0.0 for all of them)",
          SimulatorCommand.startFailure(settings, failure));
    } finally {
      system.terminate();
    }
  }

  /**
   * Under LC_ALL=de_DE the JDK says "Die Adresse wird bereits verwendet": the command matched English words
   * only, and printed pekko's raw failure (review t150). A bind failure in any language is sorted by its host.
   */
  @Test
  void aBindFailureInAnotherLanguageStillNamesTheOption() throws Exception {
    SimulatorSettings local = SimulatorCommand.parse(new String[] {"--host", "127.0.0.1", "--port", "8265",
        "--work-dir", java.nio.file.Files.createTempDirectory("otl-sim-de").toString()});
    RuntimeException taken = new RuntimeException("Bind failed because of java.net.BindException: "
        + "[/127.0.0.1:8265] Die Adresse wird bereits verwendet",
        new java.net.BindException("Die Adresse wird bereits verwendet"));
    assertEquals("error: the Trinity simulator cannot listen on 127.0.0.1:8265: the port refused (another process"
        + " holds it, or it is not allowed here); start it on another with --port (0 picks a free one)",
        SimulatorCommand.startFailure(local, taken));
    SimulatorSettings foreign = SimulatorCommand.parse(new String[] {"--host", "192.0.2.1", "--port", "8265",
        "--work-dir", java.nio.file.Files.createTempDirectory("otl-sim-de").toString()});
    RuntimeException notHere = new RuntimeException("Bind failed",
        new java.net.BindException("Die angeforderte Adresse kann nicht zugewiesen werden"));
    assertEquals("error: the Trinity simulator cannot listen on 192.0.2.1:8265: 192.0.2.1 is not an address of this"
        + " machine; start it with another --host (127.0.0.1, or 0.0.0.0 for all of them)",
        SimulatorCommand.startFailure(foreign, notHere));
  }

  /** {@code simulator --help} explains each option and the exit codes, as export and audit do; it printed the usage line alone. */
  @Test
  void helpExplainsEveryOptionAndTheExitCodes() {
    for (String option : List.of("--host", "--port", "--work-dir", "--pending", "--running", "--commit-batch")) {
      assertEquals(true, SimulatorCommand.HELP.contains("\n  " + option + " "), option + " is explained:\n" + SimulatorCommand.HELP);
    }
    assertEquals(true, SimulatorCommand.HELP.startsWith(SimulatorCommand.USAGE), SimulatorCommand.HELP);
    assertEquals(true, SimulatorCommand.HELP.contains("exit codes: 2 wrong usage"), SimulatorCommand.HELP);
  }
}
