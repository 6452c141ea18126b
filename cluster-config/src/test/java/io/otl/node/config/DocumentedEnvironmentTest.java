package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * An operator running several nodes on one machine, or in containers, configures them by variables;
 * docs/configuration.md must name every one the node reads. OTL_SIMULATOR_PORT, OTL_SERVING_BACKEND,
 * OTL_VLLM_URL and others were readable only by grepping the sources.
 */
class DocumentedEnvironmentTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  /** {@code ${?OTL_X}} in HOCON, {@code getenv("OTL_X")} and the override table's {@code "OTL_X"} in Java. */
  private static final Pattern READ = Pattern.compile("\\$\\{\\?(OTL_[A-Z_]+)}|getenv\\(\"(OTL_[A-Z_]+)\"\\)|\"(OTL_[A-Z_]+)\"");

  @Test
  void everyVariableTheNodeReadsIsInTheConfigurationPage() throws IOException {
    Set<String> read = new TreeSet<>();
    try (Stream<Path> walk = Files.walk(ROOT)) {
      for (Path f : walk.filter(Files::isRegularFile)
          .filter(p -> p.toString().replace('\\', '/').contains("/src/main/"))
          .filter(p -> !p.toString().contains("/target/"))
          // The benchmarks' own variables configure the benchmarks, not a node.
          .filter(p -> !ROOT.relativize(p).startsWith("benchmarks"))
          .filter(p -> p.toString().endsWith(".conf") || p.toString().endsWith(".java"))
          .toList()) {
        Matcher m = READ.matcher(Files.readString(f));
        while (m.find()) {
          for (int g = 1; g <= 3; g++) {
            if (m.group(g) != null) read.add(m.group(g));
          }
        }
      }
    }
    assertTrue(read.contains("OTL_HTTP_PORT") && read.contains("OTL_DB_URL") && read.contains("OTL_SEED_NODES"),
        "the scan found the variables it must: " + read);
    String page = Files.readString(ROOT.resolve("docs/configuration.md"));
    Set<String> missing = new TreeSet<>();
    for (String variable : read) {
      if (!page.contains("`" + variable + "`")) missing.add(variable);
    }
    assertTrue(missing.isEmpty(), "docs/configuration.md does not name " + missing);
  }
}
