package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway conversation open across an upgrade from a build before commit c3fddf53, whose message ids
 * hashed the text with the white space around it (trial t67: the build of commit 761b7a46 on
 * PostgreSQL). The agent's next call resends the history; a system prompt read from a file ("…\n"), a
 * user's "Hello there\n" and a model's "\n\nHi!" hash to other ids today, and the whole history was
 * stored a second time. The session here holds the messages under the ids that build gave them (those
 * of the system prompt and the user's message are the ones it wrote; the answer's is
 * {@code printf 'assistant\0\n\nHi! How can I help?\n\0' | sha256sum}, first 24 hex digits).
 */
class GatewayUpgradeWhiteSpaceTest {
  private static final String AGENT = "ws-agent";
  private static final String SYSTEM = "You are a helpful assistant.\n";
  private static final String QUESTION = "Hello there\n";
  private static final String ANSWER = "\n\nHi! How can I help?\n";
  private static final ObjectMapper JSON = new ObjectMapper();
  private GatewayTestNode gateway;

  @AfterEach
  void stop() {
    if (gateway != null) gateway.close();
  }

  private static JsonNode message(String eventId, String role, String content) {
    return JSON.createObjectNode().put("type", "message").put("eventId", eventId).put("role", role)
        .put("content", content);
  }

  @Test
  void theHistoryRecordedByAnEarlierBuildIsNotStoredAgain() throws Exception {
    gateway = GatewayTestNode.start("gateway-upgrade-ws", Map.of()).serving(AGENT);
    String session = "ws-upgrade-1";
    ArrayNode earlier = JSON.createArrayNode();
    earlier.add(JSON.createObjectNode().put("type", "start").put("eventId", "gw:start")
        .set("metadata", JSON.createObjectNode().put("source", "gateway")));
    earlier.add(message("gw:m:9a812f2fe0e1772ffe554518", "system", SYSTEM));
    earlier.add(message("gw:m:19379afbf16327ddcede95ee", "user", QUESTION));
    earlier.add(message("gw:m:69054e76a1e6ab816a691efd", "assistant", ANSWER));
    String body = JSON.createObjectNode().put("agentId", AGENT).set("events", earlier).toString();
    Http.Response w = gateway.api.post("/v1/sessions/" + session + "/events", body);
    assertEquals(202, w.status(), w.body());

    ArrayNode history = JSON.createArrayNode();
    history.add(JSON.createObjectNode().put("role", "system").put("content", SYSTEM));
    history.add(JSON.createObjectNode().put("role", "user").put("content", QUESTION));
    history.add(JSON.createObjectNode().put("role", "assistant").put("content", ANSWER));
    history.add(JSON.createObjectNode().put("role", "user").put("content", "And then?\n"));
    String call = JSON.createObjectNode().put("model", "default").set("messages", history).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", call.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());

    Await.until(session + " has its new answer", Duration.ofSeconds(20),
        () -> gateway.api.get("/v1/sessions/" + session).json().path("messages").size(), n -> n >= 5);
    Thread.sleep(300);
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json().path("messages");
    assertEquals(5, stored.size(), "system, question, answer, the next question and its answer, once each: " + stored);
    assertEquals(SYSTEM, stored.path(0).path("content").asText());
    assertEquals("And then?\n", stored.path(3).path("content").asText());
    assertEquals("assistant", stored.path(4).path("role").asText());
  }
}
