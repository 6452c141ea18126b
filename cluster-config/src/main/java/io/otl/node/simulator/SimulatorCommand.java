package io.otl.node.simulator;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * {@code java -jar otl-node.jar simulator [options]}: runs the {@link TrinitySimulator} on its own
 * until the process is stopped (design §7.4).
 *
 * <pre>
 *   --host 127.0.0.1        interface to bind (0.0.0.0 in containers)
 *   --port 8265             port of both simulated APIs
 *   --work-dir ./data/simulator
 *   --pending 1s            time a job stays PENDING   (HOCON durations: 500ms, 2s, 1m)
 *   --running 5s            time a job stays RUNNING
 *   --commit-batch 1        rewarded experiences a /commit needs to bump model_version
 * </pre>
 */
public final class SimulatorCommand {

  static final String USAGE =
      "usage: simulator [--host 127.0.0.1] [--port 8265] [--work-dir ./data/simulator] "
          + "[--pending 1s] [--running 5s] [--commit-batch 1]";

  /**
   * What {@code simulator --help} prints: the usage line alone (all it printed) named no option's
   * meaning, unit or exit code, where {@code export --help} and {@code audit --help} do (trial t7).
   */
  static final String HELP = USAGE + "\n"
      + "  --host          the interface to bind (default 127.0.0.1; 0.0.0.0 in containers)\n"
      + "  --port          port of both simulated APIs, Ray Jobs and the Trinity proxy (0 to 65535; 0 picks a free one)\n"
      + "  --work-dir      jobs (ray-jobs/) and checkpoints are kept here, read back after a restart\n"
      + "  --pending       time a job stays PENDING, a HOCON duration (500ms, 2s, 1m), not negative\n"
      + "  --running       time a job stays RUNNING (default 5s)\n"
      + "  --commit-batch  rewarded experiences a POST /commit needs to bump model_version (an integer >= 1)\n"
      + "Not Trinity-RFT: jobs train nothing and write placeholder checkpoints (docs/operations.md). Stop it with\n"
      + "SIGTERM (exit 143).\n"
      + "exit codes: 2 wrong usage, 1 could not start (e.g. the port is taken)";

  private static final java.util.Set<String> OPTIONS =
      java.util.Set.of("--host", "--port", "--work-dir", "--pending", "--running", "--commit-batch");

  private SimulatorCommand() {}

  /**
   * A plain local system: the node's application.conf may ask for a cluster, the simulator is not part
   * of it. Header warnings off, as in the node (otl-node.conf, which this system does not read): every
   * AgentScope Java model call sends {@code User-Agent: agentscope-java/1.0.9; java/17…}, which pekko-http
   * cannot parse, and it logged a WARN with the header's whole value (of any header: a key, an e-mail).
   */
  static Config config() {
    return ConfigFactory.parseString("pekko.actor.provider = local\npekko.loglevel = INFO\n"
            + "pekko.http.server.parsing.illegal-header-warnings = off")
        .withFallback(ConfigFactory.load());
  }

  public static void main(String[] args) {
    SimulatorSettings settings;
    try {
      settings = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (settings == null) {
      System.out.println(HELP);
      return;
    }
    // Logging starts on this thread, before the actor system's threads log: SLF4J otherwise queues their
    // first lines while it initialises and prints a "SLF4J(W): … being replayed" notice to the console.
    org.slf4j.LoggerFactory.getILoggerFactory();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "trinity-simulator", config());
    try {
      TrinitySimulator.start(system, settings);
    } catch (RuntimeException e) {
      System.err.println(startFailure(settings, e));
      system.terminate();
      System.exit(1);
    }
    // Runs until SIGTERM/SIGINT: Pekko's coordinated shutdown terminates the system from its JVM hook.
    system.getWhenTerminated().toCompletableFuture().join();
  }

  /**
   * The one line a failed start prints. A taken port read "Trinity simulator cannot bind 127.0.0.1:8265:
   * org.apache.pekko.stream.impl.io.ConnectionSourceStage$$anon$1$$anon$2: Bind failed because of
   * java.net.BindException: …" without the "error:" every other failure of the jar starts with, and named
   * no way out (trial t73).
   */
  static String startFailure(SimulatorSettings settings, RuntimeException failure) {
    String address = "error: the Trinity simulator cannot listen on " + settings.host() + ":" + settings.port() + ": ";
    return switch (io.otl.node.ListenerBind.Cause.of(failure, settings.host())) {
      case TAKEN -> address + "another process listens on that port; start it on another with --port (0 picks a free"
          + " one)";
      case PORT_REFUSED -> address + "the port refused (another process holds it, or it is not allowed here); start it"
          + " on another with --port (0 picks a free one)";
      // Any bind failure read as a taken port: a host of another machine sent the user to --port (trial t146).
      case NOT_THIS_MACHINE -> address + settings.host() + " is not an address of this machine; start it with another"
          + " --host (127.0.0.1, or 0.0.0.0 for all of them)";
      case UNRESOLVED -> address + settings.host() + " does not resolve; start it with another --host (127.0.0.1, or"
          + " 0.0.0.0 for all of them)";
      case TIMED_OUT, OTHER -> "error: the Trinity simulator could not start: " + failure.getMessage();
    };
  }

  /** Parses the options; null for {@code --help}. Unknown options and bad values are errors. */
  public static SimulatorSettings parse(String[] args) {
    SimulatorSettings s = SimulatorSettings.defaults();
    java.util.Set<String> given = new java.util.HashSet<>();
    for (int i = 0; i < args.length; i++) {
      String opt = args[i];
      if (opt.equals("--help") || opt.equals("-h")) {
        return null;
      }
      if (opt.equals("simulator") && i == 0) {
        continue; // tolerate being handed the sub-command name too
      }
      if (!OPTIONS.contains(opt)) {
        // checked before the value: "--bogus needs a value" would send the user looking for a value
        throw new IllegalArgumentException("unknown option for simulator: " + opt);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(opt + " needs a value");
      }
      // as export and audit: the last of two values silently winning hid a typo in a script
      if (!given.add(opt)) throw new IllegalArgumentException(opt + " is given twice; give it once");
      String value = args[++i];
      // "--work-dir --pending 1s" took "--pending" as the folder and started, making a folder of that name
      // (new-user trial, session 50); export refuses the same slip. A negative duration ("-1s") has one dash and is checked below.
      if (value.startsWith("--")) {
        throw new IllegalArgumentException(opt + " needs a value; it is followed by the option " + value);
      }
      try {
        s = apply(s, opt, value);
      } catch (IllegalArgumentException e) {
        // The option as the user typed it, never the settings' own field names (port, commitBatchSize):
        // "port must be 0..65535" left the user to guess which flag was meant.
        throw new IllegalArgumentException(opt + ": " + e.getMessage(), e);
      }
    }
    return s;
  }

  /** One option onto the settings; an IllegalArgumentException says what is wrong with the value. */
  private static SimulatorSettings apply(SimulatorSettings s, String opt, String value) {
    return switch (opt) {
      case "--host" -> s.withHost(host(value));
      case "--port" -> s.withPort(integer(value, 0, 65535, " (0 picks a free port)"));
      case "--work-dir" -> s.withWorkDir(path(value));
      case "--pending" -> s.withDurations(duration(value), s.runningDuration());
      case "--running" -> s.withDurations(s.pendingDuration(), duration(value));
      case "--commit-batch" -> s.withCommitBatchSize(integer(value, 1, Integer.MAX_VALUE, ""));
      default -> throw new IllegalStateException("an option of OPTIONS is not handled: " + opt);
    };
  }

  private static int integer(String value, int min, int max, String note) {
    String range = max == Integer.MAX_VALUE ? "an integer >= " + min : "an integer from " + min + " to " + max;
    try {
      int n = Integer.parseInt(value.trim());
      if (n >= min && n <= max) return n;
    } catch (NumberFormatException e) {
      // the same message as out of range
    }
    throw new IllegalArgumentException("must be " + range + note + ", was '" + value + "'");
  }

  private static String host(String value) {
    if (value.isBlank() || !value.codePoints().allMatch(c -> c > 0x20 && c != 0x7f)) {
      throw new IllegalArgumentException("must be an interface's address or name (127.0.0.1, 0.0.0.0), was '"
          + value + "'");
    }
    return value;
  }

  private static Path path(String value) {
    if (value.isBlank()) throw new IllegalArgumentException("must name a directory, was empty");
    try {
      return Path.of(value);
    } catch (java.nio.file.InvalidPathException e) {
      throw new IllegalArgumentException("is not a valid path (" + e.getReason() + ")");
    }
  }

  private static Duration duration(String value) {
    // A bare number would be read as milliseconds (--running 30: jobs done before a poll saw them
    // RUNNING); the unit is asked for, as the configuration's durations ask for it. Zero is zero.
    if (io.otl.node.config.BareDurations.withoutUnit(value)) {
      throw new IllegalArgumentException("must be a duration with its unit, like 500ms, 2s or 1m, was '" + value
          + "' (a bare number would be milliseconds)");
    }
    Duration d;
    try {
      d = ConfigFactory.parseString("d = \"" + value.replace("\"", "") + "\"").getDuration("d");
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("must be a duration like 500ms, 2s or 1m, was '" + value + "'");
    }
    if (d.isNegative()) throw new IllegalArgumentException("must not be negative, was '" + value + "'");
    return d;
  }
}
