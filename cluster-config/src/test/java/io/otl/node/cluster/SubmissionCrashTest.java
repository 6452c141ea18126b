package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of the node (a separate JVM) inside the submission window: the Trinity simulator's Ray
 * Jobs API has accepted the job, but the node never got the answer ({@link HoldingProxy} holds it
 * back). After a restart the coordinator must resume from its recorded intent with the same
 * submission id: the simulator accepts exactly one submission, and the job completes (design §3.2).
 */
class SubmissionCrashTest {

  @Test
  void aKillBetweenSubmissionAndAcknowledgmentGivesOneSubmissionAndACompletedJob() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = TestDatabases.outputDir("submit-crash");
    ActorTestKit kit = ActorTestKit.create("simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(300), Duration.ofSeconds(2)));
    int clusterPort = NodeProcess.freePort();
    int httpPort = NodeProcess.freePort();
    Map<String, String> env = NodeProcess.clusterEnv("pekko://otl@127.0.0.1:" + clusterPort, url,
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    try (HoldingProxy proxy = new HoldingProxy(simulator.baseUrl());
        NodeProcess node = new NodeProcess("submitter", clusterPort, httpPort, NodeProcess.freePort(),
            withEndpoint(env, proxy.baseUrl()), dir).withConfig("""
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
        Http.Response r = http.post("/v1/sessions/submit-s" + i + "/events", """
            {"agentId":"submit-agent","events":[{"type":"message","role":"user","content":"q"},
             {"type":"message","role":"assistant","content":"a"},{"type":"feedback","kind":"THUMBS_UP"},
             {"type":"result","status":"SUCCESS"}]}""");
        assertEquals(202, r.status(), r.body());
      }
      assertTrue(proxy.awaitHeldSubmission(Duration.ofSeconds(120)),
          "the node never submitted the job\n" + node.tail(60));
      node.kill(); // the simulator accepted the job; the node never heard so
      assertEquals(200, proxy.heldStatus(), "the held submission was not accepted by the simulator");
      JsonNode before = new Http(simulator.port()).get("/simulator/stats").json();
      assertEquals(1, before.get("jobs").asInt(), before.toString());

      node.start();
      await("node ready again", () -> http.get("/health/ready"), r -> r.status() == 200, node);
      JsonNode done = await("the job SUCCEEDED after the restart", () -> firstJob(http),
          j -> j != null && j.get("status").asText().equals("SUCCEEDED"), node);
      String jobId = done.get("jobId").asText();
      assertEquals(1, http.get("/v1/jobs?agentId=submit-agent").json().get("jobs").size());
      JsonNode stats = new Http(simulator.port()).get("/simulator/stats").json();
      assertEquals(1, stats.get("jobs").asInt(), "the simulator saw a second job: " + stats);
      JsonNode job = stats.get("submissions").get(jobId);
      if (job == null) throw new AssertionError("the simulator never saw " + jobId + ": " + stats);
      assertEquals(1, job.get("accepted").asInt(), stats.toString());
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  private static Map<String, String> withEndpoint(Map<String, String> env, String endpoint) {
    env.put("OTL_TRINITY_ENDPOINT", endpoint);
    return env;
  }

  private static JsonNode firstJob(Http http) {
    Http.Response r = http.get("/v1/jobs?agentId=submit-agent");
    if (r.status() != 200 || r.json().get("jobs").isEmpty()) return null;
    return r.json().get("jobs").get(0);
  }

  /** The bound is a hang guard (the node died or never got there), not a measurement. */
  private static <T> T await(String what, Supplier<T> probe, Predicate<T> done, NodeProcess node)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      if (!node.alive()) throw new AssertionError(node.name + " exited waiting for " + what + "\n" + node.tail(60));
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
