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
 * docs/gateway.md "What the session records": a model that gives its tool calls the same id in
 * every turn (a per-turn counter, {@code call_0}) makes a new call each time. The tool call's event
 * id was a hash of the call id alone, so every call after the first was dropped as a duplicate of it
 * and the session silently lost them (found by the new-user trial with the OpenAI Python client).
 */
class GatewayReusedToolCallIdsTest {
  private static final String AGENT = "reuse-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-reused-call-ids", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** The assistant turn calling {@code calc(x)} under the call id {@code call_0}. */
  private static ObjectNode call(int x) {
    ObjectNode m = JSON.createObjectNode().put("role", "assistant").putNull("content");
    ObjectNode c = m.putArray("tool_calls").addObject().put("id", "call_0").put("type", "function");
    c.putObject("function").put("name", "calc").put("arguments", "{\"x\":" + x + "}");
    return m;
  }

  private static ObjectNode result(int x) {
    return JSON.createObjectNode().put("role", "tool").put("tool_call_id", "call_0").put("content", "" + 2 * x);
  }

  /** One request with the last {@code window} messages of the conversation; its answer goes into it. */
  private static void turn(String session, List<ObjectNode> conversation, int window) {
    ArrayNode messages = JSON.createArrayNode();
    conversation.subList(Math.max(0, conversation.size() - window), conversation.size()).forEach(messages::add);
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages);
    body.putArray("tools").addObject().put("type", "function").putObject("function").put("name", "calc");
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions",
        body.toString().getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    conversation.add(message("assistant",
        r.json().path("choices").path(0).path("message").path("content").asText()));
  }

  private static JsonNode storedCalls(String session, int expected) throws Exception {
    Await.until(expected + " tool calls of " + session + " stored", Duration.ofSeconds(10),
        () -> {
          Http.Response r = gateway.api.get("/v1/sessions/" + session);
          return r.status() == 200 ? r.json().path("toolCalls").size() : 0;
        }, n -> n >= expected);
    Thread.sleep(300); // nothing more arrives (a duplicate would)
    return gateway.api.get("/v1/sessions/" + session).json().path("toolCalls");
  }

  private void conversation(String session, int window) throws Exception {
    List<ObjectNode> conversation = new ArrayList<>();
    int turns = 4;
    for (int i = 1; i <= turns; i++) {
      conversation.add(message("user", "compute " + i));
      conversation.add(call(i));
      conversation.add(result(i));
      turn(session, conversation, window);
    }
    turn(session, conversation, window); // the last result resent once more: not stored again
    JsonNode calls = storedCalls(session, turns);
    assertEquals(turns, calls.size(), calls.toString());
    for (int i = 1; i <= turns; i++) {
      JsonNode c = calls.path(i - 1);
      assertEquals("call_0", c.path("callId").asText(), calls.toString());
      assertEquals(i, c.path("input").path("x").asInt(), calls.toString());
      assertEquals(2 * i, c.path("output").asInt(), calls.toString());
    }
  }

  @Test
  void aCallIdUsedInEveryTurnKeepsEveryCall() throws Exception {
    conversation("reuse-full", Integer.MAX_VALUE);
  }

  @Test
  void aCallIdUsedInEveryTurnKeepsEveryCallInASlidingWindow() throws Exception {
    conversation("reuse-window", 4); // the previous answer, then this turn's question, call and result
  }
}
