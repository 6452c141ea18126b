package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Online RL through the gateway with the trinity-proxy backend: the agent only talks OpenAI to
 * the node, rates one answer by its msgId, and Trinity's proxy receives that answer's reward with
 * exactly its msg_id, and the session's reward for the others.
 */
class GatewayPerTurnRewardTest {

  @Test
  void aRatedAnswerIsRewardedAloneAndTheOthersGetTheSessionReward() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "gateway-rewards-" + UUID.randomUUID()));
    ActorTestKit kit = ActorTestKit.create("per-turn-simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)))) {
      Http api = new Http(node.httpPort());
      Http proxy = new Http(simulator.port());
      assertEquals(201, api.post("/v1/models/rl-agent/versions", "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\","
          + "\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}").status());
      String session = "turns-" + UUID.randomUUID();
      JsonNode answer = chat(node, session, "[{\"role\":\"user\",\"content\":\"q1\"}]");
      String first = answer.path("id").asText();
      String second = chat(node, session, "[{\"role\":\"user\",\"content\":\"q1\"},"
          + answer.path("choices").get(0).path("message") + ",{\"role\":\"user\",\"content\":\"q2\"}]")
          .path("id").asText();
      Await.until("both answers recorded", () -> api.get("/v1/sessions/" + session).json(),
          s -> s.path("messages").size() == 4);

      Http.Response rated = api.post("/v1/sessions/" + session + "/feedback",
          "{\"kind\":\"THUMBS_DOWN\",\"msgId\":\"" + first + "\"}");
      assertEquals(202, rated.status(), rated.body());
      Http.Response done = api.post("/v1/sessions/" + session + "/events",
          "{\"agentId\":\"rl-agent\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}");
      assertEquals(202, done.status(), done.body());

      JsonNode received = Await.until("two rewards at the proxy", () -> proxy.get("/simulator/feedback").json(),
          f -> f.get("feedback").size() >= 2);
      Map<String, Double> rewardByMsgIds = new HashMap<>();
      for (JsonNode fb : received.get("feedback")) {
        assertEquals(session, fb.get("task_id").asText());
        rewardByMsgIds.put(fb.get("msg_ids").toString(), fb.get("reward").asDouble());
      }
      // The rated answer: its thumbs down alone. The other: the session (success +1, thumbs down -1).
      assertEquals(Map.of(List.of(first).toString().replace(" ", ""), -1.0,
              List.of(second).toString().replace(" ", ""), 0.0),
          normalise(rewardByMsgIds), received.toString());
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  /** ["id"] JSON arrays as [id] strings, to compare with List.toString(). */
  private static Map<String, Double> normalise(Map<String, Double> byJsonArray) {
    Map<String, Double> out = new HashMap<>();
    byJsonArray.forEach((k, v) -> out.put(k.replace("\"", ""), v));
    return out;
  }

  private static JsonNode chat(TrainingNode node, String session, String messages) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/chat/completions"))
        .header("X-Agent-Id", "rl-agent").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":" + messages + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body());
  }
}
