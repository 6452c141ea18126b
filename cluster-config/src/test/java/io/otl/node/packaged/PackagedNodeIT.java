package io.otl.node.packaged;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.JarProcess;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shipped node jar, run as README.md says ({@code java -jar cluster-config/target/otl-node.jar}),
 * in its own process on the embedded defaults: it must come up, take a session over HTTP, give it
 * back, and stop cleanly on SIGTERM. Runs in {@code mvn verify} after {@code package}, so a jar that
 * cannot start (e.g. a shade step that loses Pekko's version.conf) fails the build.
 */
class PackagedNodeIT {
  /** The JVM's exit status after SIGTERM once its shutdown hooks (Pekko's coordinated shutdown) ran. */
  static final int SIGTERM_EXIT = 128 + 15;

  @Test
  void nodeJarStartsIngestsAndStopsCleanlyOnSigterm() throws Exception {
    int httpPort = JarProcess.freePort();
    List<String> overrides = List.of(
        // A two-core machine, where the JVM's common pool is too small unless the jar sizes it (CommonPool).
        "-XX:ActiveProcessorCount=2",
        "-Dagentscope.training.http.port=" + httpPort,
        "-Dagentscope.training.http.host=127.0.0.1",
        "-Dagentscope.training.simulator.port=" + JarProcess.freePort(),
        "-Dpekko.remote.artery.canonical.port=" + JarProcess.freePort());
    try (JarProcess node = JarProcess.start("node", overrides, List.of())) {
      Http http = new Http(httpPort);
      awaitReady(node, http);

      Http.Response posted = http.post("/v1/sessions/packaged-s1/events", """
          {"agentId":"packaged-bot","events":[
            {"type":"message","role":"user","content":"Where is my parcel?"},
            {"type":"message","role":"assistant","content":"It arrives today.","latencyMs":420},
            {"type":"result","status":"SUCCESS"}]}""");
      assertEquals(202, posted.status(), posted.body());
      Http.Response read = http.get("/v1/sessions/packaged-s1");
      assertEquals(200, read.status(), read.body());
      JsonNode session = read.json();
      assertEquals("packaged-bot", session.path("agentId").asText(), read.body());
      assertTrue(read.body().contains("It arrives today."), read.body());

      node.terminate();
      int exit = node.awaitExit(120);
      String log = node.output();
      assertEquals(SIGTERM_EXIT, exit, "exit status after SIGTERM; output:\n" + log);
      assertTrue(log.contains("Running CoordinatedShutdown with reason [JvmExitReason]"), log);
      assertTrue(log.contains("Successfully shut down"), "the node left its cluster; output:\n" + log);
      // Not "Remoting shut down.": Pekko logs it through its logger actor as the system terminates,
      // so whether it reaches stdout before the JVM halts is a race (CI lost it once).
      assertFalse(log.contains(" ERROR "), "no error while running or stopping; output:\n" + log);
      // H2's shutdown hook once closed the journal under the last writes (a WARN, not an ERROR)
      assertFalse(log.contains("Database is already closed"), "the node closes its journal itself; output:\n" + log);
      assertFalse(log.contains("common fork-join pool"), "the jar sizes the common pool itself; output:\n" + log);
      assertTrue(node.workDir.resolve("data").toFile().isDirectory(), "the H2 journal lives under ./data");
    }
  }

  /**
   * A SIGTERM while the node starts (docker stop, local-cluster.sh stop right after start) is a stop,
   * not a failure: it printed "error: the node could not start: null" and exited 1.
   */
  @Test
  void sigtermWhileStartingIsAStopNotAFailure() throws Exception {
    List<String> overrides = List.of("-XX:ActiveProcessorCount=2",
        "-Dagentscope.training.http.port=" + JarProcess.freePort(),
        "-Dagentscope.training.http.host=127.0.0.1",
        "-Dagentscope.training.simulator.port=" + JarProcess.freePort(),
        "-Dpekko.remote.artery.canonical.port=" + JarProcess.freePort());
    try (JarProcess node = JarProcess.start("stop-while-starting", overrides, List.of())) {
      // The actor system has begun to start (the cluster, sharding and HTTP follow): the stop lands
      // mid-start. Where exactly varies from run to run; "null" came from a stop during the cluster's start.
      long deadline = System.nanoTime() + 180_000_000_000L;
      while (!node.output().contains("Slf4jLogger started") && node.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      node.terminate();
      int exit = node.awaitExit(120);
      String log = node.output();
      assertFalse(log.contains("could not start"), "a stop is no start failure; output:\n" + log);
      assertFalse(log.contains(": null"), log);
      assertEquals(SIGTERM_EXIT, exit, "exit status after SIGTERM; output:\n" + log);
    }
  }

  @Test
  void simulatorSubCommandAnswersRayVersion() throws Exception {
    int port = JarProcess.freePort();
    try (JarProcess simulator = JarProcess.start("simulator", List.of(),
        List.of("simulator", "--port", String.valueOf(port), "--work-dir", "sim"))) {
      Http http = new Http(port);
      Http.Response version = awaitAnswer(simulator, http, "/api/version");
      assertEquals(200, version.status(), version.body());
      assertTrue(version.json().path("ray_version").asText().matches("\\d+\\.\\d+\\.\\d+"), version.body());
      assertTrue(version.body().toLowerCase().contains("simulator"), version.body());
      assertEquals(200, http.get("/api/jobs/").status());

      simulator.terminate();
      int exit = simulator.awaitExit(60);
      assertEquals(SIGTERM_EXIT, exit, simulator.output());
    }
  }

  /** Polls /health/ready until 200; fails at once if the process died (e.g. a config error at start-up). */
  private static void awaitReady(JarProcess node, Http http) throws InterruptedException {
    Http.Response r = awaitAnswer(node, http, "/health/ready");
    long deadline = System.nanoTime() + 180_000_000_000L;
    while (r.status() != 200 && System.nanoTime() < deadline) {
      if (!node.isAlive()) throw new AssertionError("the node exited; output:\n" + node.output());
      Thread.sleep(250);
      r = http.get("/health/ready");
    }
    assertEquals(200, r.status(), "/health/ready: " + r.body() + "; output:\n" + node.output());
  }

  private static Http.Response awaitAnswer(JarProcess p, Http http, String path) throws InterruptedException {
    long deadline = System.nanoTime() + 180_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) throw new AssertionError("the process exited; output:\n" + p.output());
      try {
        return http.get(path);
      } catch (RuntimeException | AssertionError notYet) {
        Thread.sleep(250);
      }
    }
    throw new AssertionError("no answer on " + path + "; output:\n" + p.output());
  }
}
