package io.otl.node.trinity;

import static io.otl.node.trinity.TestHttp.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingBackendException;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Trinity proxy client against the simulator. One simulator for the class, so each test reads
 * counters as deltas or from its own msg ids.
 */
class TrinityProxyBackendTest {

  private static ActorTestKit testKit;
  private static TrinitySimulator simulator;
  private static TrinityProxyBackend backend;

  @BeforeAll
  static void start() throws IOException {
    testKit = ActorTestKit.create("TrinityProxyBackendTest");
    simulator =
        TrinitySimulator.start(
            testKit.system(),
            SimulatorSettings.defaults().withPort(0).withWorkDir(Files.createTempDirectory("proxy-test")));
    backend = new TrinityProxyBackend(testKit.system(), TrinityEndpoint.of(simulator.baseUrl()));
  }

  @AfterAll
  static void stop() {
    simulator.stop();
    join(Http.get(testKit.system()).shutdownAllConnectionPools().thenApply(done -> true));
    testKit.shutdownTestKit();
  }

  @Test
  void rewardForChatCompletionReachesProxyWithIntegerRunId() {
    String msgId = chat("How do I reset my password?");

    join(backend.forwardReward(List.of(msgId), 0.75, "session-42", 0));

    JsonNode received = null;
    for (JsonNode f : TestHttp.json(TestHttp.get(simulator.baseUrl() + "/simulator/feedback")).path("feedback")) {
      if (f.path("msg_ids").path(0).asText().equals(msgId)) {
        received = f;
      }
    }
    assertTrue(received != null, "feedback for " + msgId + " received");
    assertTrue(received.path("run_id").isInt(), "run_id is an integer: " + received);
    assertEquals(0, received.path("run_id").asInt());
    assertEquals("session-42", received.path("task_id").asText());
    assertEquals(0.75, received.path("reward").asDouble());
  }

  /**
   * A task id (a session id) stored by an earlier build that today's id rules refuse: the per-turn
   * figures cannot be read for it, and its whole reward is forwarded as before, instead of the
   * forwarding failing on the read (the embedded read began refusing such ids).
   */
  @Test
  void aTaskIdTheIdRulesNowRefuseGetsItsWholeReward() throws Exception {
    java.nio.file.Path dir = Files.createTempDirectory("per-turn-rewards");
    try (io.otl.node.TrainingNode node = io.otl.node.TrainingNode.start(io.otl.node.testing.TestDatabases.node(
        io.otl.node.testing.TestDatabases.h2(dir), false))) {
      PerTurnRewards rewards = new PerTurnRewards(backend, node.dataCollector(),
          io.otl.core.session.SessionSettings.RewardWeights.defaults());
      String msgId = chat("Where is my parcel?");
      join(rewards.forwardReward(List.of(msgId), 0.25, "old id!", 0));
      JsonNode received = null;
      for (JsonNode f : TestHttp.json(TestHttp.get(simulator.baseUrl() + "/simulator/feedback")).path("feedback")) {
        if (f.path("msg_ids").path(0).asText().equals(msgId)) received = f;
      }
      assertTrue(received != null, "feedback for " + msgId + " received");
      assertEquals(0.25, received.path("reward").asDouble());
      assertEquals("old id!", received.path("task_id").asText());
    }
  }

  @Test
  void commitWithRewardedExperienceBumpsModelVersion() {
    ProxyMetrics before = join(backend.metrics());
    String msgId = chat("Book a table for two");
    join(backend.forwardReward(List.of(msgId), 1.0, "session-7", 0));

    ProxyMetrics ready = join(backend.metrics());
    join(backend.commit());
    ProxyMetrics after = join(backend.metrics());

    assertEquals(before.totalExperienceCount() + 1, ready.totalExperienceCount());
    assertEquals(before.readyExperienceCount() + 1, ready.readyExperienceCount());
    assertEquals(before.latestModelVersion() + 1, after.modelVersions().get(0));
    assertEquals(before.exploreStepNum() + 1, after.exploreStepNum());
  }

  @Test
  void commitWithoutNewRewardsKeepsModelVersion() {
    join(backend.commit()); // drains whatever other tests left ready
    int version = join(backend.metrics()).latestModelVersion();

    join(backend.commit());

    assertEquals(version, join(backend.metrics()).latestModelVersion());
  }

  @Test
  void healthReflectsReachability() {
    assertTrue(join(backend.health()));
    TrinityProxyBackend dead =
        new TrinityProxyBackend(testKit.system(), TrinityEndpoint.of("http://127.0.0.1:" + TestHttp.freePort()));
    assertFalse(join(dead.health()));
  }

  @Test
  void malformedFeedbackIsRefusedByTheProxy() {
    var raw = TestHttp.post(simulator.baseUrl() + "/feedback", "{\"task_id\":\"s\",\"run_id\":0}");
    assertEquals(400, raw.statusCode());
    assertEquals("msg_ids and reward are required", TestHttp.json(raw).path("error").asText());

    assertThrows(IllegalArgumentException.class, () -> backend.forwardReward(List.of(), 1.0, "s", 0));
    assertThrows(IllegalArgumentException.class, () -> backend.forwardReward(List.of("x"), Double.NaN, "s", 0));
  }

  @Test
  void unreachableProxyFailsWithConnectionRefused() {
    TrinityProxyBackend dead =
        new TrinityProxyBackend(testKit.system(), TrinityEndpoint.of("http://127.0.0.1:" + TestHttp.freePort()));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> dead.commit().toCompletableFuture().get(20, TimeUnit.SECONDS));
    TrainingBackendException cause = assertInstanceOf(TrainingBackendException.class, e.getCause());
    assertTrue(cause.getMessage().contains("POST /commit"), cause.getMessage());
    assertTrue(cause.getMessage().contains("connection refused"), cause.getMessage());
  }

  private static String chat(String question) {
    var response =
        TestHttp.post(
            simulator.baseUrl() + "/v1/chat/completions",
            "{\"model\":\"agent-model\",\"messages\":[{\"role\":\"user\",\"content\":\"" + question + "\"}]}");
    assertEquals(200, response.statusCode(), response.body());
    assertEquals("true", response.headers().firstValue("X-Trinity-Simulator").orElse(""));
    String id = TestHttp.json(response).path("id").asText();
    assertTrue(id.startsWith("chatcmpl-"), id);
    return id;
  }
}
