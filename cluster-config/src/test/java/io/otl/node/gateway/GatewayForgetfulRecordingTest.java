package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/gateway.md "What the session records": recurring messages in a sliding window keep every turn
 * also when the gateway does not remember the session's stored ids: after the node restarted (or on
 * another node of the cluster), and past the memory's bound of 1,024 ids per session. Numbered
 * within the request alone, each later "continue" and its answer got ids the session had and were
 * dropped as duplicates, for the rest of the session (trial t15: 144 turns answered, 73 kept).
 */
class GatewayForgetfulRecordingTest {
  private static final String AGENT = "forgetful-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private GatewayTestNode gateway;

  @AfterEach
  void stop() {
    if (gateway != null) gateway.close();
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** One turn with the system prompt and the conversation's last five messages; appends the answer. */
  private void turn(String session, List<ObjectNode> conversation) {
    conversation.add(message("user", "continue"));
    ArrayNode messages = JSON.createArrayNode().add(message("system", "You are terse."));
    conversation.subList(Math.max(0, conversation.size() - 5), conversation.size()).forEach(messages::add);
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    conversation.add(message("assistant", r.json().path("choices").path(0).path("message").path("content").asText()));
  }

  private void assertEveryTurnStored(String session, int turns) throws InterruptedException {
    int expected = 1 + 2 * turns; // the system prompt once, and every question and answer
    Await.until("every turn of " + session + " stored", Duration.ofSeconds(20),
        () -> gateway.api.get("/v1/sessions/" + session).json().path("messages").size(), n -> n >= expected);
    Thread.sleep(300);
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json().path("messages");
    assertEquals(expected, stored.size(), "messages stored");
    for (int i = 0; i < turns; i++) {
      assertEquals("user", stored.path(1 + 2 * i).path("role").asText(), "message " + (1 + 2 * i));
      assertEquals("assistant", stored.path(2 + 2 * i).path("role").asText(), "message " + (2 + 2 * i));
    }
  }

  @Test
  void aSessionGoesOnWholeAfterTheNodeRestarted() throws Exception {
    gateway = GatewayTestNode.start("gateway-forgetful-restart", Map.of()).serving(AGENT);
    String session = "forgetful-restart";
    List<ObjectNode> conversation = new ArrayList<>();
    for (int i = 0; i < 6; i++) turn(session, conversation);
    assertEveryTurnStored(session, 6);
    gateway = gateway.restarted();
    for (int i = 0; i < 6; i++) turn(session, conversation);
    assertEveryTurnStored(session, 12);
  }

  @Test
  void aSessionLongerThanTheGatewaysMemoryKeepsEveryTurn() throws Exception {
    gateway = GatewayTestNode.start("gateway-forgetful-long", Map.of()).serving(AGENT);
    String session = "forgetful-long";
    List<ObjectNode> conversation = new ArrayList<>();
    int turns = 530; // two ids a turn and the start: past 1,024 ids after 512 turns
    for (int i = 0; i < turns; i++) turn(session, conversation);
    assertEveryTurnStored(session, turns);
  }
}
