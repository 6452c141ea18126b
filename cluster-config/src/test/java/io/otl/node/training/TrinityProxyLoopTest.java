package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
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
    TrinitySimulator[] simulator = {TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(Files.createTempDirectory("otl-proxy-")).withCommitBatchSize(3))};
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator[0].baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 3,
            "agentscope.training.training-runner.poll-interval", "300ms"))
        .withFallback(TestDatabases.node(TestDatabases.postgres(), true)))) {
      Http http = new Http(node.httpPort());
      Http proxy = new Http(simulator[0].port());
      Set<String> msgIds = new HashSet<>();
      for (int i = 0; i < 3; i++) msgIds.add(answeredAndRewarded(proxy, http, i));
      JsonNode received = Await.until("three rewards at the proxy", () -> proxy.get("/simulator/feedback").json(),
          f -> f.get("feedback").size() >= 3);
      Set<String> forwarded = new HashSet<>();
      for (JsonNode fb : received.get("feedback")) {
        assertTrue(fb.get("run_id").isInt(), "run_id is an integer: " + fb);
        assertEquals(1.0, fb.get("reward").asDouble(), 1e-9, fb.toString());
        assertTrue(fb.get("task_id").asText().startsWith("proxy-s"), fb.toString());
        fb.get("msg_ids").forEach(id -> forwarded.add(id.asText()));
      }
      assertEquals(msgIds, forwarded);
      JsonNode models = Await.until("the proxy's new model version as a candidate (proxy metrics "
          + proxy.get("/metrics").body() + ", feedback " + proxy.get("/simulator/feedback").body() + ")",
          () -> { Http.Response r = http.get("/v1/models/rl-agent"); return r.status() == 200 ? r.json() : null; },
          m -> m.get("versions").size() == 1);
      assertEquals("proxy-1", models.get("versions").get(0).get("version").asText());
      // The candidate's endpoint is what the route answers an agent that calls the model itself: an
      // OpenAI base URL, to which its client appends /chat/completions (trial t169: the proxy's root
      // was registered, and that call was the proxy's 404).
      String endpoint = http.get("/v1/models/rl-agent/route?sessionId=proxy-s9").json().get("endpoint").asText();
      assertEquals(simulator[0].baseUrl() + "/v1", endpoint);
      java.net.http.HttpResponse<String> answer = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(endpoint + "/chat/completions"))
              .header("Content-Type", "application/json")
              .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                  "{\"model\":\"agent\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
              .build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      assertEquals(200, answer.statusCode(), endpoint + ": " + answer.body());
      assertTrue(proxy.get("/simulator/feedback").json().get("commits").asInt() >= 1);
      JsonNode all = proxy.get("/simulator/feedback").json();
      assertEquals(3, all.get("feedback").size(), "each reward forwarded once: " + all);

      // The proxy restarts on the same address: its model_version counts from 0 again, and its
      // next weights report version 1 once more. They were ignored while proxy-1 existed.
      int port = simulator[0].port();
      simulator[0].stop();
      simulator[0] = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(port)
          .withWorkDir(Files.createTempDirectory("otl-proxy-restarted-")).withCommitBatchSize(3));
      // Sessions only once the coordinator saw the count go back (the version-1 weights come after them).
      Await.until("the restart seen", () -> {
        Http.Response r = http.get("/v1/audit/coordinator/rl-agent/timeline");
        return r.status() == 200 ? TextNode.valueOf(r.body()) : null;
      }, t -> t.asText().contains("Trinity proxy restarted (model version back to 0"));
      for (int i = 3; i < 6; i++) answeredAndRewarded(proxy, http, i);
      JsonNode after = Await.until("the restarted proxy's version 1 as a new candidate (proxy metrics "
          + proxy.get("/metrics").body() + ")",
          () -> http.get("/v1/models/rl-agent").json(), m -> m.get("versions").size() == 2);
      Set<String> names = new HashSet<>();
      after.get("versions").forEach(v -> names.add(v.get("version").asText()));
      assertEquals(Set.of("proxy-1", "proxy-r1-1"), names, after.toString());
    } finally {
      simulator[0].stop();
      kit.shutdownTestKit();
    }
  }

  /**
   * Session {@code proxy-s<i>}: the proxy answers question i, and the session records the answer
   * under the proxy's completion id, a thumbs up and a success. Returns that completion id.
   */
  private static String answeredAndRewarded(Http proxy, Http node, int i) {
    String msgId = proxy.post("/v1/chat/completions",
        "{\"model\":\"agent\",\"messages\":[{\"role\":\"user\",\"content\":\"question " + i + "\"}]}")
        .json().get("id").asText();
    Http.Response r = node.post("/v1/sessions/proxy-s" + i + "/events", """
        {"agentId":"rl-agent","events":[{"type":"message","role":"user","content":"question %d"},
         {"type":"message","role":"assistant","content":"answer","msgId":"%s","latencyMs":300},
         {"type":"feedback","kind":"THUMBS_UP"},{"type":"result","status":"SUCCESS"}]}"""
        .formatted(i, msgId));
    assertEquals(202, r.status(), r.body());
    return msgId;
  }
}
