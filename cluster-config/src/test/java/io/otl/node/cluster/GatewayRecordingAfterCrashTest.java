package io.otl.node.cluster;

import static io.otl.node.cluster.CrashWitness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * The gateway answers a turn before it records it. A turn whose session lives on a node that was
 * just killed (kill -9) is answered (the model server is elsewhere) while no node holds the
 * session: the recording used to time out once (ask timeout, 5 s, shorter than the fail-over) and
 * was dropped, so the last turn of a conversation that ended then was lost although the agent had
 * its 200. Three node JVMs on one PostgreSQL journal; the agent talks to node 1 only, node 3 is
 * killed; every session's second turn is sent right after the kill, so the sessions node 3 held
 * (about a third) are recorded only if the gateway sends the recording again after the fail-over.
 */
class GatewayRecordingAfterCrashTest {
  /** Several agents: a call whose agent's ModelVersion was on the killed node is 503 until it moves. */
  private static final int AGENTS = 6;
  private static final int SESSIONS = 30;
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aTurnAnsweredWhileItsSessionsNodeIsDeadIsRecordedOnceTheSessionHasMoved() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "gateway-record-crash-" + System.nanoTime()).toAbsolutePath());
    ActorTestKit kit = ActorTestKit.create("simulator");
    // The model server outlives the kill, as a separate vLLM server would.
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
      Http node1 = new Http(nodes.get(0).httpPort);
      Http node2 = new Http(nodes.get(1).httpPort);
      NodeProcess victim = nodes.get(2);
      for (NodeProcess n : nodes) await("node ready", () -> ready(new Http(n.httpPort)), nodes);
      await("three members Up", () -> node1.get("/health/ready").status() == 200
          && new Http(nodes.get(0).managementPort).get("/cluster/members").json().path("members").size() == 3, nodes);

      // Each agent's only version, served by the simulator's model face.
      for (int a = 0; a < AGENTS; a++) {
        Http.Response registered = node1.post("/v1/models/" + agent("crash-s" + a) + "/versions",
            "{\"version\":\"v1\",\"artifact\":\"s3://m/v1\",\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}");
        assertEquals(201, registered.status(), registered.body());
      }

      // First turns: every session is started, stored and spread over the three nodes.
      Map<String, ArrayNode> histories = new LinkedHashMap<>();
      for (int i = 0; i < SESSIONS; i++) {
        String session = "crash-s" + i;
        ArrayNode messages = JSON.createArrayNode();
        histories.put(session, messages);
        turn(node1, session, messages, "first question " + i, false);
      }
      await("every first turn stored", () -> histories.keySet().stream().allMatch(s -> stored(node1, s) == 2), nodes);

      victim.kill();
      // Second turns, all at once through node 1 while node 3's sessions have no node yet (in
      // parallel: a call whose route was on node 3 waits for its 503, and would delay the others
      // until after the fail-over).
      List<String> retry = java.util.Collections.synchronizedList(new ArrayList<>());
      Map<String, Integer> rated = new java.util.concurrent.ConcurrentHashMap<>();
      java.util.concurrent.ExecutorService calls = java.util.concurrent.Executors.newFixedThreadPool(SESSIONS);
      List<java.util.concurrent.Future<?>> inFlight = new ArrayList<>();
      for (int i = 0; i < SESSIONS; i++) {
        String session = "crash-s" + i;
        String question = "second question " + i;
        inFlight.add(calls.submit(() -> {
          if (!turn(node1, session, histories.get(session), question, true)) retry.add(session);
          else rated.put(session, rateLastAnswer(node1, session));
        }));
      }
      for (java.util.concurrent.Future<?> f : inFlight) f.get();
      calls.shutdown();
      // Those whose agent's route was on node 3 are answered once it has moved: clients retry a 503.
      for (String session : retry) {
        await("a 503 retried", () -> turn(node1, session, histories.get(session), null, true), nodes.subList(0, 2));
        rated.put(session, rateLastAnswer(node1, session));
      }
      // The answering node rated each answer the moment the agent had it: it is that node's own answer,
      // so the rating is accepted (after 503s while the session moves), never a 404 for an unknown msgId.
      Map<String, Integer> refused = new LinkedHashMap<>();
      rated.forEach((s, status) -> {
        if (status != 202) refused.put(s, status);
      });
      assertEquals(Map.of(), refused, "feedback by msgId on the answering node, final status per session");

      // Settled: each session either has its second turn, or node 1 counted a recording it gave up.
      await("every second turn stored or given up", () -> recordFailures(node1) > 0
          || histories.keySet().stream().allMatch(s -> stored(node2, s) == 4), nodes.subList(0, 2));
      assertEquals(0, recordFailures(node1), "recordings node 1 gave up:\n" + nodes.get(0).tail(40));
      for (String session : histories.keySet()) {
        JsonNode stored = node2.get("/v1/sessions/" + session).json().path("messages");
        List<String> contents = new ArrayList<>();
        stored.forEach(m -> contents.add(m.path("role").asText() + ":" + m.path("content").asText()));
        List<String> sent = new ArrayList<>();
        histories.get(session).forEach(m -> sent.add(m.path("role").asText() + ":" + m.path("content").asText()));
        assertEquals(sent, contents, session + ": each turn once, in order");
      }
    } finally {
      nodes.forEach(NodeProcess::close);
      kit.shutdownTestKit();
    }
  }

  private static String agent(String session) {
    return "crash-agent-" + Integer.parseInt(session.substring("crash-s".length())) % AGENTS;
  }

  /**
   * One gateway call with the conversation so far (and {@code question}, unless null: a retry);
   * the answer is appended to it. False for a 503 when {@code may503}.
   */
  private static boolean turn(Http node, String session, ArrayNode messages, String question, boolean may503) {
    if (question != null) messages.add(JSON.createObjectNode().put("role", "user").put("content", question));
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages.deepCopy());
    Http.Response r = node.postWithHeaders("/v1/chat/completions", body.toString().getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", agent(session), "X-Session-Id", session);
    if (may503 && r.status() == 503) return false;
    assertEquals(200, r.status(), session + ": " + r.body());
    String answer = r.json().path("choices").path(0).path("message").path("content").asText();
    assertFalse(answer.isEmpty(), r.body());
    messages.add(JSON.createObjectNode().put("role", "assistant").put("content", answer));
    LAST_ANSWER_ID.put(session, r.json().path("id").asText());
    return true;
  }

  private static final Map<String, String> LAST_ANSWER_ID = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Feedback naming the session's last answer by its response id, as an agent rates what it was just
   * given, sent again after a 503 (documented: retry); the final status.
   */
  private static int rateLastAnswer(Http node, String session) {
    String body = "{\"kind\":\"THUMBS_UP\",\"msgId\":\"" + LAST_ANSWER_ID.get(session) + "\"}";
    for (int i = 0; i < 240; i++) {
      Http.Response r = node.post("/v1/sessions/" + session + "/feedback", body);
      if (r.status() != 503) return r.status();
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return -1;
      }
    }
    return 503;
  }

  /** Messages the session has stored, as a survivor reads them; -1 while it cannot answer. */
  private static int stored(Http node, String session) {
    Http.Response r = node.get("/v1/sessions/" + session);
    return r.status() == 200 ? r.json().path("messages").size() : -1;
  }

  private static double recordFailures(Http node) {
    double sum = 0;
    for (String line : node.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_gateway_record_failures_total{")) sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }
    return sum;
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
