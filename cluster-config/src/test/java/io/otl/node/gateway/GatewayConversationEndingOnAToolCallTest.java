package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/gateway.md "What the session records": a model's tool call is in the session as soon as its answer is
 * recorded, awaiting its result, and the result a later request brings is attached to that call. The gateway
 * stored a call only once its result came back, so a conversation that ended on the model's call (AgentScope's
 * structured output, whose generate_response arguments are the answer, trial t123) kept an empty assistant
 * message and not the call, and its SFT line taught the model to answer nothing.
 */
class GatewayConversationEndingOnAToolCallTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "ends-on-call";
  private static ScriptedGateway scripted;
  private static GatewayTestNode gateway;
  private static ScriptedUpstream upstream;
  private static OpenAIClient client;

  @BeforeAll
  static void start() throws Exception {
    scripted = ScriptedGateway.start("gateway-ends-on-call", AGENT, 0);
    gateway = scripted.node;
    upstream = scripted.upstream;
    client = scripted.client;
  }

  @AfterAll
  static void stop() throws Exception {
    if (scripted != null) scripted.close();
  }

  /** The session's SFT line, once it is completed. */
  private static JsonNode sftLine(String sessionId, String marker) throws Exception {
    assertEquals(202, gateway.api.post("/v1/sessions/" + sessionId + "/events", "{\"agentId\":\"" + AGENT
        + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}").status());
    gateway.awaitSession(sessionId, n -> "COMPLETED".equals(n.path("status").asText()));
    Http.Response export = gateway.api.post("/v1/exports/" + AGENT + "?format=sft", "");
    assertEquals(200, export.status(), export.body());
    for (String l : export.body().split("\n")) {
      if (l.contains(marker)) return JSON.readTree(l);
    }
    throw new AssertionError("the session is not exported: " + export.body());
  }

  @Test
  void aConversationThatEndsOnTheModelsToolCallKeepsTheCall() throws Exception {
    String sessionId = "ends-" + UUID.randomUUID();
    upstream.then(ScriptedUpstream.Script.json(WeatherTool.callAnswer("call_e1", "Paris")));
    ChatCompletion call = client.chat().completions().create(WeatherTool.conversation(sessionId, "Weather in Paris?").build());
    assertEquals("call_e1", call.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction().id());

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("toolCalls").size() > 0);
    assertEquals(1, s.path("toolCalls").size(), s.toString());
    JsonNode c = s.path("toolCalls").get(0);
    assertEquals("call_e1", c.path("callId").asText());
    assertEquals("get_weather", c.path("toolName").asText());
    assertEquals("Paris", c.path("input").path("city").asText(), "strict JSON arguments as JSON: " + c);
    assertTrue(c.path("output").isNull(), "no result yet: " + c);
    assertFalse(c.has("success"), "no success before the tool ran: " + c);
    assertTrue(c.path("awaitingResult").asBoolean(), c.toString());

    // SFT: the assistant turn ends on the call, its arguments an object; no tool message without a result.
    JsonNode line = sftLine(sessionId, "Weather in Paris?");
    JsonNode messages = line.path("messages");
    JsonNode last = messages.get(messages.size() - 1);
    assertEquals("assistant", last.path("role").asText(), line.toString());
    JsonNode fn = last.path("tool_calls").path(0).path("function");
    assertEquals("get_weather", fn.path("name").asText(), line.toString());
    assertEquals("Paris", fn.path("arguments").path("city").asText(), line.toString());
    for (JsonNode m : messages) assertFalse("tool".equals(m.path("role").asText()), line.toString());
  }

  @Test
  void aStreamedCallIsStoredWhenTheModelMakesItAndItsResultAttachedToIt() throws Exception {
    String sessionId = "streamed-" + UUID.randomUUID();
    upstream.then(new ScriptedUpstream.Script(List.of(
        ScriptedUpstream.chunk("chatcmpl-s1", "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_s1\","
            + "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}", null),
        ScriptedUpstream.chunk("chatcmpl-s1", "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}", null),
        ScriptedUpstream.chunk("chatcmpl-s1", "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Oslo\\\"}\"}}]}", null),
        ScriptedUpstream.chunk("chatcmpl-s1", "{}", "tool_calls"), "data: [DONE]\n\n"), false, false));
    ChatCompletionCreateParams first = WeatherTool.conversation(sessionId, "Weather in Oslo?").build();
    List<String> ids = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(first)) {
      stream.stream().forEach(ch -> ch.choices().forEach(choice -> choice.delta().toolCalls()
          .ifPresent(calls -> calls.forEach(tc -> tc.id().ifPresent(ids::add)))));
    }
    assertEquals(List.of("call_s1"), ids);
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("toolCalls").size() > 0);
    assertEquals("Oslo", s.path("toolCalls").get(0).path("input").path("city").asText(), s.toString());
    assertTrue(s.path("toolCalls").get(0).path("awaitingResult").asBoolean(), s.toString());

    // The agent runs the tool and sends its result: attached to that call, not a second one.
    upstream.then(ScriptedUpstream.Script.json(ScriptedUpstream.textAnswer("a2", "Snow in Oslo.")));
    ObjectNode assistant = JSON.createObjectNode().put("role", "assistant").putNull("content");
    assistant.putArray("tool_calls").addObject().put("id", "call_s1").put("type", "function")
        .putObject("function").put("name", "get_weather").put("arguments", "{\"city\":\"Oslo\"}");
    ArrayNode messages = JSON.createArrayNode();
    messages.addObject().put("role", "system").put("content", "Be brief.");
    messages.addObject().put("role", "user").put("content", "Weather in Oslo?");
    messages.add(assistant);
    messages.addObject().put("role", "tool").put("tool_call_id", "call_s1").put("content", "snow, -3 C");
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages);
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions",
        body.toString().getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT, "X-Session-Id", sessionId);
    assertEquals(200, r.status(), r.body());
    s = gateway.awaitSession(sessionId, n -> n.path("toolCalls").path(0).path("output").isTextual()
        && n.path("messages").findValuesAsText("content").contains("Snow in Oslo."));
    assertEquals(1, s.path("toolCalls").size(), "one call, with its result: " + s);
    JsonNode c = s.path("toolCalls").get(0);
    assertEquals("snow, -3 C", c.path("output").asText(), c.toString());
    assertTrue(c.path("success").asBoolean(), c.toString());
    assertFalse(c.has("awaitingResult"), c.toString());
  }

  @Test
  void aLegacyFunctionCallThatEndsTheConversationIsKept() throws Exception {
    String sessionId = "legacy-" + UUID.randomUUID();
    upstream.then(ScriptedUpstream.Script.json("{\"id\":\"chatcmpl-f1\",\"object\":\"chat.completion\",\"created\":1,"
        + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
        + "\"function_call\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Rome\\\"}\"}},"
        + "\"finish_reason\":\"function_call\"}]}"));
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.putArray("messages").addObject().put("role", "user").put("content", "Weather in Rome?");
    body.putArray("functions").addObject().put("name", "get_weather");
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions",
        body.toString().getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT, "X-Session-Id", sessionId);
    assertEquals(200, r.status(), r.body());
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("toolCalls").size() > 0);
    JsonNode c = s.path("toolCalls").get(0);
    assertEquals("get_weather", c.path("toolName").asText(), s.toString());
    assertEquals("Rome", c.path("input").path("city").asText(), s.toString());
    JsonNode answer = s.path("messages").get(s.path("messages").size() - 1);
    assertEquals(answer.path("eventId").asText(), c.path("callId").asText(), "named by the answer that made it");
  }
}
