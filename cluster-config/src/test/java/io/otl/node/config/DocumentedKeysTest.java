package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A user tunes the node from the docs, not from reference.conf: every key under
 * agentscope.training must be named on some page of docs/. http.metrics-sample-interval (why a pool
 * size on /metrics lags by up to 10 s) was readable only in reference.conf.
 */
class DocumentedKeysTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void everyKeyOfTheReferenceConfigIsNamedInTheDocs() throws IOException {
    Set<String> keys = ConfigFactory.defaultReference().getConfig(TrainingSettingsValidator.ROOT).entrySet()
        .stream().map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
    assertTrue(keys.contains("http.port") && keys.contains("model-update.canary-ratio"),
        "the node's reference.conf was read: " + keys);
    String docs;
    try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
      StringBuilder all = new StringBuilder();
      for (Path p : pages.filter(p -> p.toString().endsWith(".md")).toList()) all.append(Files.readString(p));
      docs = all.toString();
    }
    Set<String> missing = new TreeSet<>();
    for (String key : keys) {
      // A key is named by its last segment: the tables write sections as `http.{enabled,host,port}`.
      String last = key.substring(key.lastIndexOf('.') + 1).replace("\"", "");
      if (!Pattern.compile("(?<![A-Za-z0-9-])" + Pattern.quote(last) + "(?![A-Za-z0-9-])").matcher(docs).find()) {
        missing.add(key);
      }
    }
    assertTrue(missing.isEmpty(), "no page of docs/ names " + missing);
  }
}
