package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * The SFT line of a conversation recorded by the gateway carries the tools as the agent declared
 * them to the model (description, required keys, the tools offered but not called), because the
 * chat template renders exactly those into the prompt. The export used to write only a schema
 * guessed from the calls' arguments: {@code get_weather} lost its description and its
 * {@code required}, and the unused tool was missing, so the model was trained on a prompt it
 * never saw.
 */
class GatewayToolSchemasExportTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** One agent a test: each test reads its agent's whole export. */
  private static final String DECLARED = "tooler";
  private static final String ADDED = "tool-adder";

  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-tools", Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000)).serving(DECLARED, ADDED);
    api = gateway.api;
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void theExportedToolsAreTheOnesTheAgentDeclared() throws Exception {
    ArrayNode tools = (ArrayNode) JSON.readTree("""
        [{"type":"function","function":{"name":"get_weather","description":"Current weather of a city",
          "parameters":{"type":"object","properties":{"city":{"type":"string","description":"city name"}},
                        "required":["city"]}}},
         {"type":"function","function":{"name":"book_flight","description":"Books a flight",
          "parameters":{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}}}]""");
    String session = "tools-" + UUID.randomUUID();
    ArrayNode messages = JSON.createArrayNode();
    messages.addObject().put("role", "user").put("content", "Use get_weather for Paris");
    JsonNode first = chat(DECLARED, session, messages, tools);
    JsonNode call = first.path("choices").get(0).path("message");
    assertEquals("get_weather", call.path("tool_calls").get(0).path("function").path("name").asText(), first.toString());
    messages.add(call);
    messages.addObject().put("role", "tool").put("tool_call_id", call.path("tool_calls").get(0).path("id").asText())
        .put("content", "{\"temp\":21}");
    chat(DECLARED, session, messages, tools);
    assertEquals(202, api.post("/v1/sessions/" + session + "/feedback", "{\"kind\":\"THUMBS_UP\"}").status());
    assertEquals(202, api.post("/v1/sessions/" + session + "/events",
        "{\"agentId\":\"" + DECLARED + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}").status());

    Http.Response export = api.post("/v1/exports/" + DECLARED + "?format=sft", "");
    assertEquals(200, export.status(), export.body());
    String[] lines = export.body().split("\n");
    assertEquals(2, lines.length, export.body());
    JsonNode line = JSON.readTree(lines[1]);
    assertEquals(tools, line.get("tools"), lines[1]);
    // The call itself is still the one the model made, its arguments an object.
    JsonNode exportedCall = line.path("messages").get(1).path("tool_calls").get(0).path("function");
    assertEquals("get_weather", exportedCall.path("name").asText(), lines[1]);
    assertEquals(true, exportedCall.path("arguments").isObject(), lines[1]);
  }

  /**
   * An agent that offers a tool from the second turn on (tools often depend on the conversation's
   * state) resends the whole list. The session kept the first list only (one tools event per
   * session), so the call of the new tool was exported with a schema guessed from its arguments:
   * its description and required keys, which the model saw, were lost.
   */
  @Test
  void aToolAddedMidConversationKeepsItsDeclaredSchema() throws Exception {
    ArrayNode weatherOnly = (ArrayNode) JSON.readTree("""
        [{"type":"function","function":{"name":"get_weather","description":"Current weather of a city",
          "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]""");
    // The new tool first: the simulator calls the first tool the user names.
    ArrayNode both = (ArrayNode) JSON.readTree("""
        [{"type":"function","function":{"name":"book_flight","description":"Books a flight",
          "parameters":{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}}}]""");
    both.addAll(weatherOnly);
    String session = "tools-" + UUID.randomUUID();
    ArrayNode messages = JSON.createArrayNode();
    messages.addObject().put("role", "user").put("content", "Hello");
    messages.add(chat(ADDED, session, messages, weatherOnly).path("choices").get(0).path("message"));
    messages.addObject().put("role", "user").put("content", "Use book_flight to Rome");
    JsonNode call = chat(ADDED, session, messages, both).path("choices").get(0).path("message");
    assertEquals("book_flight", call.path("tool_calls").get(0).path("function").path("name").asText(), call.toString());
    messages.add(call);
    messages.addObject().put("role", "tool").put("tool_call_id", call.path("tool_calls").get(0).path("id").asText())
        .put("content", "{\"booked\":true}");
    messages.add(chat(ADDED, session, messages, both).path("choices").get(0).path("message"));
    messages.addObject().put("role", "user").put("content", "Thanks");
    // The first list again: a set the session has had is not stored twice, the latest new one stays.
    chat(ADDED, session, messages, weatherOnly);
    assertEquals(202, api.post("/v1/sessions/" + session + "/events",
        "{\"agentId\":\"" + ADDED + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}").status());

    // The audit tells a tool list from a (re)start of the session.
    String timeline = api.get("/v1/audit/session/" + session + "/timeline").body();
    assertEquals(1, timeline.split("started for agent", -1).length - 1, timeline);
    assertEquals(1, timeline.split("metadata added: tools", -1).length - 1, timeline);
    assertEquals(1, timeline.split("metadata changed: tools", -1).length - 1, timeline);
    JsonNode stored = JSON.readTree(api.get("/v1/sessions/" + session).body());
    assertEquals(both, JSON.readTree(stored.path("metadata").path("tools").asText()), stored.toString());
    Http.Response export = api.post("/v1/exports/" + ADDED + "?format=sft", "");
    assertEquals(200, export.status(), export.body());
    JsonNode line = null;
    for (String l : export.body().split("\n")) {
      if (l.contains("book_flight")) line = JSON.readTree(l);
    }
    assertEquals(both, line == null ? null : line.get("tools"), export.body());
  }

  private static JsonNode chat(String agent, String session, ArrayNode messages, ArrayNode tools) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages);
    body.set("tools", tools);
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
            .header("X-Agent-Id", agent).header("X-Session-Id", session).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }
}
