package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Online RL through the gateway with the trinity-proxy backend: the agent only talks OpenAI to
 * the node, rates one answer by its msgId, and Trinity's proxy receives that answer's reward with
 * exactly its msg_id, and the session's reward for the others.
 */
class GatewayPerTurnRewardTest {
  private static final String AGENT = "rl-agent";

  @Test
  void aRatedAnswerIsRewardedAloneAndTheOthersGetTheSessionReward() throws Exception {
    try (GatewayTestNode gateway = GatewayTestNode.start("gateway-rewards", simulator -> Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000))
        .serving(AGENT)) {
      Http api = gateway.api;
      Http proxy = new Http(gateway.simulator.port());
      String session = "turns-" + UUID.randomUUID();
      JsonNode answer = chat(gateway, session, "[{\"role\":\"user\",\"content\":\"q1\"}]");
      String first = answer.path("id").asText();
      String second = chat(gateway, session, "[{\"role\":\"user\",\"content\":\"q1\"},"
          + answer.path("choices").get(0).path("message") + ",{\"role\":\"user\",\"content\":\"q2\"}]")
          .path("id").asText();
      Await.until("both answers recorded", () -> api.get("/v1/sessions/" + session).json(),
          s -> s.path("messages").size() == 4);

      Http.Response rated = api.post("/v1/sessions/" + session + "/feedback",
          "{\"kind\":\"THUMBS_DOWN\",\"msgId\":\"" + first + "\"}");
      assertEquals(202, rated.status(), rated.body());
      Http.Response done = api.post("/v1/sessions/" + session + "/events",
          "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}");
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
    }
  }

  /** ["id"] JSON arrays as [id] strings, to compare with List.toString(). */
  private static Map<String, Double> normalise(Map<String, Double> byJsonArray) {
    Map<String, Double> out = new HashMap<>();
    byJsonArray.forEach((k, v) -> out.put(k.replace("\"", ""), v));
    return out;
  }

  private static JsonNode chat(GatewayTestNode gateway, String session, String messages) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", AGENT).header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":" + messages + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body());
  }
}
