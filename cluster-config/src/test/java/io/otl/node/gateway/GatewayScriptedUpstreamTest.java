package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.SseException;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.otl.node.testing.Http;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway against a model server that does what the simulator does not ({@link ScriptedUpstream}):
 * dies after the 200 and some events, or answers with vLLM's reasoning fields.
 */
class GatewayScriptedUpstreamTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;
  private static ScriptedUpstream upstream;

  @BeforeAll
  static void start() throws Exception {
    upstream = new ScriptedUpstream();
    gateway = GatewayTestNode.start("gateway-scripted", Map.of("agentscope.training.gateway.timeout", "5s"));
    Http.Response r = gateway.api.post("/v1/models/scripted/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, r.status(), r.body());
    gateway.awaitState("scripted", "v1", "STABLE");
  }

  @AfterAll
  static void stop() throws Exception {
    if (gateway != null) gateway.close();
    if (upstream != null) upstream.close();
  }

  private static HttpResponse<String> post(String sessionId, boolean stream) throws Exception {
    String body = "{\"model\":\"default\",\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Why is the sky blue?\"}]}";
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("X-Agent-Id", "scripted").header("X-Session-Id", sessionId)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }


  @Test
  void anUpstreamThatDiesMidStreamEndsTheStreamWithAnOpenAiErrorEvent() throws Exception {
    // The last event is cut mid-line too: the error must still be an event of its own.
    upstream.answer(new ScriptedUpstream.Script(List.of(
        ScriptedUpstream.chunk("chatcmpl-cut", "{\"role\":\"assistant\",\"content\":\"\"}", null),
        ScriptedUpstream.chunk("chatcmpl-cut", "{\"content\":\"Rayleigh \"}", null),
        "data: {\"id\":\"chatcmpl-cut\",\"obj"), true, false));
    String sessionId = "cut-" + UUID.randomUUID();
    HttpResponse<String> r = post(sessionId, true);
    assertEquals(200, r.statusCode(), "the 200 went out before the upstream failed");
    String body = r.body();
    assertFalse(body.contains("[DONE]"), body);
    assertTrue(body.endsWith("}\n\n"), "the stream ends with a complete event: " + body);
    String[] events = body.split("\n\n");
    String last = events[events.length - 1];
    assertTrue(last.startsWith("data: "), last);
    JsonNode error = JSON.readTree(last.substring(6)).path("error");
    assertEquals("upstream_error", error.path("type").asText(), last);
    assertEquals("upstream_unavailable", error.path("code").asText(), last);
    assertTrue(error.path("message").asText().contains("stream broke"), last);

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    JsonNode answer = s.path("messages").get(1);
    assertTrue(answer.path("inference").path("error").asText().contains("stream broke"), answer.toString());
    assertEquals("Rayleigh ", answer.path("content").asText(), "what was streamed before the failure");
    assertTrue(gateway.api.get("/metrics").body()
            .contains("otl_gateway_upstream_errors_total{agent=\"scripted\",version=\"v1\",kind=\"stream\"}"),
        "the failure counts against the version");

    // The OpenAI SDK raises the error event instead of ending the answer as if it were complete (cut
    // between events here: a cut event is already in the client's hands, which no SDK can parse).
    upstream.answer(new ScriptedUpstream.Script(List.of(
        ScriptedUpstream.chunk("chatcmpl-cut2", "{\"role\":\"assistant\",\"content\":\"Rayleigh \"}", null)), true, false));
    OpenAIClient client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(gateway.uri("/v1").toString())
        .putHeader("X-Agent-Id", "scripted").maxRetries(0).build();
    SseException e = assertThrows(SseException.class, () -> {
      try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
          ChatCompletionCreateParams.builder().model("default").addUserMessage("again").build())) {
        stream.stream().forEach(c -> { });
      }
    });
    assertTrue(String.valueOf(e.getMessage()).contains("stream broke") || e.body().toString().contains("stream broke"),
        String.valueOf(e.getMessage()));
  }

  /**
   * Trial trial-gw: a model server that ends its stream properly (the terminating chunk) before the answer is
   * whole, with no finish reason, no [DONE] and no error event (a proxy that drops the rest, a server that sends
   * an empty stream), reached the agent as a clean end, which the SDKs read as a whole answer, and the turn was
   * recorded as the agent's abort ({@code aborted} true, though it stayed), counted against nothing. It ends
   * with OpenAI's error event now, and is a failed turn counted against the version.
   */
  @Test
  void aStreamTheModelServerEndsBeforeTheAnswerIsWholeEndsWithAnErrorEventAndIsAFailedTurn() throws Exception {
    Http.Response reg = gateway.api.post("/v1/models/scripted-short/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, reg.status(), reg.body());
    gateway.awaitState("scripted-short", "v1", "STABLE");
    Map<String, List<String>> streams = Map.of(
        "half", List.of(ScriptedUpstream.chunk("chatcmpl-short", "{\"role\":\"assistant\",\"content\":\"Rayleigh \"}", null)),
        "empty", List.of());
    for (var st : streams.entrySet()) {
      upstream.answer(new ScriptedUpstream.Script(st.getValue(), false, false));
      String sessionId = "short-" + st.getKey() + "-" + UUID.randomUUID();
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
          .header("X-Agent-Id", "scripted-short").header("X-Session-Id", sessionId)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"stream\":true,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"Why is the sky blue?\"}]}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      String[] events = r.body().split("\n\n");
      String last = events[events.length - 1];
      assertTrue(last.startsWith("data: "), st.getKey() + ": the stream ends with an event: " + r.body());
      JsonNode error = JSON.readTree(last.substring(6)).path("error");
      assertEquals("upstream_unavailable", error.path("code").asText(), st.getKey() + ": " + r.body());
      assertTrue(error.path("message").asText().contains("before the answer was whole"), last);

      JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
      JsonNode inference = s.path("messages").get(1).path("inference");
      assertTrue(inference.path("error").asText().contains("before the answer was whole"), st.getKey() + ": " + s);
      assertFalse(inference.path("aborted").asBoolean(false), st.getKey() + ": the agent did not leave: " + s);
    }
    assertTrue(gateway.api.get("/metrics").body()
            .contains("otl_gateway_upstream_errors_total{agent=\"scripted-short\",version=\"v1\",kind=\"stream\"} 2"),
        "each counts against the version");
    assertFalse(gateway.api.get("/metrics").body().contains("otl_gateway_aborted_total{agent=\"scripted-short\""),
        "no abort counted");
  }

  @Test
  void anErrorEventTheModelServerStreamsIsAFailedTurnCountedAgainstTheVersion() throws Exception {
    // Trial t79. vLLM ends a stream whose engine fails mid-answer with an error event and then [DONE]; OpenAI's
    // servers send the event without [DONE]. The agent's SDK raises it (APIError), but the turn was recorded as
    // a whole answer (vLLM: exported as training text) or as the client's abort (OpenAI), and no error counted
    // against the version, so a candidate failing this way passed its canary's error-rate guardrail.
    Http.Response reg = gateway.api.post("/v1/models/scripted-err/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, reg.status(), reg.body());
    gateway.awaitState("scripted-err", "v1", "STABLE");
    String vllmError = "data: {\"error\":{\"message\":\"Engine loop has died for jane@example.com\","
        + "\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}\n\n";
    String openAiError = "data: {\"error\":{\"message\":\"The server had an error while processing your request.\","
        + "\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";
    Map<String, List<String>> scripts = new java.util.LinkedHashMap<>();
    scripts.put("vllm", List.of(ScriptedUpstream.chunk("chatcmpl-e1", "{\"role\":\"assistant\",\"content\":\"\"}", null),
        ScriptedUpstream.chunk("chatcmpl-e1", "{\"content\":\"Rayleigh \"}", null), vllmError, "data: [DONE]\n\n"));
    scripts.put("openai", List.of(ScriptedUpstream.chunk("chatcmpl-e2", "{\"role\":\"assistant\",\"content\":\"\"}", null),
        ScriptedUpstream.chunk("chatcmpl-e2", "{\"content\":\"Rayleigh \"}", null), openAiError));
    for (var script : scripts.entrySet()) {
      upstream.answer(new ScriptedUpstream.Script(script.getValue(), false, false));
      String sessionId = "err-event-" + script.getKey() + "-" + UUID.randomUUID();
      String body = "{\"model\":\"default\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Why?\"}]}";
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
          .header("X-Agent-Id", "scripted-err").header("X-Session-Id", sessionId).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      assertTrue(r.body().contains(script.getValue().get(2)), "the error event goes to the agent as sent: " + r.body());

      JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
      JsonNode answer = s.path("messages").get(1);
      assertEquals("Rayleigh ", answer.path("content").asText(), script.getKey() + ": what was streamed: " + answer);
      String error = answer.path("inference").path("error").asText();
      assertTrue(error.contains("error event"), script.getKey() + ": a failed turn: " + answer);
      assertTrue(answer.path("inference").path("aborted").isNull(), script.getKey() + ": not the client's abort: " + answer);
      assertFalse(s.toString().contains("jane@example.com") || s.toString().contains("Engine loop"),
          "the server's message is not stored, only its type and code: " + s);
    }
    JsonNode v1 = gateway.api.get("/v1/models/scripted-err/traffic").json().path("versions").get(0);
    assertEquals(2, v1.path("errors").asInt(), "both count against the version: " + v1);
    assertEquals(0, v1.path("aborted").asInt(), "no client left: " + v1);
  }

  /** The session's events in journal order, as the audit reads them. */
  private static List<String> eventIdsInOrder(String sessionId) {
    List<String> ids = new java.util.ArrayList<>();
    for (JsonNode e : gateway.api.get("/v1/audit/session/" + sessionId).json().path("events")) {
      ids.add(e.path("event").path("eventId").asText());
    }
    return ids;
  }

  @Test
  void streamedReasoningIsARecordedStepBeforeTheAnswerAndItsFirstDeltaIsTheFirstToken() throws Exception {
    // vLLM with a reasoning parser: reasoning_content deltas, then the answer's content, 400 ms apart.
    upstream.answer(new ScriptedUpstream.Script(List.of(
        ScriptedUpstream.chunk("chatcmpl-think", "{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Light \"}", null),
        ScriptedUpstream.chunk("chatcmpl-think", "{\"reasoning_content\":\"scatters.\"}", null),
        ScriptedUpstream.chunk("chatcmpl-think", "{\"content\":\"Rayleigh scattering.\"}", null),
        ScriptedUpstream.chunk("chatcmpl-think", "{}", "stop"), "data: [DONE]\n\n"), false, false, 400));
    String sessionId = "think-" + UUID.randomUUID();
    HttpResponse<String> r = post(sessionId, true);
    assertEquals(200, r.statusCode(), r.body());
    assertTrue(r.body().contains("\"reasoning_content\":\"Light \""), "forwarded unchanged: " + r.body());

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2 && n.path("steps").size() == 1);
    assertEquals("Light scatters.", s.path("steps").get(0).path("thought").asText(), s.toString());
    JsonNode answer = s.path("messages").get(1);
    assertEquals("Rayleigh scattering.", answer.path("content").asText());
    long firstTokenMs = answer.path("inference").path("firstTokenMs").asLong();
    assertTrue(firstTokenMs < 700 && answer.path("latencyMs").asLong() >= 1_200,
        "time to first token is the first reasoning delta's, not the content's (800 ms later): " + answer);
    List<String> order = eventIdsInOrder(sessionId);
    String stepId = s.path("steps").get(0).path("eventId").asText();
    assertTrue(order.indexOf(stepId) >= 0 && order.indexOf(stepId) < order.indexOf(answer.path("eventId").asText()),
        "the step comes before the answer: " + order);
  }

  @Test
  void reasoningOfAWholeAnswerUnderItsNewerNameIsRecordedToo() throws Exception {
    String body = "{\"id\":\"chatcmpl-whole\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"reasoning\":\"Short waves scatter more.\","
        + "\"content\":\"Because of Rayleigh scattering.\"},\"finish_reason\":\"stop\"}],"
        + "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9,\"total_tokens\":14}}";
    upstream.answer(new ScriptedUpstream.Script(List.of(body), false, true));
    String sessionId = "whole-" + UUID.randomUUID();
    HttpResponse<String> r = post(sessionId, false);
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("Short waves scatter more.",
        JSON.readTree(r.body()).path("choices").get(0).path("message").path("reasoning").asText(), "forwarded");
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2 && n.path("steps").size() == 1);
    assertEquals("Short waves scatter more.", s.path("steps").get(0).path("thought").asText());
    List<String> order = eventIdsInOrder(sessionId);
    assertTrue(order.indexOf(s.path("steps").get(0).path("eventId").asText())
        < order.indexOf(s.path("messages").get(1).path("eventId").asText()), "the step comes first: " + order);
  }
}
