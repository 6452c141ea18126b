package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.Sha256;
import io.otl.core.session.GatewayMessageIds;
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
 * docs/gateway.md "What the session records": a session's calls spread over the nodes of a cluster
 * (a load balancer that is not sticky). A node that recorded an earlier turn remembers the session's ids
 * as they were then; another node recorded the turns after it. Trial t93 (3 nodes, an agent sliding a
 * window of "continue"s, its calls round-robin): a turn numbered from that stale memory gave the recurring
 * question and the answer ids the session already had, and was dropped as a duplicate (9 of 13 messages
 * kept). Here the other node's turn is written as it writes it: through the session's events, under the
 * gateway's ids.
 */
class GatewayTurnsOnSeveralNodesTest {
  private static final String AGENT = "spread-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private GatewayTestNode gateway;

  @AfterEach
  void stop() {
    if (gateway != null) gateway.close();
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** A turn through this node's gateway: the system prompt and the conversation's last three messages. */
  private String turn(String session, List<ObjectNode> conversation) {
    conversation.add(message("user", "continue"));
    ArrayNode messages = JSON.createArrayNode().add(message("system", "You are terse."));
    conversation.subList(Math.max(0, conversation.size() - 3), conversation.size()).forEach(messages::add);
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    String answer = r.json().path("choices").path(0).path("message").path("content").asText();
    conversation.add(message("assistant", answer));
    return answer;
  }

  /** The gateway's id of a message's {@code n}th occurrence (role, text, no tool calls). */
  private static String gatewayId(String role, String text, int n) {
    return GatewayMessageIds.numbered(Sha256.hex(role + '\u0000' + text + '\u0000', 12), n);
  }

  @Test
  void aTurnAfterAnotherNodesTurnIsStored() throws Exception {
    gateway = GatewayTestNode.start("gateway-several-nodes", Map.of()).serving(AGENT);
    String session = "spread-1";
    List<ObjectNode> conversation = new ArrayList<>();
    String answer = turn(session, conversation);
    awaitMessages(session, 3);

    // Turn 2 answered by another node: it records the question and the same answer as their second
    // occurrences (the model answers "continue" alike each time).
    conversation.add(message("user", "continue"));
    conversation.add(message("assistant", answer));
    String events = JSON.createObjectNode().put("agentId", AGENT).set("events", JSON.createArrayNode()
        .add(message("user", "continue").put("type", "message").put("eventId", gatewayId("user", "continue", 1)))
        .add(message("assistant", answer).put("type", "message").put("eventId", gatewayId("assistant", answer, 1))))
        .toString();
    Http.Response r = gateway.api.post("/v1/sessions/" + session + "/events", events);
    assertEquals(202, r.status(), r.body());
    assertEquals(2, r.json().path("accepted").asInt(), r.body());

    turn(session, conversation); // back on this node, which recorded only turn 1
    JsonNode stored = awaitMessages(session, 7);
    assertEquals(7, stored.size(), "the system prompt and three questions and answers: " + stored);
  }

  private JsonNode awaitMessages(String session, int expected) throws InterruptedException {
    try {
      Await.until("messages of " + session, Duration.ofSeconds(10),
          () -> gateway.api.get("/v1/sessions/" + session).json().path("messages").size(), n -> n >= expected);
    } catch (AssertionError e) {
      // fall through: the assertion below names what was stored
    }
    Thread.sleep(300);
    return gateway.api.get("/v1/sessions/" + session).json().path("messages");
  }
}
