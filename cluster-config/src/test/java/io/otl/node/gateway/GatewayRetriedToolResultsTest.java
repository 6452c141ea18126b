package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import io.otl.node.testing.Http;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Review t116: a call whose request ends with tool results and whose answer failed (the model server answered
 * 5xx) or was cut short stored those tool results, and the retry of that same request (the OpenAI SDK's own, with
 * {@code X-Stainless-Retry-Count}, or the agent's) stored them a second time: the last message recorded was still
 * the model's call, so the stored results read as earlier occurrences of the call id that the agent's window had
 * dropped, and the retry's were numbered after them. The session then held each tool call twice, and so did the
 * export's conversation. A retry stores nothing it stored already; a tool result the agent sends again with another
 * call id is another call, and stored.
 */
class GatewayRetriedToolResultsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "retried-tools";
  private static ScriptedGateway scripted;
  private static GatewayTestNode gateway;
  private static ScriptedUpstream upstream;
  private static OpenAIClient client;

  @BeforeAll
  static void start() throws Exception {
    // The SDK's default: a 5xx is sent again (X-Stainless-Retry-Count: 1), the same body.
    scripted = ScriptedGateway.start("gateway-retried-tools", AGENT, 2);
    gateway = scripted.node;
    upstream = scripted.upstream;
    client = scripted.client;
  }

  @AfterAll
  static void stop() throws Exception {
    if (scripted != null) scripted.close();
  }

  private static ChatCompletionToolMessageParam result(ChatCompletion call, String content) {
    return ChatCompletionToolMessageParam.builder()
        .toolCallId(call.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction().id())
        .content(content).build();
  }

  /** Whether the session holds an assistant message with {@code content}. */
  private static Predicate<JsonNode> answered(String content) {
    return s -> {
      for (JsonNode m : s.path("messages")) {
        if ("assistant".equals(m.path("role").asText()) && content.equals(m.path("content").asText())) return true;
      }
      return false;
    };
  }

  private static List<String> outputs(JsonNode session) {
    List<String> out = new ArrayList<>();
    for (JsonNode c : session.path("toolCalls")) out.add(c.path("callId").asText() + "=" + c.path("output").asText());
    return out;
  }

  private static List<String> contents(JsonNode session) {
    List<String> out = new ArrayList<>();
    for (JsonNode m : session.path("messages")) out.add(m.path("role").asText() + ":" + m.path("content").asText());
    return out;
  }

  @Test
  void anSdkRetryOfAFailedCallAfterToolResultsStoresThemOnce() throws Exception {
    String sessionId = "retry-5xx-" + UUID.randomUUID();
    upstream.then(ScriptedUpstream.Script.json(WeatherTool.callAnswer("call_w1", "Paris")));
    ChatCompletion call = client.chat().completions().create(WeatherTool.conversation(sessionId, "Weather in Paris?").build());
    int before = upstream.requests.size();
    // The model server fails the call that brings the tool's result; the SDK sends it again, and it is answered.
    upstream.then(ScriptedUpstream.Script.status(503), ScriptedUpstream.Script.json(ScriptedUpstream.textAnswer("a2", "Sunny, 21 C.")));
    ChatCompletion answer = client.chat().completions().create(WeatherTool.conversation(sessionId, "Weather in Paris?")
        .addMessage(call.choices().get(0).message()).addMessage(result(call, "sunny, 21 C")).build());
    assertEquals("Sunny, 21 C.", answer.choices().get(0).message().content().orElse(""));
    assertEquals(before + 2, upstream.requests.size(), "the SDK sent the call twice");
    assertEquals(upstream.requests.get(before), upstream.requests.get(before + 1), "the same request");

    JsonNode s = gateway.awaitSession(sessionId, answered("Sunny, 21 C."));
    assertEquals(List.of("call_w1=sunny, 21 C"), outputs(s), "the tool call once: " + s);
    assertEquals(List.of("system:Be brief.", "user:Weather in Paris?", "assistant:", "assistant:",
        "assistant:Sunny, 21 C."), contents(s), "the call, the failed answer, the retry's answer: " + s);
    assertTrue(s.path("messages").get(3).path("inference").path("error").asText().contains("HTTP 503"),
        s.path("messages").get(3).toString());

    // The export's conversation has the tool's result once.
    assertEquals(202, gateway.api.post("/v1/sessions/" + sessionId + "/feedback", "{\"kind\":\"THUMBS_UP\"}").status());
    assertEquals(202, gateway.api.post("/v1/sessions/" + sessionId + "/events", "{\"agentId\":\"" + AGENT
        + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}").status());
    gateway.awaitSession(sessionId, n -> "COMPLETED".equals(n.path("status").asText()));
    Http.Response export = gateway.api.post("/v1/exports/" + AGENT + "?format=sft", "");
    assertEquals(200, export.status(), export.body());
    JsonNode line = null;
    for (String l : export.body().split("\n")) {
      if (l.contains("Weather in Paris?")) line = JSON.readTree(l);
    }
    assertTrue(line != null, "the session is exported: " + export.body());
    List<String> roles = new ArrayList<>();
    for (JsonNode m : line.path("messages")) roles.add(m.path("role").asText());
    assertEquals(List.of("system", "user", "assistant", "tool", "assistant"), roles, line.toString());
  }

  @Test
  void theRetryOfACallWhoseStreamWasCutStoresTheToolResultsOnce() throws Exception {
    String sessionId = "retry-cut-" + UUID.randomUUID();
    upstream.then(ScriptedUpstream.Script.json(WeatherTool.callAnswer("call_c1", "Oslo")));
    ChatCompletion call = client.chat().completions().create(WeatherTool.conversation(sessionId, "Weather in Oslo?").build());
    ChatCompletionCreateParams again = WeatherTool.conversation(sessionId, "Weather in Oslo?")
        .addMessage(call.choices().get(0).message()).addMessage(result(call, "snow, -3 C")).build();
    // The model server dies mid-answer: the agent's SDK raises the error event, and the agent sends the call again.
    upstream.then(new ScriptedUpstream.Script(List.of(
            ScriptedUpstream.chunk("chatcmpl-cut", "{\"role\":\"assistant\",\"content\":\"\"}", null),
            ScriptedUpstream.chunk("chatcmpl-cut", "{\"content\":\"Snow \"}", null)), true, false),
        new ScriptedUpstream.Script(List.of(
            ScriptedUpstream.chunk("chatcmpl-whole", "{\"role\":\"assistant\",\"content\":\"Snow, -3 C.\"}", null),
            ScriptedUpstream.chunk("chatcmpl-whole", "{}", "stop"), "data: [DONE]\n\n"), false, false));
    assertThrows(RuntimeException.class, () -> {
      try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(again)) {
        stream.stream().forEach(c -> { });
      }
    });
    StringBuilder text = new StringBuilder();
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(again)) {
      stream.stream().forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
    }
    assertEquals("Snow, -3 C.", text.toString());

    JsonNode s = gateway.awaitSession(sessionId, answered("Snow, -3 C."));
    assertEquals(List.of("call_c1=snow, -3 C"), outputs(s), "the tool call once: " + s);
    assertEquals(List.of("system:Be brief.", "user:Weather in Oslo?", "assistant:", "assistant:Snow ",
        "assistant:Snow, -3 C."), contents(s), "the call, the answer cut short, the retry's answer: " + s);
  }

  @Test
  void theSameToolResultUnderAnotherCallIdIsAnotherCallAlsoWhenItsCallIsRetried() throws Exception {
    String sessionId = "same-result-" + UUID.randomUUID();
    upstream.then(ScriptedUpstream.Script.json(WeatherTool.callAnswer("call_p1", "Paris")));
    ChatCompletion first = client.chat().completions().create(WeatherTool.conversation(sessionId, "Paris, then Lyon?").build());
    upstream.then(ScriptedUpstream.Script.json(WeatherTool.callAnswer("call_l1", "Lyon")));
    ChatCompletionCreateParams.Builder history = WeatherTool.conversation(sessionId, "Paris, then Lyon?")
        .addMessage(first.choices().get(0).message()).addMessage(result(first, "sunny"));
    ChatCompletion second = client.chat().completions().create(history.build());
    // The same result text for the second city; its call fails once and the SDK sends it again.
    upstream.then(ScriptedUpstream.Script.status(502), ScriptedUpstream.Script.json(ScriptedUpstream.textAnswer("both", "Both sunny.")));
    history.addMessage(second.choices().get(0).message()).addMessage(result(second, "sunny"));
    assertEquals("Both sunny.", client.chat().completions().create(history.build()).choices().get(0).message()
        .content().orElse(""));

    JsonNode s = gateway.awaitSession(sessionId, answered("Both sunny."));
    assertEquals(List.of("call_p1=sunny", "call_l1=sunny"), outputs(s), "each call once: " + s);
  }
}
