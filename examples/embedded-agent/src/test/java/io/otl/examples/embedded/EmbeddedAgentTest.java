package io.otl.examples.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.pattern.AskTimeoutException;
import org.junit.jupiter.api.Test;

/** The example runs end to end on an H2 journal in a temp folder, with no other service. */
class EmbeddedAgentTest {

  /** The example's settings on an H2 journal in a fresh temp folder. */
  private static Map<String, Object> settings() throws Exception {
    Path dir = Files.createTempDirectory("otl-embedded-");
    String url = "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath() + ";DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE";
    return Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", url,
        // Whatever the node writes stays in the temp dir, not in the module's source tree.
        "agentscope.training.training-runner.dataset-dir", dir.resolve("datasets").toString(),
        "agentscope.training.training-runner.checkpoint-root-dir", dir.resolve("checkpoints").toString(),
        "agentscope.training.data-collector.store-path", dir.resolve("trajectories").toString());
  }

  @Test
  void recordsSessionsHandlesNoModelVersionAndStopsCleanly() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    EmbeddedAgent.Result result = EmbeddedAgent.run(ConfigFactory.parseMap(settings()),
        Map.of(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(3, result.sessions().size(), out);
    assertEquals(3 * 5 + 1, result.accepted(), out);
    assertEquals(3 * 5, result.duplicates(), out);
    assertTrue(result.modelVersion().isEmpty(), out);
    assertTrue(out.contains("forms its own cluster"), out);
    assertTrue(out.contains("no model version for support-bot yet"), out);
    assertTrue(out.contains("mail me at [EMAIL]"), "PII is desensitized before it is stored:\n" + out);
    assertTrue(out.contains("status COMPLETED"), out);
    assertTrue(out.contains("a later RATING 2 revised the reward of " + result.sessions().get(0) + " from 1.00 to 0.50"),
        "the README's step 4 (the reward is revised) shows in the output:\n" + out);
    assertTrue(out.contains("node stopped"), out);
  }

  /**
   * A node that never answers (it waits to join a seed no one runs, so no entity ever starts): the
   * agent retries each timed-out ask a bounded number of times, says so, and then fails.
   */
  @Test
  void anAgentWhoseNodeNeverAnswersRetriesThenFails() throws Exception {
    int deadPort;
    try (ServerSocket s = new ServerSocket(0)) {
      deadPort = s.getLocalPort();
    }
    Map<String, Object> settings = new HashMap<>(settings());
    settings.put("agentscope.training.http.ask-timeout", "1s");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Config config = ConfigFactory.parseMap(settings).withFallback(ConfigFactory.parseString(
        "pekko.cluster.seed-nodes = [\"pekko://otl@127.0.0.1:" + deadPort + "\"]"));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> EmbeddedAgent.run(config, Map.of(), new PrintStream(bytes, true, StandardCharsets.UTF_8)));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(e.getMessage().contains("no answer after " + EmbeddedAgent.ATTEMPTS + " tries"), e.getMessage());
    assertTrue(out.contains("timed out (the node may still be recovering its journal); retry 1 of 3"), out);
    assertTrue(out.contains("retry 3 of 3"), out);
    assertTrue(out.contains("node stopped"), out);
  }

  /** A timed-out ask that is answered on a later try: the call succeeds and the output says it retried. */
  @Test
  void aTimedOutAskIsRetriedUntilAnswered() {
    AtomicInteger asks = new AtomicInteger();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    String answer = EmbeddedAgent.call("routing s1", () -> asks.incrementAndGet() < 3
            ? CompletableFuture.failedFuture(new AskTimeoutException("Ask timed out after [5000 ms]"))
            : CompletableFuture.completedFuture("v1"),
        new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals("v1", answer);
    assertEquals(3, asks.get());
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(out.contains("routing s1 timed out") && out.contains("retry 2 of 3"), out);
  }

  /** Only timeouts are retried: any other failure ends the call at once. */
  @Test
  void otherFailuresAreNotRetried() {
    AtomicInteger asks = new AtomicInteger();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EmbeddedAgent.call("recording s1",
        () -> {
          asks.incrementAndGet();
          return CompletableFuture.failedFuture(new IllegalArgumentException("bad batch"));
        }, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    assertEquals("bad batch", e.getMessage());
    assertEquals(1, asks.get());
  }
}
