package io.otl.node.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A shipped jar run as a user runs it, {@code java -jar <jar> …}, in its own OS process, in a fresh
 * working directory under {@code target/} (relative defaults such as ./data land there), output
 * captured to a file for assertions and for the report when a test fails.
 */
public final class JarProcess implements AutoCloseable {
  private final Process process;
  private final Path output;
  public final Path workDir;

  private JarProcess(Process process, Path output, Path workDir) {
    this.process = process;
    this.output = output;
    this.workDir = workDir;
  }

  /** The jar the build put at the path in system property {@code otl.jar} (set by failsafe). */
  public static Path jar() {
    String path = System.getProperty("otl.jar");
    if (path == null) throw new AssertionError("system property otl.jar is not set: run through failsafe (mvn verify)");
    Path jar = Path.of(path);
    if (!Files.isRegularFile(jar)) throw new AssertionError(jar + " does not exist: `package` must run first");
    return jar;
  }

  /** Starts {@code java [jvmArgs] -jar <jar> [args]} in a new directory under target/. */
  public static JarProcess start(String name, List<String> jvmArgs, List<String> args) {
    try {
      Path root = Path.of("target", "packaged").toAbsolutePath();
      Files.createDirectories(root);
      Path dir = Files.createTempDirectory(root, name + "-");
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(jvmArgs);
      cmd.add("-jar");
      cmd.add(jar().toString());
      cmd.addAll(args);
      Path out = dir.resolve("output.log");
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
          .redirectOutput(out.toFile());
      // The jar must run on what the command line says, not on variables of the build's environment.
      pb.environment().keySet().removeIf(k -> k.startsWith("OTL_"));
      return new JarProcess(pb.start(), out, dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static int freePort() {
    return io.otl.node.testing.FreePorts.take();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Sends SIGTERM (what {@code kill <pid>}, Docker and systemd send). */
  public void terminate() {
    process.destroy();
  }

  /** Waits for the process to end; fails (and kills it) when it does not within {@code seconds}. */
  public int awaitExit(long seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("still running after " + seconds + " s; output:\n" + output());
    }
    return process.exitValue();
  }

  public String output() {
    try {
      return Files.readString(output, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + output + ": " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) process.destroyForcibly();
  }
}
