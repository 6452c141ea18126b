package io.otl.node.seeds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code store-type = local} on a real node: completed trajectories appear as desensitized JSON
 * lines in {@code trajectories-<UTC day>.jsonl} under {@code store-path}, in the Kafka
 * {@code trajectories} shape; after a restart on the same journal none is written twice.
 */
class LocalStoreTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Config node(Path work, Path store) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.data-collector.store-type", "local",
            "agentscope.training.data-collector.store-path", store.toString(),
            "agentscope.training.read-side.rescan-interval", "1s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true));
  }

  private static void complete(Http http, String session, String content) {
    Http.Response r = http.post("/v1/sessions/" + session + "/events", """
        {"agentId":"store-agent","events":[
          {"type":"start","modelVersion":"base"},
          {"type":"message","role":"user","content":"%s"},
          {"type":"message","role":"assistant","content":"done"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(content));
    assertEquals(202, r.status(), r.body());
  }

  /** Every line of every day file, with the file it is in. */
  private record Stored(String file, JsonNode line) {}

  private static List<Stored> stored(Path store) {
    List<Stored> out = new ArrayList<>();
    if (!Files.isDirectory(store)) return out;
    try (Stream<Path> files = Files.list(store)) {
      for (Path f : files.sorted().toList()) {
        for (String l : Files.readAllLines(f)) out.add(new Stored(f.getFileName().toString(), JSON.readTree(l)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  private static List<Stored> awaitLines(Path store, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    List<Stored> last = List.of();
    while (System.nanoTime() < deadline) {
      last = stored(store);
      if (last.size() >= n) return last;
      Thread.sleep(200);
    }
    throw new AssertionError("expected " + n + " stored trajectories, found " + last);
  }

  @Test
  void completedTrajectoriesBecomeOneDesensitizedLineEachAcrossARestart() throws Exception {
    Path base = Path.of("target", "local-store-test-" + UUID.randomUUID()).toAbsolutePath();
    Path work = Files.createDirectories(base.resolve("journal"));
    Path store = base.resolve("trajectories");
    try (TrainingNode node = TrainingNode.start(node(work, store))) {
      Http http = new Http(node.httpPort());
      complete(http, "store-s1", "mail me at jane.doe@example.com or +8613812345678");
      complete(http, "store-s2", "second question");
      Http.Response open = http.post("/v1/sessions/store-open/events",
          "{\"agentId\":\"store-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"still typing\"}]}");
      assertEquals(202, open.status(), open.body());
      List<Stored> lines = awaitLines(store, 2);
      JsonNode s1 = lines.stream().map(Stored::line).filter(l -> l.get("sessionId").asText().equals("store-s1"))
          .findFirst().orElseThrow();
      assertEquals("user", s1.get("messages").get(0).get("role").asText());
      assertEquals("mail me at [EMAIL] or [PHONE]", s1.get("messages").get(0).get("content").asText());
      assertEquals("assistant", s1.get("messages").get(1).get("role").asText());
      assertTrue(s1.get("tools").isArray() && s1.get("tools").isEmpty(), "tools a JSON array, as the SFT line");
      assertEquals("store-agent", s1.get("agentId").asText());
      assertEquals("base", s1.get("modelVersion").asText());
      assertEquals("SUCCESS", s1.get("status").asText());
      assertTrue(s1.has("reward") && s1.has("qualityScore"), s1.toString());
      for (Stored s : lines) {
        LocalDate day = LocalDate.ofInstant(Instant.parse(s.line().get("at").asText()), ZoneOffset.UTC);
        assertEquals("trajectories-" + day + ".jsonl", s.file(), "rolled by the UTC day of completion");
      }
    }
    String raw = Files.readString(Files.list(store).findFirst().orElseThrow());
    assertFalse(raw.contains("jane.doe") || raw.contains("13812345678"), "no raw PII on disk: " + raw);

    try (TrainingNode node = TrainingNode.start(node(work, store))) {
      Http http = new Http(node.httpPort());
      complete(http, "store-s3", "after the restart");
      List<Stored> lines = awaitLines(store, 3);
      // The feed may redeliver what it delivered before the restart; s3 arriving shows it caught up.
      List<String> ids = new ArrayList<>(lines.stream().map(s -> s.line().get("sessionId").asText()).toList());
      ids.sort(null);
      assertEquals(List.of("store-s1", "store-s2", "store-s3"), ids, "each completed session exactly once");
    }
  }
}
