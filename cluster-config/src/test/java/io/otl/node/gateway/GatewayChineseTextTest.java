package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.Http;
import io.otl.node.testing.PythonVenv;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Chinese text and emoji where the node cuts a text for show (trial t102): the simulator's answer
 * repeats the user's last message cut at 200 characters, and the audit timeline shows a message cut
 * at 100. Both cut between the two halves of an emoji: the openai client got "\ud83d" (streamed: '?'),
 * the gateway recorded that, and the timeline printed '?'.
 */
class GatewayChineseTextTest {
  private static final String EMOJI = "\uD83D\uDE00"; // 😀, two UTF-16 units

  @Test
  void anEmojiAtTheCutIsLeftWholeOrOutNeverHalved() throws Exception {
    PythonVenv.python();
    try (GatewayTestNode gateway = GatewayTestNode.start("chinese-text", Map.of()).serving("zh-agent")) {
      Http api = gateway.api;
      String prefix = "zh-" + UUID.randomUUID();
      // 199 characters, then the emoji across the 200th and 201st: the simulator's cut.
      String text = "中".repeat(199) + EMOJI + "后面的话";
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/openai_unicode_check.py");
      PythonVenv.Result r = PythonVenv.run(script, List.of(gateway.uri("").toString(), "zh-agent", prefix, text),
          gateway.dir, 120);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = new ObjectMapper().readTree(r.lastLine());
      for (String kind : List.of("plain", "stream")) {
        String answer = report.path(kind).asText();
        assertTrue(answer.endsWith("中".repeat(199) + "…"), kind + ": " + answer);
        JsonNode stored = api.get("/v1/sessions/" + prefix + "-" + kind).json().path("messages");
        assertEquals(text, stored.get(0).path("content").asText(), stored.toString());
        assertEquals(answer, stored.get(1).path("content").asText(), stored.toString());
      }

      // The timeline cuts a message at 100 characters: 99, then the emoji.
      String events = "{\"agentId\":\"zh-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\""
          + "好".repeat(99) + EMOJI + "后面\"}]}";
      assertEquals(202, api.post("/v1/sessions/" + prefix + "-tl/events", events).status());
      String timeline = api.get("/v1/audit/session/" + prefix + "-tl/timeline").body();
      assertTrue(timeline.contains("user: " + "好".repeat(99) + "…"), timeline);
      assertTrue(!timeline.contains("?"), timeline);

      // Full-width digits, as a Chinese IME types them: the number is taken, the punctuation stays as sent
      // (NFKC folded the whole message: 电话:[PHONE],谢谢!).
      String ime = "{\"agentId\":\"zh-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":"
          + "\"电话：１３８１２３４５６７８，谢谢！\"}]}";
      assertEquals(202, api.post("/v1/sessions/" + prefix + "-ime/events", ime).status());
      JsonNode stored = api.get("/v1/sessions/" + prefix + "-ime").json().path("messages");
      assertEquals("电话：[PHONE]，谢谢！", stored.get(0).path("content").asText(), stored.toString());
    }
  }
}
