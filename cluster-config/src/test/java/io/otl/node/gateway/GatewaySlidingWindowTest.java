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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/gateway.md "What the session records": an agent that slides its context window keeps every
 * turn, also when a message recurs. Before, a recurring message ("continue", and the simulator's
 * identical echo of it) was numbered by its occurrences within the request alone: once the window
 * dropped the first occurrences, each new "continue" and its answer got ids the session already had,
 * were dropped as duplicates, and an 8-turn conversation kept 3 turns (found by the new-user trial
 * with the OpenAI Python client), also when each turn is sent the moment the answer arrives,
 * before the previous turn is recorded.
 */
class GatewaySlidingWindowTest {
  private static final String AGENT = "window-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-window", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** One turn: the system prompt and the last {@code window} messages of the conversation; the answer's text. */
  private static String turn(String session, List<ObjectNode> conversation, int window) throws Exception {
    ArrayNode messages = JSON.createArrayNode().add(message("system", "You are terse."));
    conversation.subList(Math.max(0, conversation.size() - window), conversation.size()).forEach(messages::add);
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    return r.json().path("choices").path(0).path("message").path("content").asText();
  }

  private static int storedMessages(String session) {
    Http.Response r = gateway.api.get("/v1/sessions/" + session);
    return r.status() == 200 ? r.json().path("messages").size() : 0;
  }

  @Test
  void aSlidingWindowOfRecurringMessagesKeepsEveryTurn() throws Exception {
    String session = "window-1";
    List<ObjectNode> conversation = new ArrayList<>();
    int turns = 8;
    for (int i = 0; i < turns; i++) {
      conversation.add(message("user", "continue"));
      // The next turn the moment the answer is there, as an agent loop sends it: not yet recorded.
      conversation.add(message("assistant", turn(session, conversation, 5)));
    }
    int expected = 1 + conversation.size(); // the system prompt, stored once, and every turn
    Await.until("every turn of " + session + " stored", Duration.ofSeconds(10),
        () -> storedMessages(session), n -> n >= expected);
    Thread.sleep(300);
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json().path("messages");
    assertEquals(1 + 2 * turns, stored.size(), stored.toString());
    for (int i = 0; i < turns; i++) {
      assertEquals("user", stored.path(1 + 2 * i).path("role").asText(), stored.toString());
      assertEquals("assistant", stored.path(2 + 2 * i).path("role").asText(), stored.toString());
    }
  }
}
