package io.otl.node;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code java -jar otl-node.jar [run] [--config file]}: runs a node. Further commands (design §7.4)
 * are listed by {@code --help}.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    CommonPool.sizeBeforeFirstUse();
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "otl-logback.xml");
    }
    List<String> rest = Arrays.asList(args);
    // A bare option means `run` (`--config f`), but `--help` is what a user types first to learn the
    // commands: it must not be taken for an unknown option of run.
    boolean bareOption = !rest.isEmpty() && rest.get(0).startsWith("--") && !rest.get(0).equals("--help");
    String command = rest.isEmpty() || bareOption ? "run" : rest.get(0);
    List<String> options = rest.isEmpty() || bareOption ? rest : rest.subList(1, rest.size());
    dispatch(command, options);
  }

  private static void dispatch(String command, List<String> options) throws Exception {
    Command c = COMMANDS.get(command);
    if (c != null) {
      c.run(options);
      return;
    }
    switch (command) {
      case "--help", "-h" -> usage(0);
      case "help" -> help(options);
      default -> usageError("unknown command: " + command);
    }
  }

  /** One sub-command: its options after the command's name. */
  @FunctionalInterface
  private interface Command {
    void run(List<String> options) throws Exception;
  }

  /**
   * The sub-commands by name, in the order {@code help}'s error lists them: the one place a command is
   * added, so the dispatch and the names {@code help <command>} accepts cannot drift apart.
   */
  private static final Map<String, Command> COMMANDS = commands();

  private static Map<String, Command> commands() {
    Map<String, Command> m = new LinkedHashMap<>();
    m.put("run", Main::run);
    m.put("export", options -> System.exit(ExportCommand.run(options)));
    m.put("audit", options -> AuditCommand.main(options.toArray(String[]::new)));
    m.put("simulator", options -> io.otl.node.simulator.SimulatorCommand.main(options.toArray(String[]::new)));
    return java.util.Collections.unmodifiableMap(m);
  }

  /** The sub-commands' names, in order (what {@link #USAGE} must list). */
  static java.util.Set<String> commandNames() {
    return COMMANDS.keySet();
  }

  /**
   * {@code help} alone (and {@code help help}) lists the commands; {@code help <command>} is that command's {@code --help}. Anything
   * else is a mistake (exit 2): {@code help extra} printed the list and exited 0 (trial t175).
   */
  private static void help(List<String> options) throws Exception {
    // "help help": help's own usage is the list of commands, which its line there documents (it was exit 2,
    // "help takes one command (run, export, audit, simulator), not help", for the command that list shows)
    if (options.isEmpty() || options.equals(List.of("help"))) usage(0);
    if (options.size() == 1 && COMMANDS.containsKey(options.get(0))) {
      dispatch(options.get(0), List.of("--help"));
      return;
    }
    usageError("help takes one command (" + String.join(", ", COMMANDS.keySet()) + "), not "
        + String.join(" ", options));
  }

  private static void run(List<String> options) {
    Optional<Path> configFile = Optional.empty();
    for (int i = 0; i < options.size(); i++) {
      String o = options.get(i);
      if (o.equals("--help") || o.equals("-h")) {
        print(RUN_USAGE, 0);
      } else if (o.equals("--config") && configFile.isPresent()) {
        runUsageError("--config is given twice; give it once (one file holds the node's settings)");
      } else if (o.equals("--config") && i + 1 < options.size() && options.get(i + 1).startsWith("--")) {
        // "run --config --help" said "no such readable file --help" (new-user trial, session 50)
        runUsageError("--config needs a file; it is followed by the option " + options.get(i + 1));
      } else if (o.equals("--config") && i + 1 < options.size()) {
        Path file = Path.of(options.get(++i));
        configFileProblem(file).ifPresent(Main::runUsageError);
        configFile = Optional.of(file);
      } else if (o.equals("--config")) {
        runUsageError("--config needs a file");
      } else {
        runUsageError("unknown option for run: " + o);
      }
    }
    Optional<Path> file = configFile;
    runNode(() -> TrainingNode.start(file, ConfigFactory.empty())).ifPresent(Main::fail);
  }

  /**
   * Starts a node with {@code start} and waits until it stops. Returns the one line to fail with (exit 1), or
   * empty for a clean stop. Every start failure is that one line: a checked exception too, which Scala code
   * throws undeclared (pekko's Await of the cluster port's bind, after bind-timeout, throws
   * TimeoutException): it escaped a catch of RuntimeException and printed a stack trace.
   */
  static Optional<String> runNode(Supplier<TrainingNode> start) {
    try {
      TrainingNode node = start.get();
      node.system().getWhenTerminated().toCompletableFuture().join();
      // A node the cluster refused (another journal) must not look like a clean stop to its supervisor.
      return node.joinRefusal().map(why -> "refused to join the cluster: " + why);
    } catch (TrainingNode.JoinRefusedException e) {
      return Optional.of(e.getMessage());
    } catch (Exception e) {
      if (jvmStopping()) {
        // A SIGTERM (kill, docker stop, local-cluster.sh stop) during start-up breaks whichever step
        // was running, often with an exception without a message: "could not start: null" and exit 1
        // sent operators looking for a fault. Nothing failed; the JVM exits as a stopped one (143).
        // System.exit is not called: during shutdown it would block this thread until the JVM halts.
        System.err.println("stopped while starting: the process was asked to stop (SIGTERM or SIGINT)");
        return Optional.empty();
      }
      return Optional.of("the node could not start: " + startFailure(e));
    }
  }

  /** True once the JVM runs its shutdown hooks: no hook can be added then (the JDK's own test). */
  static boolean jvmStopping() {
    Thread probe = new Thread(() -> { });
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException shuttingDown) {
      return true;
    }
  }

  /**
   * What went wrong: the first message along the causes, else the exception's type. An exception
   * without a message (a CompletionException wrapping one, a NullPointerException) printed as "null".
   */
  static String startFailure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) return t.getMessage();
    }
    return failure.getClass().getName() + " (without a message)";
  }

  /** Every sub-command with all its options: what {@code --help} shows before a user reads any doc. */
  static final String USAGE = """
      usage: java -jar otl-node.jar <command> [options]
        run [--config <file>]   run a node (the default command)
        export --agent A --format sft|dpo|rl [--since ISO] [--until ISO] [--out DIR] [--name NAME] [--config FILE] [--allow-pii]
                                write a dataset (JSON Lines + manifest) from the journal, or through the node
                                that holds the embedded journal; PII found: exit 1 and no file unless --allow-pii
        audit <session|coordinator|model|job> <id> [--as-of <ISO-8601>] [--format text|json] [--config <file>]
                                an entity's history (and its state as of a time) from the journal (or through
                                the node that holds the embedded journal)
        audit verify [--kind session|coordinator|model|all] [--config <file>]
                                replays every entity of the kind (default: all) from the journal (the embedded
                                H2 journal with its node stopped; PostgreSQL beside running nodes); reports
                                undeserializable events and sequence gaps (exit 1)
        simulator [--host 127.0.0.1] [--port 8265] [--work-dir DIR] [--pending 1s] [--running 5s] [--commit-batch 1]
                                the Trinity simulator on its own (Ray Jobs + Trinity proxy APIs)
        help [<command>]        this text, or a command's own options
      <command> --help shows a command's own options; a mistake on the command line exits 2, starting nothing
      """;

  /** {@code run --help}: what run takes, and where the rest of its settings come from. */
  static final String RUN_USAGE = """
      usage: java -jar otl-node.jar [run] [--config <file>]
        --config <file>   a HOCON .conf, or an AgentScope application.yml, settings.json or config.toml, laid
                          over the defaults (agentscope.training.*, pekko.*); without it the node runs on the
                          embedded default: H2 journal under ./data, the Trinity simulator inside
      Environment variables set the rest without a file: OTL_HTTP_PORT, OTL_CLUSTER_PORT, OTL_SIMULATOR_PORT,
      OTL_PERSISTENCE, OTL_DB_URL, ... (docs/configuration.md lists each, and whether it or the file wins).
      Listens on HTTP 8080 of every interface (API, gateway, console, /health, /metrics), cluster
      127.0.0.1:25520 and the simulator on 127.0.0.1:8265 (whatever the journal, unless simulator.enabled = false,
      env OTL_SIMULATOR_ENABLED). SIGTERM stops it cleanly (exit 143).
      """;

  /** The text goes to stdout when asked for, to stderr after a mistake (so a pipe gets no usage as data). */
  private static void usage(int code) {
    print(USAGE, code);
  }

  private static void print(String text, int code) {
    (code == 0 ? System.out : System.err).println(text);
    System.exit(code);
  }

  /**
   * Why {@code --config file} cannot be read, for the usage error (exit 2) of run, export and audit. A folder
   * passed the readable check and was refused later as an invalid configuration, exit 1 (trial t175).
   */
  static Optional<String> configFileProblem(Path file) {
    if (Files.isDirectory(file)) return Optional.of("--config " + file + " is a folder: name the config file in it");
    if (!Files.isReadable(file)) return Optional.of("--config " + file + ": no such readable file");
    return Optional.empty();
  }

  private static void runUsageError(String message) {
    System.err.println("error: " + message);
    print(RUN_USAGE, 2);
  }

  /** A mistake on the command line: nothing was started; exit 2, as export, audit and simulator do. */
  private static void usageError(String message) {
    System.err.println("error: " + message);
    usage(2);
  }

  private static void fail(String message) {
    System.err.println("error: " + message);
    System.exit(1);
  }
}
