package io.otl.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Predicate;

/** A real node for the tests: H2 journal and every file under a fresh dir in target/, HTTP on a free port. */
final class TestNode {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private TestNode() {}

  static Path dir(String prefix) throws IOException {
    Path root = Files.createDirectories(Path.of("target", "test-output").toAbsolutePath());
    return Files.createTempDirectory(root, prefix + "-");
  }

  static TrainingNode start(Path dir) {
    return start(dir, ConfigFactory.empty());
  }

  static TrainingNode start(Path dir, Config overrides) {
    return TrainingNode.start(overrides.withFallback(ConfigFactory.parseMap(Map.ofEntries(
        Map.entry("agentscope.training.persistence", "h2"),
        Map.entry("agentscope.training.db.url",
            "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0"),
        Map.entry("pekko.remote.artery.canonical.port", 0),
        Map.entry("agentscope.training.http.enabled", true),
        Map.entry("agentscope.training.http.port", 0),
        Map.entry("agentscope.training.http.host", "127.0.0.1"),
        Map.entry("agentscope.training.simulator.enabled", false),
        Map.entry("agentscope.training.training-runner.dataset-dir", dir.resolve("datasets").toString()),
        Map.entry("agentscope.training.training-runner.checkpoint-root-dir", dir.resolve("checkpoints").toString()),
        Map.entry("agentscope.training.data-collector.store-path", dir.resolve("trajectories").toString()),
        Map.entry("agentscope.training.simulator.work-dir", dir.resolve("simulator").toString())))));
  }

  /** GET /v1/sessions/{id} once {@code ready} holds (the hook sends asynchronously). */
  static JsonNode session(TrainingNode node, String id, Predicate<JsonNode> ready) throws Exception {
    JsonNode last = null;
    for (int i = 0; i < 200; i++) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/sessions/" + id)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        last = MAPPER.readTree(r.body());
        if (ready.test(last)) return last;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("session " + id + " never reached the expected state; last: " + last);
  }
}
