package io.otl.node.cluster;

import static io.otl.node.cluster.CrashWitness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * docs/gateway.md "Recording is off the response path": one session's calls spread round-robin over the
 * three nodes of a cluster (a load balancer that is not sticky), by an agent that resends the system prompt
 * and a sliding window of its last three messages, each question the same "continue". A node numbers a
 * turn's recurring messages from its memory of the session, which misses the turns the other nodes
 * recorded since: a "continue" took an id the session already held and the turn was dropped as a duplicate
 * (trial t93: 9 of 13 messages kept). Each call's recording is awaited (a read of the session on the node
 * that answered waits for it), so every turn but the first two meets a stale memory.
 */
class GatewaySlidingWindowOnSeveralNodesTest {
  private static final String AGENT = "window-agent";
  private static final int TURNS = 7;
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aSlidingWindowOfContinuesRoundRobinOverThreeNodesKeepsEveryMessageOnceInOrder() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "gateway-window-nodes-" + System.nanoTime()).toAbsolutePath());
    ActorTestKit kit = ActorTestKit.create("simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    int[] cluster = {NodeProcess.freePort(), NodeProcess.freePort(), NodeProcess.freePort()};
    String seeds = NodeProcess.seedNodes(cluster);
    Map<String, String> env = NodeProcess.clusterEnv(seeds, url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    List<NodeProcess> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(new NodeProcess("node" + (i + 1), cluster[i], NodeProcess.freePort(), NodeProcess.freePort(), env,
            dir));
      }
      nodes.forEach(NodeProcess::start);
      List<Http> http = nodes.stream().map(n -> new Http(n.httpPort)).toList();
      for (NodeProcess n : nodes) await("node ready", () -> ready(new Http(n.httpPort)), nodes);
      await("three members Up", () -> http.get(0).get("/health/ready").status() == 200
          && new Http(nodes.get(0).managementPort).get("/cluster/members").json().path("members").size() == 3, nodes);
      Http.Response registered = http.get(0).post("/v1/models/" + AGENT + "/versions",
          "{\"version\":\"v1\",\"artifact\":\"s3://m/v1\",\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}");
      assertEquals(201, registered.status(), registered.body());

      String session = "window-" + Long.toString(System.nanoTime(), 36);
      List<ObjectNode> conversation = new ArrayList<>();
      for (int turn = 0; turn < TURNS; turn++) {
        Http node = http.get(turn % 3);
        turn(node, session, conversation);
        // The node that answered has recorded the turn once its read of the session answers.
        assertEquals(200, node.get("/v1/sessions/" + session).status());
      }

      List<String> sent = new ArrayList<>(List.of("system:You are terse."));
      conversation.forEach(m -> sent.add(m.path("role").asText() + ":" + m.path("content").asText()));
      for (Http node : http) {
        JsonNode stored = node.get("/v1/sessions/" + session).json().path("messages");
        List<String> contents = new ArrayList<>();
        stored.forEach(m -> contents.add(m.path("role").asText() + ":" + m.path("content").asText()));
        assertEquals(sent, contents, "each message once, in order");
      }
    } finally {
      nodes.forEach(NodeProcess::close);
      kit.shutdownTestKit();
    }
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** A turn: the system prompt and the conversation's last three messages, the newest "continue". */
  private static void turn(Http node, String session, List<ObjectNode> conversation) {
    conversation.add(message("user", "continue"));
    ArrayNode messages = JSON.createArrayNode().add(message("system", "You are terse."));
    conversation.subList(Math.max(0, conversation.size() - 3), conversation.size()).forEach(messages::add);
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = node.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    conversation.add(message("assistant", r.json().path("choices").path(0).path("message").path("content").asText()));
  }

  /** The bound is a hang guard (a node died or never got there), not a measurement. */
  private static void await(String what, BooleanSupplier condition, List<NodeProcess> alive)
      throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (!safely(condition)) {
      for (NodeProcess n : alive) if (!n.alive()) fail(n.name + " exited while waiting for " + what + "\n" + n.tail(60));
      if (System.nanoTime() > end) fail("never: " + what + "\n" + alive.get(0).tail(60));
      Thread.sleep(250);
    }
  }

  private static boolean safely(BooleanSupplier condition) {
    try {
      return condition.getAsBoolean();
    } catch (AssertionError | RuntimeException notYet) {
      return false;
    }
  }
}
