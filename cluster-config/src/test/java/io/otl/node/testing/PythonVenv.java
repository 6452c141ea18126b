package io.otl.node.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python the tests drive real third-party clients with: a venv at {@code <repo>/target/venv}
 * holding {@code scripts/python-requirements.txt} (pinned). Created with {@code python3 -m venv} and
 * filled with pip when missing or when the requirements changed (a hash stamp in the venv); .ci/run
 * prepares the same venv before the build. Without Python or pip the tests are skipped loudly, unless
 * OTL_REQUIRE_PYTHON=true (as in CI), where they fail.
 */
public final class PythonVenv {
  private static final String REQUIREMENTS = "scripts/python-requirements.txt";
  private static final String STAMP = ".otl-requirements.sha256";
  private static Path python;

  private PythonVenv() {}

  /** The venv's python executable, ready with the requirements installed; skips or fails without. */
  public static synchronized Path python() {
    if (python != null) return python;
    python = python(REQUIREMENTS, "venv", "OTL_REQUIRE_PYTHON");
    return python;
  }

  /**
   * A venv of its own at {@code target/<venvDir>} with {@code requirements} (relative to the repository)
   * installed, for packages that are not in every package index the tests run against: skipped loudly when
   * they cannot be installed, failed instead when the environment variable {@code requireEnv} is true.
   */
  public static synchronized Path python(String requirementsFile, String venvDir, String requireEnv) {
    try {
      Path root = repoRoot();
      Path venv = root.resolve("target").resolve(venvDir);
      Path exe = venv.resolve("bin").resolve("python");
      Path requirements = root.resolve(requirementsFile);
      String wanted = sha256(requirements);
      Path stamp = venv.resolve(STAMP);
      if (!Files.isExecutable(exe)) {
        run(List.of("python3", "-m", "venv", venv.toString()), root, "python3 -m venv");
      }
      if (!Files.isRegularFile(stamp) || !Files.readString(stamp).trim().equals(wanted)) {
        // One retry: where only the configured extra index answers, pip would spend minutes retrying the default one.
        run(List.of(exe.toString(), "-m", "pip", "install", "--quiet", "--retries", "1", "-r", requirements.toString()),
            root, "pip install -r " + requirementsFile);
        Files.writeString(stamp, wanted + "\n");
      }
      return exe;
    } catch (IOException | InterruptedException | RuntimeException e) {
      return unavailable(requirementsFile, requireEnv, e.getMessage());
    }
  }

  /** Runs {@code python <script> args…} in {@code dir}; returns exit code and combined output. */
  public static Result run(Path script, List<String> args, Path dir, long timeoutSeconds) throws Exception {
    return run(python(), script, args, dir, timeoutSeconds);
  }

  /** Runs {@code <exe> <script> args…} in {@code dir}, with a venv's python from {@link #python(String, String, String)}. */
  public static Result run(Path exe, Path script, List<String> args, Path dir, long timeoutSeconds) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(exe.toString(), script.toAbsolutePath().toString()));
    cmd.addAll(args);
    Path out = Files.createTempFile(dir, "python-", ".log");
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(out.toFile()).start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(script.getFileName() + " did not finish within " + timeoutSeconds + " s; output:\n" + Files.readString(out));
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  public record Result(int exitCode, String output) {
    /** The last non-empty line: the scripts print their JSON report there. */
    public String lastLine() {
      String[] lines = output.strip().split("\n");
      return lines[lines.length - 1];
    }
  }

  /** The directory that holds scripts/python-requirements.txt, from the module's working directory up. */
  public static Path repoRoot() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      if (Files.isRegularFile(d.resolve(REQUIREMENTS))) return d;
    }
    throw new IllegalStateException(REQUIREMENTS + " not found above " + Path.of("").toAbsolutePath());
  }

  private static void run(List<String> cmd, Path dir, String what) throws IOException, InterruptedException {
    Path log = Files.createTempFile("otl-venv-", ".log");
    Process p;
    try {
      p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException(what + " cannot run: " + e.getMessage(), e);
    }
    if (!p.waitFor(30, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException(what + " did not finish within 30 minutes");
    }
    if (p.exitValue() != 0) {
      String output = Files.readString(log);
      throw new IllegalStateException(what + " failed (exit " + p.exitValue() + "): "
          + output.substring(Math.max(0, output.length() - 2000)));
    }
    Files.deleteIfExists(log);
  }

  private static Path unavailable(String requirements, String requireEnv, String reason) {
    String message = "no Python venv with " + requirements + ": " + reason;
    if ("true".equalsIgnoreCase(System.getenv(requireEnv))) fail(message + " and " + requireEnv + "=true");
    System.err.println("!!! SKIPPING Python client tests: " + message);
    Assumptions.abort(message);
    return null;
  }

  private static String sha256(Path file) throws IOException {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
