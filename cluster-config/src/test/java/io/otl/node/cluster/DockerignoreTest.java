package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Dockerfile copies the whole checkout into its build stage. A node run in the checkout (the
 * README's first command) leaves a journal of recorded sessions under data/ and exported datasets
 * and checkpoints beside it; a build must neither send those to the Docker daemon nor miss a source.
 */
class DockerignoreTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void whatANodeWritesStaysOutOfTheBuildContext() throws IOException {
    List<PathMatcher> ignored = patterns();
    for (String leftByARun : List.of("data/journal.mv.db", "datasets/job-1-a.jsonl", "checkpoints/a/job-1-a/x",
        "trajectories/trajectories-2026-12-01.jsonl", "exports/a-sft-all-now.jsonl", "node1.log",
        "cluster-config/target/otl-node.jar", "cluster-config/target/venv/bin/python", "target/x", ".git/HEAD",
        "data/logs/node1.log")) {
      assertTrue(excluded(ignored, leftByARun), leftByARun + " would be sent to the Docker build");
    }
  }

  @Test
  void everySourceTheBuildNeedsIsKept() throws IOException {
    List<PathMatcher> ignored = patterns();
    List<String> sources;
    try (Stream<Path> walk = Files.walk(ROOT)) {
      sources = walk.filter(Files::isRegularFile)
          .map(p -> ROOT.relativize(p).toString().replace('\\', '/'))
          .filter(p -> p.equals("pom.xml") || p.endsWith("/pom.xml") || p.contains("/src/main/"))
          .filter(p -> !p.contains("/target/") && !p.startsWith("target/"))
          .collect(Collectors.toList());
    }
    assertTrue(sources.size() > 100, "found only " + sources.size() + " sources under " + ROOT);
    for (String source : sources) {
      assertFalse(excluded(ignored, source), source + " is excluded from the Docker build context");
    }
  }

  /** Docker's rule: a path is out when a pattern matches it or one of its parent folders. */
  private static boolean excluded(List<PathMatcher> ignored, String relative) {
    for (Path p = Path.of(relative); p != null; p = p.getParent()) {
      for (PathMatcher m : ignored) {
        if (m.matches(p)) return true;
      }
    }
    return false;
  }

  private static List<PathMatcher> patterns() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve(".dockerignore"));
    return lines.stream().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#"))
        .flatMap(l -> l.startsWith("**/") ? Stream.of(l, l.substring(3)) : Stream.of(l))
        .map(l -> FileSystems.getDefault().getPathMatcher("glob:" + l))
        .collect(Collectors.toList());
  }
}
