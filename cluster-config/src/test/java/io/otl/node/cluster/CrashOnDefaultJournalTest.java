package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@code kill -9} of a node on the embedded default journal, with no journal setting at all: the
 * node runs as the README's first command does, so it writes the default H2 URL
 * ({@code ./data/journal} under its working directory). Writers keep posting up to the kill; after a
 * restart every event that was answered 202 must be there. H2 keeps committed transactions in memory
 * for up to its write delay (500 ms unless the URL says {@code WRITE_DELAY=0}), so a default URL
 * without it loses the last acknowledged events here.
 */
class CrashOnDefaultJournalTest {
  private static final RetryingClient client = new RetryingClient();

  @Test
  void everyAcknowledgedEventSurvivesKillMinus9OnTheDefaultEmbeddedJournal() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "crash-default-" + System.nanoTime()).toAbsolutePath());
    // No OTL_PERSISTENCE / OTL_DB_URL: the default journal. The simulator is off only to keep its fixed port free.
    Map<String, String> env = Map.of("OTL_SIMULATOR_ENABLED", "false", "OTL_KAFKA_ENABLED", "false");
    try (NodeProcess node = new NodeProcess("node", NodeProcess.freePort(), NodeProcess.freePort(),
        NodeProcess.freePort(), env, dir)) {
      node.start();
      awaitReady(node);
      Map<String, Set<String>> acked = new ConcurrentHashMap<>();
      AtomicLong ackedCount = new AtomicLong();
      AtomicBoolean running = new AtomicBoolean(true);
      List<Thread> writers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int writer = t;
        Thread thread = new Thread(() -> {
          for (long n = 0; running.get(); n++) {
            String session = "crash-w" + writer + "-s" + (n % 10);
            String eventId = "e-" + n;
            Optional<RetryingClient.Reply> r = client.once("POST", node.httpPort, "/v1/sessions/" + session + "/events",
                """
                {"agentId":"crash-bot","events":[{"type":"message","eventId":"%s","role":"user","content":"m %d"}]}"""
                    .formatted(eventId, n), Duration.ofSeconds(10));
            if (r.isEmpty()) return; // the node is gone
            if (r.get().status() == 202) {
              acked.computeIfAbsent(session, k -> ConcurrentHashMap.newKeySet()).add(eventId);
              ackedCount.incrementAndGet();
            }
          }
        }, "crash-writer-" + t);
        writers.add(thread);
        thread.start();
      }
      CrashWitness.await("400 acknowledged events", () -> ackedCount.get() >= 400, node);
      node.kill(); // while the writers are still writing: the last 202s are milliseconds old
      running.set(false);
      for (Thread w : writers) w.join(30_000);
      assertTrue(Files.exists(dir.resolve("data").resolve("journal.mv.db")),
          "the node wrote the default journal ./data/journal under its working directory");

      node.start();
      awaitReady(node);
      for (Map.Entry<String, Set<String>> e : acked.entrySet()) {
        Optional<RetryingClient.Reply> r = client.once("GET", node.httpPort, "/v1/sessions/" + e.getKey(), null,
            Duration.ofSeconds(30));
        assertTrue(r.isPresent() && r.get().status() == 200, e.getKey() + " -> " + r);
        Set<String> stored = new HashSet<>();
        for (JsonNode m : r.get().json().path("messages")) stored.add(m.path("eventId").asText());
        Set<String> missing = new HashSet<>(e.getValue());
        missing.removeAll(stored);
        assertEquals(Set.of(), missing, e.getKey() + ": acknowledged before kill -9 but lost");
      }
      assertEquals(List.of(), client.serverErrors, "5xx answers other than 503");
    }
  }

  private static void awaitReady(NodeProcess node) throws InterruptedException {
    CrashWitness.await("node ready", () -> {
      Optional<RetryingClient.Reply> r = client.once("GET", node.httpPort, "/health/ready", null, Duration.ofSeconds(3));
      return r.isPresent() && r.get().status() == 200;
    }, node);
  }
}
