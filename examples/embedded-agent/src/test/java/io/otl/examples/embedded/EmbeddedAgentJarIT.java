package io.otl.examples.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The shipped example jar run as its README says ({@code java -jar
 * examples/embedded-agent/target/embedded-agent.jar}), in its own process and a fresh working
 * directory under target/: the embedded node starts from the shaded jar's configuration, stores the
 * sessions, and the JVM exits 0. Runs in {@code mvn verify} after {@code package}.
 */
class EmbeddedAgentJarIT {

  @Test
  void exampleJarStoresItsSessionsAndExitsZero() throws Exception {
    Path jar = Path.of(System.getProperty("otl.jar", "target/embedded-agent.jar")).toAbsolutePath();
    assertTrue(Files.isRegularFile(jar), jar + " is missing: `package` must run first");
    Path root = Files.createDirectories(Path.of("target", "packaged").toAbsolutePath());
    Path dir = Files.createTempDirectory(root, "embedded-");
    Path out = dir.resolve("output.log");
    ProcessBuilder pb = new ProcessBuilder(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString()))
        .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
    // Alone, as in the README's first command: no variable of the build may make it join a cluster.
    pb.environment().keySet().removeIf(k -> k.startsWith("OTL_"));
    Process p = pb.start();
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("still running after 300 s:\n" + Files.readString(out));
    }
    String output = Files.readString(out);

    assertEquals(0, p.exitValue(), output);
    assertFalse(output.contains("embedded-agent failed"), output);
    assertEquals(3, count(output, "\\[agent\\] session \\S+: recorded 5 events \\(sampled=true\\)"), output);
    assertEquals(3, count(output, "retry acknowledged as 5 duplicates"), output);
    assertTrue(output.contains("status COMPLETED"), "the stored trajectory was read back:\n" + output);
    assertTrue(output.contains("mail me at [EMAIL]"), "stored desensitized:\n" + output);
    Matcher done = Pattern.compile("done: Result\\[sessions=\\[[^]]+], accepted=(\\d+), duplicates=(\\d+)").matcher(output);
    assertTrue(done.find(), output);
    assertEquals(16, Integer.parseInt(done.group(1)), "3 sessions x 5 events + 1 rating");
    assertEquals(15, Integer.parseInt(done.group(2)));
    assertTrue(Files.isDirectory(dir.resolve("data")), "the H2 journal lives under ./data of the working directory");
    // The late rating completes a reward revision the trajectory feed delivers while the node closes:
    // it must not hand it to the already stopped shard regions (a WARN with a stack trace, trial t39).
    assertFalse(output.contains("had already been terminated"), "a stop without failed deliveries:\n" + output);
    assertFalse(output.contains("Restarting stream due to failure"), "a stop without stream restarts:\n" + output);
  }

  private static int count(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    int n = 0;
    while (m.find()) n++;
    return n;
  }
}
