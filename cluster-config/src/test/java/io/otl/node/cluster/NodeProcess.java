package io.otl.node.cluster;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A training node in its own JVM, started exactly as the containers start it (docker/compose.yml):
 * {@code io.otl.node.Main run} configured through the same {@code OTL_*} variables
 * ({@link #COMPOSE_NODE_ENV}), plus a small {@code --config} file for test-only settings (the
 * read-only management endpoint on a free port). The classpath is the test JVM's own, because surefire
 * runs before {@code package} builds {@code otl-node.jar}; the main class and arguments are the jar's.
 */
final class NodeProcess implements AutoCloseable {

  /**
   * The variables a node service gets in docker/compose.yml (ComposeFileTest checks that compose uses
   * exactly these, and that the node reads each one or lists it in {@link #PENDING_ENV}).
   */
  static final List<String> COMPOSE_NODE_ENV = List.of(
      "OTL_HOSTNAME", "OTL_CLUSTER_PORT", "OTL_SEED_NODES", "OTL_HTTP_PORT",
      "OTL_PERSISTENCE", "OTL_DB_URL", "OTL_DB_USER", "OTL_DB_PASSWORD",
      "OTL_SIMULATOR_ENABLED", "OTL_TRINITY_ENDPOINT", "OTL_SERVING_BACKEND", "OTL_VLLM_URL",
      "OTL_KAFKA_ENABLED", "OTL_KAFKA_BOOTSTRAP");

  /**
   * Variables compose already sets but the node does not read yet, with the work they wait for.
   * Remove a name here once the node reads it (ComposeFileTest then checks it is really read).
   */
  static final Map<String, String> PENDING_ENV = Map.of();

  /** What the tests run, the same as the jar's Main-Class and compose's {@code command}. */
  static final String MAIN_CLASS = "io.otl.node.Main";
  static final String RUN = "run";

  final String name;
  final int clusterPort;
  final int httpPort;
  final int managementPort;
  private final Map<String, String> env;
  private final Path config;
  private final Path log;
  private Process process;
  private int starts;

  NodeProcess(String name, int clusterPort, int httpPort, int managementPort, Map<String, String> env, Path dir) {
    this.name = name;
    this.clusterPort = clusterPort;
    this.httpPort = httpPort;
    this.managementPort = managementPort;
    this.env = new LinkedHashMap<>(env);
    this.env.put("OTL_HOSTNAME", "127.0.0.1");
    this.env.put("OTL_CLUSTER_PORT", String.valueOf(clusterPort));
    this.env.put("OTL_HTTP_PORT", String.valueOf(httpPort));
    // Tests bind loopback only (compose keeps the default 0.0.0.0 inside the container).
    this.env.put("OTL_HTTP_HOST", "127.0.0.1");
    this.config = dir.resolve(name + ".conf").toAbsolutePath();
    this.log = dir.resolve(name + ".log");
    try {
      Files.writeString(config, """
          # test-only: the read-only pekko-management endpoint, to read the members
          agentscope.training.cluster.management.enabled = true
          pekko.management.http { hostname = "127.0.0.1", port = %d }
          """.formatted(managementPort));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The compose environment for a node of the cluster {@code seeds} with journal {@code db}. */
  static Map<String, String> clusterEnv(String seeds, String dbUrl, String dbUser, String dbPassword) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTL_SEED_NODES", seeds);
    env.put("OTL_PERSISTENCE", "postgres");
    env.put("OTL_DB_URL", dbUrl);
    env.put("OTL_DB_USER", dbUser);
    env.put("OTL_DB_PASSWORD", dbPassword);
    env.put("OTL_SIMULATOR_ENABLED", "false");
    env.put("OTL_TRINITY_ENDPOINT", "http://127.0.0.1:1");
    env.put("OTL_KAFKA_ENABLED", "false");
    env.put("OTL_KAFKA_BOOTSTRAP", "127.0.0.1:1");
    return env;
  }

  /** The {@code OTL_SEED_NODES} value that lists a node on each of {@code clusterPorts}. */
  static String seedNodes(int... clusterPorts) {
    return java.util.Arrays.stream(clusterPorts).mapToObj(p -> "pekko://otl@127.0.0.1:" + p)
        .collect(java.util.stream.Collectors.joining(","));
  }

  static int freePort() {
    return io.otl.node.testing.FreePorts.take();
  }

  /** The test JVM's real classpath (surefire's manifest-only booter jar hides it in java.class.path). */
  static String classpath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp == null || cp.isBlank() ? System.getProperty("java.class.path") : cp;
  }

  /** Appends HOCON settings to this node's config file (before {@link #start()}). */
  NodeProcess withConfig(String hocon) {
    try {
      Files.writeString(config, "\n" + hocon + "\n", java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  synchronized void start() {
    if (process != null && process.isAlive()) throw new IllegalStateException(name + " is running");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", classpath(), MAIN_CLASS, RUN, "--config", config.toString()));
    // The test dir is the working dir: relative defaults (./data, ./datasets) must not land in the source tree.
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(config.getParent().toFile()).redirectErrorStream(true)
        .redirectOutput(starts++ == 0 ? ProcessBuilder.Redirect.to(log.toFile())
            : ProcessBuilder.Redirect.appendTo(log.toFile()));
    // Only the variables compose sets (and the test-only host): nothing inherited may change the node.
    pb.environment().keySet().removeIf(k -> k.startsWith("OTL_"));
    pb.environment().putAll(env);
    try {
      process = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** kill -9. */
  synchronized void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** Sends a POSIX signal, e.g. {@code STOP} to freeze the JVM as a long pause would, {@code CONT} to resume. */
  synchronized void signal(String name) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
  }

  /** SIGTERM: the node leaves the cluster gracefully and hands its shards over. */
  synchronized void stopGracefully(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(name + " did not stop within " + timeout + "\n" + tail(40));
    }
  }

  /** Waits for the process to exit by itself; its exit code, or empty when it still runs after {@code bound}. */
  synchronized java.util.OptionalInt awaitExit(Duration bound) throws InterruptedException {
    if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) return java.util.OptionalInt.empty();
    return java.util.OptionalInt.of(process.exitValue());
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "--- last lines of " + log + " ---\n"
          + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log " + log + ")";
    }
  }

  File logFile() {
    return log.toFile();
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(20, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
