package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * An agent that calls Trinity's proxy itself records its answers through the events API (design
 * §5.2); an answer sent with {@code "msgId": ""} (a client that fills the field whether or not it
 * has an id) names no proxy response. Its session's reward went to the proxy as {@code "msg_ids":
 * ["", "<real id>"]} (trial t77): only the real ids are forwarded, and a session whose only msgId is
 * blank forwards nothing, as one without msgIds.
 */
class TrinityProxyBlankMsgIdTest {

  @Test
  void aBlankMsgIdIsNeverForwardedToTheProxy() throws Exception {
    ActorTestKit kit = ActorTestKit.create("proxy-blank-msgid");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(Files.createTempDirectory("otl-proxy-blank-")));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.backend", "trinity-proxy",
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000))
        .withFallback(TestDatabases.node(TestDatabases.postgres(), true)))) {
      Http http = new Http(node.httpPort());
      Http proxy = new Http(simulator.port());
      completed(http, "blank-only", "\"\"", null);
      String real = proxy.post("/v1/chat/completions",
          "{\"model\":\"agent\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}").json().get("id").asText();
      completed(http, "blank-and-real", "\"\"", real);

      JsonNode received = Await.until("the reward of blank-and-real at the proxy",
          () -> proxy.get("/simulator/feedback").json(),
          f -> f.get("feedback").findValues("task_id").stream().anyMatch(t -> t.asText().equals("blank-and-real")));
      Await.until("blank-only pooled", () -> TextNode.valueOf(
          http.get("/v1/audit/coordinator/rl-agent/timeline").body()), t -> t.asText().contains("pooled blank-only"));
      for (JsonNode fb : received.get("feedback")) {
        assertEquals("blank-and-real", fb.get("task_id").asText(), "blank-only has no response to reward: " + received);
        assertEquals("[\"" + real + "\"]", fb.get("msg_ids").toString(), received.toString());
      }
      assertTrue(!http.get("/v1/audit/coordinator/rl-agent/timeline").body()
          .contains("reward of blank-only forwarded"), "nothing to forward for blank-only");
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  /** A completed session: the answer with a blank msgId, then (if given) one with {@code real}. */
  private static void completed(Http http, String session, String blank, String real) {
    String second = real == null ? "" : """
        {"type":"message","role":"user","content":"q"},
        {"type":"message","role":"assistant","content":"a2","msgId":"%s"},""".formatted(real);
    Http.Response r = http.post("/v1/sessions/" + session + "/events", """
        {"agentId":"rl-agent","events":[{"type":"message","role":"user","content":"question"},
         {"type":"message","role":"assistant","content":"a1","msgId":%s},%s
         {"type":"feedback","kind":"THUMBS_UP"},{"type":"result","status":"SUCCESS"}]}""".formatted(blank, second));
    assertEquals(202, r.status(), r.body());
  }
}
