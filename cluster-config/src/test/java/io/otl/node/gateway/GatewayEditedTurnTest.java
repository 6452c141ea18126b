package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * docs/gateway.md "What the session records": an agent that edits a past turn before it resends it (here
 * adding the tool call it made) and gets the same answer text again keeps that answer. It had the id of the
 * stored answer (same text, and the edited turn no longer resends it), and the session dropped it as a
 * duplicate, silently: no unrecorded count, and feedback naming its msgId found nothing (trial t73).
 */
class GatewayEditedTurnTest {
  private static final String AGENT = "edit-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-edit", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static JsonNode call(String session, ArrayNode messages) throws Exception {
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    return r.json();
  }

  private static List<String> storedMsgIds(String session) {
    List<String> ids = new ArrayList<>();
    Http.Response r = gateway.api.get("/v1/sessions/" + session);
    if (r.status() == 200) r.json().path("messages").forEach(m -> ids.add(m.path("msgId").asText(null)));
    return ids;
  }

  @Test
  void anEditedTurnAnsweredWithTheSameTextKeepsTheNewAnswer() throws Exception {
    String session = "edit-1";
    ArrayNode messages = JSON.createArrayNode();
    messages.add(JSON.createObjectNode().put("role", "user").put("content", "weather?"));
    JsonNode first = call(session, messages);
    String firstText = first.path("choices").path(0).path("message").path("content").asText();
    ObjectNode edited = JSON.createObjectNode().put("role", "assistant").put("content", firstText);
    edited.putArray("tool_calls").addObject().put("id", "k1").put("type", "function").putObject("function")
        .put("name", "weather").put("arguments", "{}");
    messages.add(edited);
    messages.add(JSON.createObjectNode().put("role", "tool").put("tool_call_id", "k1").put("content", "sunny"));
    JsonNode second = call(session, messages);
    assertEquals(firstText, second.path("choices").path(0).path("message").path("content").asText(),
        "the simulator answers the same text: the case under test");
    String firstId = first.path("id").asText();
    String secondId = second.path("id").asText();
    List<String> msgIds = Await.until("both answers stored", Duration.ofSeconds(10), () -> storedMsgIds(session),
        ids -> ids.contains(secondId));
    assertTrue(msgIds.contains(firstId), msgIds.toString());
    Http.Response rated = gateway.api.post("/v1/sessions/" + session + "/feedback",
        JSON.createObjectNode().put("kind", "THUMBS_UP").put("msgId", secondId).toString());
    assertEquals(202, rated.status(), "feedback on the second answer finds it: " + rated.body());
    // Resent once more as history (the edited turn, the result and the second answer), nothing is stored twice.
    messages.add(JSON.createObjectNode().put("role", "assistant").put("content", firstText));
    messages.add(JSON.createObjectNode().put("role", "user").put("content", "thanks"));
    JsonNode third = call(session, messages);
    String thirdId = third.path("id").asText();
    List<String> after = Await.until("the third answer stored", Duration.ofSeconds(10), () -> storedMsgIds(session),
        ids -> ids.contains(thirdId));
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json().path("messages");
    // user, first answer, edited turn, second answer, "thanks", third answer.
    assertEquals(6, stored.size(), stored.toString());
    assertEquals(3, after.stream().filter(id -> id != null).count(), after.toString());
  }
}
