package io.otl.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A node in its own JVM, started as the containers start it ({@code io.otl.node.Main run}, configured
 * by OTL_* variables), from this JVM's own classpath (the shaded benchmarks.jar carries the node).
 * HTTP and cluster bind 127.0.0.1 only.
 */
final class NodeJvm implements AutoCloseable {
  final int httpPort;
  final int clusterPort;
  private final Map<String, String> env;
  private final Path log;
  /** Further JVM options for the next start (R4's logging, W8's profiler), before the main class. */
  private final List<String> jvmArgs = new ArrayList<>();
  private Process process;

  NodeJvm(Pg pg, Pg.Schema schema, Path dir, String name) throws IOException {
    this(pg, schema, dir, name, freePort(), Map.of());
  }

  /** A node on {@code clusterPort} with further OTL_* variables (seed nodes, Kafka) over the defaults. */
  NodeJvm(Pg pg, Pg.Schema schema, Path dir, String name, int clusterPort, Map<String, String> extraEnv)
      throws IOException {
    this.httpPort = freePort();
    this.clusterPort = clusterPort;
    this.log = dir.resolve(name + ".log");
    // One run's log per file (restarts append): R4 reads it to count clusters formed.
    Files.deleteIfExists(log);
    Map<String, String> e = new java.util.HashMap<>(Map.of(
        "OTL_PERSISTENCE", "postgres",
        "OTL_DB_URL", schema.url(),
        "OTL_DB_USER", pg.user,
        "OTL_DB_PASSWORD", pg.password,
        "OTL_HTTP_PORT", String.valueOf(httpPort),
        "OTL_HTTP_HOST", "127.0.0.1",
        "OTL_HOSTNAME", "127.0.0.1",
        "OTL_CLUSTER_PORT", String.valueOf(clusterPort),
        "OTL_SIMULATOR_ENABLED", "false",
        "OTL_KAFKA_ENABLED", "false"));
    e.putAll(extraEnv);
    this.env = Map.copyOf(e);
  }

  /** Adds JVM options for the next start (a profiler, a log configuration, a setting). */
  void jvmArgs(List<String> args) {
    jvmArgs.addAll(args);
  }

  /** The running node's process id (for its CPU time in /proc). */
  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  void start() throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx512m"));
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.otl.node.Main", "run"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().keySet().removeIf(k -> k.startsWith("OTL_"));
    pb.environment().putAll(env);
    process = pb.start();
  }

  /** Waits until /health/ready answers 200; returns the milliseconds it took. */
  long awaitReady(Duration max) throws Exception {
    HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long t0 = System.nanoTime();
    long deadline = t0 + max.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) throw new IllegalStateException("node exited: " + tail());
      try {
        HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
            + "/health/ready")).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) return (System.nanoTime() - t0) / 1_000_000;
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("node not ready within " + max + ": " + tail());
  }

  /** kill -9. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * SIGTERM, as a supervisor or {@code docker stop} sends it: the node leaves the cluster and hands
   * its shards over. Returns the milliseconds until the JVM exited; kills it after {@code max}.
   */
  long stopGracefully(Duration max) throws InterruptedException {
    long t0 = System.nanoTime();
    process.destroy();
    if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      throw new IllegalStateException("node did not stop within " + max + " of SIGTERM: " + tail());
    }
    return (System.nanoTime() - t0) / 1_000_000;
  }

  Path log() {
    return log;
  }

  /** Lines of this node's log (all its starts) containing {@code needle}. */
  long logLines(String needle) {
    try (var lines = Files.lines(log, java.nio.charset.StandardCharsets.ISO_8859_1)) {
      return lines.filter(l -> l.contains(needle)).count();
    } catch (IOException e) {
      return 0;
    }
  }

  String tail() {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - 30), all.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Override
  public void close() throws Exception {
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Kills the node JVMs this process started when it is stopped itself (Ctrl-C, SIGTERM): its
   * {@code finally} blocks do not run then, and a stopped run left three nodes running for an hour.
   */
  static void killChildrenOnExit() {
    Runtime.getRuntime().addShutdownHook(new Thread(() ->
        ProcessHandle.current().children().forEach(ProcessHandle::destroyForcibly), "kill-node-jvms"));
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }
}
