package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.Http;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A turn whose text is longer than {@code data-collector.max-text-length} is not lost: the agent
 * already has its answer, so the gateway cannot refuse it as the events API does (400); it stores
 * the text cut at the limit, desensitized before the cut, and marks the event with the original
 * length. A real node over loopback, the simulator as the model server.
 */
class GatewayLongTextTest {
  private static final int LIMIT = 300;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-long", Map.of("agentscope.training.data-collector.max-text-length", LIMIT))
        .serving("long-texts");
    api = gateway.api;
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void aTurnWithAMessageOverTheLimitIsRecordedCutAndMarked() throws Exception {
    String session = "long-" + UUID.randomUUID();
    // A phone number across the cut: cut first, it would be stored as a fragment no pattern recognises.
    String question = "q".repeat(LIMIT - 5) + " 13812345678 " + "z".repeat(700);
    JsonNode answer = chat(session, "[{\"role\":\"user\",\"content\":" + JSON.writeValueAsString(question) + "}]");
    assertEquals(200, answer.path("status").asInt(), answer.toString());

    JsonNode stored = Await.until("the turn recorded", () -> api.get("/v1/sessions/" + session).json(),
        s -> s.path("messages").size() == 2);
    JsonNode user = stored.path("messages").get(0);
    String content = user.path("content").asText();
    assertTrue(content.length() <= LIMIT, "cut at the limit: " + content.length());
    assertTrue(content.startsWith("q".repeat(LIMIT - 5)), content);
    assertFalse(content.contains("138"), "no fragment of the phone number: " + content);
    assertEquals(question.length(), user.path("truncated").path("content").asInt(), user.toString());
    JsonNode reply = stored.path("messages").get(1);
    assertEquals("assistant", reply.path("role").asText());
    assertEquals(answer.path("body").path("id").asText(), reply.path("msgId").asText(), "the answer is recorded");
    String timeline = api.get("/v1/audit/session/" + session + "/timeline").body();
    assertTrue(timeline.contains("[cut: content was " + question.length() + " characters]"), timeline);
  }

  @Test
  void aLongToolOutputIsStoredCutAndTheHistoryResentIsNotStoredTwice() throws Exception {
    String session = "tool-" + UUID.randomUUID();
    String first = "[{\"role\":\"user\",\"content\":\"look it up\"}]";
    JsonNode a1 = chat(session, first);
    assertEquals(200, a1.path("status").asInt(), a1.toString());
    String output = JSON.writeValueAsString(Map.of("rows", "r".repeat(2 * LIMIT)));
    String history = "[{\"role\":\"user\",\"content\":\"look it up\"},"
        + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
        + "\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}}]},"
        + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":" + JSON.writeValueAsString(output) + "},"
        + "{\"role\":\"user\",\"content\":" + JSON.writeValueAsString("w".repeat(3 * LIMIT)) + "}";
    JsonNode a2 = chat(session, history + "]");
    assertEquals(200, a2.path("status").asInt(), a2.toString());
    JsonNode stored = Await.until("the tool call recorded", () -> api.get("/v1/sessions/" + session).json(),
        s -> s.path("toolCalls").size() == 1 && s.path("messages").size() >= 5);
    JsonNode call = stored.path("toolCalls").get(0);
    assertEquals(output.length(), call.path("truncated").path("output").asInt(), call.toString());
    assertTrue(call.path("output").isTextual() && call.path("output").toString().length() <= LIMIT, call.toString());
    assertTrue(call.path("truncated").path("input").isMissingNode(), "the input was whole: " + call);

    // The same history again: the cut messages are known by their ids, only the new turn is stored.
    int before = stored.path("messages").size();
    JsonNode a3 = chat(session, history + ",{\"role\":\"user\",\"content\":\"and then?\"}]");
    assertEquals(200, a3.path("status").asInt(), a3.toString());
    JsonNode again = Await.until("the third turn recorded", () -> api.get("/v1/sessions/" + session).json(),
        s -> s.path("messages").toString().contains("and then?") && s.path("messages").size() >= before + 2);
    assertEquals(before + 2, again.path("messages").size(), again.path("messages").toString());
    assertEquals(1, again.path("toolCalls").size());
  }

  /** Tool schemas are stored whole or not at all (cut JSON would not parse when exported); the turn is kept. */
  @Test
  void toolSchemasOverTheLimitAreLeftOutAndSaidSoWhileTheTurnIsRecorded() throws Exception {
    String session = "schemas-" + UUID.randomUUID();
    String tools = "[{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"description\":"
        + JSON.writeValueAsString("d".repeat(2 * LIMIT)) + ",\"parameters\":{\"type\":\"object\"}}}]";
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "long-texts").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"tools\":" + tools
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    JsonNode stored = Await.until("the turn recorded", () -> api.get("/v1/sessions/" + session).json(),
        s -> s.path("messages").size() == 2);
    assertTrue(stored.path("metadata").path("tools").isMissingNode(), stored.path("metadata").toString());
    assertTrue(stored.path("metadata").path("toolsOmitted").asText().startsWith(tools.length() + " characters"),
        stored.path("metadata").toString());
  }

  /** The status and body of a chat call, as {"status":…, "body":…}. */
  private static JsonNode chat(String session, String messages) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "long-texts").header("X-Session-Id", session).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":" + messages + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    return JSON.createObjectNode().put("status", r.statusCode()).set("body", JSON.readTree(r.body()));
  }
}
