package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of the node (a separate JVM) while its training job is RUNNING on Trinity: after a
 * restart the coordinator picks the job up again by polling, the job completes, and Trinity saw
 * exactly one submission (design §3.2).
 */
class JobCrashTest {

  @Test
  void aJobRunningWhenTheNodeIsKilledCompletesAfterRestartWithOneSubmission() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createTempDirectory("otl-jobcrash-");
    ActorTestKit kit = ActorTestKit.create("simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(300), Duration.ofSeconds(20)));
    int clusterPort = NodeProcess.freePort();
    int httpPort = NodeProcess.freePort();
    Map<String, String> env = NodeProcess.clusterEnv("pekko://otl@127.0.0.1:" + clusterPort, url,
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    env.put("OTL_TRINITY_ENDPOINT", simulator.baseUrl());
    try (NodeProcess node = new NodeProcess("trainer", clusterPort, httpPort, NodeProcess.freePort(), env, dir)
        .withConfig("""
            agentscope.training.training-runner {
              trigger { type = threshold, min-samples = 3 }
              poll-interval = 300ms
              dataset-dir = "%s"
              checkpoint-root-dir = "%s"
            }
            """.formatted(dir.resolve("datasets"), dir.resolve("checkpoints")))) {
      node.start();
      Http http = new Http(httpPort);
      await("node ready", () -> http.get("/health/ready"), r -> r.status() == 200, node);
      for (int i = 0; i < 3; i++) {
        Http.Response r = http.post("/v1/sessions/crash-s" + i + "/events", """
            {"agentId":"crash-agent","events":[{"type":"message","role":"user","content":"q"},
             {"type":"message","role":"assistant","content":"a"},{"type":"feedback","kind":"THUMBS_UP"},
             {"type":"result","status":"SUCCESS"}]}""");
        assertEquals(202, r.status(), r.body());
      }
      JsonNode running = await("the job RUNNING", () -> firstJob(http),
          j -> j != null && j.get("status").asText().equals("RUNNING"), node);
      String jobId = running.get("jobId").asText();

      node.kill();
      node.start();
      await("node ready again", () -> http.get("/health/ready"), r -> r.status() == 200, node);
      JsonNode done = await("the job SUCCEEDED after the restart", () -> firstJob(http),
          j -> j != null && j.get("status").asText().equals("SUCCEEDED"), node);
      assertEquals(jobId, done.get("jobId").asText());
      assertEquals(1, new Http(node.httpPort).get("/v1/jobs?agentId=crash-agent").json().get("jobs").size());
      JsonNode stats = new Http(simulator.port()).get("/simulator/stats").json();
      assertEquals(1, countSubmissions(stats, jobId), stats.toString());
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  /** Accepted submissions of {@code jobId} as the simulator counted them; it must know no other job. */
  private static int countSubmissions(JsonNode stats, String jobId) {
    assertEquals(1, stats.get("jobs").asInt(), "the simulator saw other jobs too: " + stats);
    JsonNode job = stats.get("submissions").get(jobId);
    if (job == null) throw new AssertionError("simulator never saw " + jobId + ": " + stats);
    return job.get("accepted").asInt();
  }

  private static JsonNode firstJob(Http http) {
    Http.Response r = http.get("/v1/jobs?agentId=crash-agent");
    if (r.status() != 200 || r.json().get("jobs").isEmpty()) return null;
    return r.json().get("jobs").get(0);
  }

  private static <T> T await(String what, Supplier<T> probe, Predicate<T> done, NodeProcess node)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = probe.get();
        if (done.test(last)) return last;
      } catch (AssertionError connectionRefused) {
        // the node is still starting
      }
      Thread.sleep(250);
    }
    throw new AssertionError("timed out waiting for " + what + "; last: " + last + "\n" + node.tail(60));
  }
}
