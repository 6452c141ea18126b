package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Online RL through Trinity's serve mode (design §5, backend trinity-proxy), end to end: the
 * agent's completions come from the proxy (their ids recorded as msgId), each completed
 * trajectory's reward is forwarded once with those ids, a trigger releases the batch with
 * /commit, and the proxy's new model_version becomes a candidate version.
 */
class TrinityProxyLoopTest {

  @Test
  void rewardsAreForwardedCommitReleasesTheBatchAndANewModelVersionBecomesACandidate() throws Exception {
    ActorTestKit kit = ActorTestKit.create("proxy-simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(Files.createTempDirectory("otl-proxy-")).withCommitBatchSize(3));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 3,
            "agentscope.training.training-runner.poll-interval", "300ms"))
        .withFallback(TestDatabases.node(TestDatabases.postgres(), true)))) {
      Http http = new Http(node.httpPort());
      Http proxy = new Http(simulator.port());
      Set<String> msgIds = new HashSet<>();
      for (int i = 0; i < 3; i++) {
        JsonNode completion = proxy.post("/v1/chat/completions",
            "{\"model\":\"agent\",\"messages\":[{\"role\":\"user\",\"content\":\"question " + i + "\"}]}").json();
        String msgId = completion.get("id").asText();
        msgIds.add(msgId);
        Http.Response r = http.post("/v1/sessions/proxy-s" + i + "/events", """
            {"agentId":"rl-agent","events":[{"type":"message","role":"user","content":"question %d"},
             {"type":"message","role":"assistant","content":"answer","msgId":"%s","latencyMs":300},
             {"type":"feedback","kind":"THUMBS_UP"},{"type":"result","status":"SUCCESS"}]}"""
            .formatted(i, msgId));
        assertEquals(202, r.status(), r.body());
      }
      JsonNode received = await("three rewards at the proxy", () -> proxy.get("/simulator/feedback").json(),
          f -> f.get("feedback").size() >= 3);
      Set<String> forwarded = new HashSet<>();
      for (JsonNode fb : received.get("feedback")) {
        assertTrue(fb.get("run_id").isInt(), "run_id is an integer: " + fb);
        assertEquals(1.0, fb.get("reward").asDouble(), 1e-9, fb.toString());
        assertTrue(fb.get("task_id").asText().startsWith("proxy-s"), fb.toString());
        fb.get("msg_ids").forEach(id -> forwarded.add(id.asText()));
      }
      assertEquals(msgIds, forwarded);
      JsonNode models = await("the proxy's new model version as a candidate (proxy metrics "
          + proxy.get("/metrics").body() + ", feedback " + proxy.get("/simulator/feedback").body() + ")",
          () -> { Http.Response r = http.get("/v1/models/rl-agent"); return r.status() == 200 ? r.json() : null; },
          m -> m.get("versions").size() == 1);
      assertEquals("proxy-1", models.get("versions").get(0).get("version").asText());
      assertTrue(proxy.get("/simulator/feedback").json().get("commits").asInt() >= 1);
      JsonNode all = proxy.get("/simulator/feedback").json();
      assertEquals(3, all.get("feedback").size(), "each reward forwarded once: " + all);
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }
}
