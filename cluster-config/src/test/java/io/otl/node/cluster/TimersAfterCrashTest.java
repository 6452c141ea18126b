package io.otl.node.cluster;

import static io.otl.node.cluster.CrashWitness.await;
import static io.otl.node.cluster.CrashWitness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Timers survive a crash, not only a graceful restart: a node JVM with a short session idle timeout
 * is killed with {@code kill -9} right after a session's first event, before the timer can fire.
 * After the restart nothing addresses the session (no request names it); remember-entities must
 * start it again so that its idle timer completes it with TIMEOUT. The journal (PostgreSQL, read
 * directly so that the read itself cannot wake the session) is the witness on both sides of the kill.
 */
class TimersAfterCrashTest {

  /** Long enough that the kill (milliseconds after the 202) always comes first; short enough to wait for. */
  private static final String IDLE_TIMEOUT = "10s";

  @Test
  void anIdleSessionTimesOutAfterKillMinus9WithoutAnyNewInput() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "timers-crash-" + System.nanoTime()).toAbsolutePath());
    int clusterPort = NodeProcess.freePort();
    Map<String, String> env = NodeProcess.clusterEnv("pekko://otl@127.0.0.1:" + clusterPort, url,
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    String session = "idle-crash-1";
    try (NodeProcess node = new NodeProcess("idler", clusterPort, NodeProcess.freePort(), NodeProcess.freePort(),
        env, dir).withConfig("agentscope.training.data-collector.session.idle-timeout = " + IDLE_TIMEOUT)) {
      node.start();
      Http http = new Http(node.httpPort);
      await("node ready", () -> ready(http), node);
      Http.Response r = http.post("/v1/sessions/" + session + "/events", """
          {"agentId":"idle-bot","events":[{"type":"message","role":"user","content":"anyone there?"}]}""");
      assertEquals(202, r.status(), r.body());
      node.kill();

      // Dead node: the journal holds the session's start and message, and no completion yet.
      assertEquals(List.of(), manifests(url, session).stream().filter(TimersAfterCrashTest::completion).toList(),
          "the idle timer fired before the kill: the test proves nothing");

      node.start();
      await("node ready again", () -> ready(http), node);
      // No request names the session: only a restarted entity's timer can write its completion.
      await("the session's timeout completion in the journal", () -> {
        return manifests(url, session).stream().anyMatch(TimersAfterCrashTest::completion);
      }, node);
      JsonNode s = http.get("/v1/sessions/" + session).json();
      assertEquals("COMPLETED", s.path("status").asText(), s.toString());
      assertEquals("TIMEOUT", s.path("result").path("status").asText(), s.toString());
    }
  }

  /** The logical names a completion writes (session.task-result-recorded#1, session.trajectory-completed#1). */
  private static boolean completion(String manifest) {
    return manifest.startsWith("session.task-result-recorded") || manifest.startsWith("session.trajectory-completed");
  }

  private static List<String> manifests(String url, String session) {
    return CrashWitness.manifests(url, "AgentSession|" + session);
  }
}
