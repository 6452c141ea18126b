package io.otl.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The shipped benchmarks jar run as BENCHMARKS.md says ({@code java -jar benchmarks/target/benchmarks.jar
 * …}), in its own process: its usage, and its cheapest workload (W1, embedded ingest, at a tiny size on
 * the test PostgreSQL) which starts a whole node from the shaded jar. Nothing is timed; the run must
 * store what it acknowledged. Skipped loudly without PostgreSQL, failed when OTL_REQUIRE_PG is set.
 */
class BenchmarksJarIT {

  @Test
  void usageIsPrinted() throws Exception {
    for (String help : List.of("help", "--help", "-h")) {
      Run r = run(List.of(help));
      assertEquals(0, r.exit, r.output);
      assertTrue(r.output.startsWith("usage: Bench"), help + ": " + r.output);
    }
  }

  @Test
  void cheapestWorkloadRunsFromTheJar() throws Exception {
    String url = System.getenv().getOrDefault("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    try (var c = DriverManager.getConnection(url, "postgres", "")) {
      c.isValid(2);
    } catch (Exception e) {
      String message = "no PostgreSQL at " + url + " for the benchmarks jar run (" + e.getMessage() + ")";
      if (System.getenv("OTL_REQUIRE_PG") != null) throw new AssertionError(message + " and OTL_REQUIRE_PG is set");
      System.err.println("!!! SKIPPING " + message);
      Assumptions.abort(message);
    }
    Run r = run(List.of("W1", "--sessions", "20", "--events", "4", "--no-baseline", "--pg-url", url,
        "--results-dir", "results"));
    assertEquals(0, r.exit, r.output);
    assertTrue(r.output.contains("eventsAccepted=80"), r.output);
    assertTrue(r.output.contains("countsCorrect=true"), r.output);
    assertTrue(Files.isRegularFile(r.dir.resolve("results/W1.json")), "the result was published");
  }

  private record Run(int exit, String output, Path dir) {}

  private static Run run(List<String> args) throws Exception {
    Path jar = Path.of(System.getProperty("otl.jar", "target/benchmarks.jar")).toAbsolutePath();
    assertTrue(Files.isRegularFile(jar), jar + " is missing: `package` must run first");
    Path root = Files.createDirectories(Path.of("target", "packaged").toAbsolutePath());
    Path dir = Files.createTempDirectory(root, "bench-");
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString()));
    cmd.addAll(args);
    Path out = dir.resolve("output.log");
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(out.toFile()).start();
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("still running after 300 s:\n" + Files.readString(out));
    }
    return new Run(p.exitValue(), Files.readString(out), dir);
  }
}
