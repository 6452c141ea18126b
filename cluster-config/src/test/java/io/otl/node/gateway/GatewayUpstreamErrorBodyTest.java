package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.InternalServerException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.otl.node.testing.Http;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trial t87: a model server may answer a non-streamed call 200 with an error object instead of a completion
 * (vLLM's {@code {"object":"error",…}} for some failures, a proxy's {@code {"error":{…}}}). The gateway passed
 * it on and recorded an empty assistant answer: exported as training text, counted against nothing, so a
 * candidate failing this way passed its canary's error-rate guardrail. It is now the version's failure, as
 * a 5xx is: a 502 {@code upstream_error} to the agent (or the stable's answer, for a candidate), a failed turn,
 * an error counted against the version. The simulator has no way to answer so; {@link ScriptedUpstream} does.
 */
class GatewayUpstreamErrorBodyTest {
  private static final String PROXY_ERROR = "{\"error\":{\"message\":\"CUDA out of memory serving jane@example.com\","
      + "\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}";
  private static final String VLLM_ERROR = "{\"object\":\"error\",\"message\":\"The engine of jane@example.com died\","
      + "\"type\":\"EngineDeadError\",\"param\":null,\"code\":503}";
  private static GatewayTestNode gateway;
  private static ScriptedUpstream upstream;

  @BeforeAll
  static void start() throws Exception {
    upstream = new ScriptedUpstream();
    gateway = GatewayTestNode.start("gateway-error-body", simulator -> Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000,
        "agentscope.training.model-update.canary-ratio", 0.5,
        "agentscope.training.model-update.steps", List.of(1.0)));
  }

  @AfterAll
  static void stop() throws Exception {
    if (gateway != null) gateway.close();
    if (upstream != null) upstream.close();
  }


  @Test
  void anErrorObjectInA200IsA502AndAFailedTurnCountedAgainstTheVersion() throws Exception {
    Http.Response reg = gateway.api.post("/v1/models/err-body/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, reg.status(), reg.body());
    gateway.awaitState("err-body", "v1", "STABLE");
    Map<String, String> bodies = Map.of("proxy", PROXY_ERROR, "vllm", VLLM_ERROR);
    for (var b : bodies.entrySet()) {
      upstream.answer(new ScriptedUpstream.Script(List.of(b.getValue()), false, true));
      String sessionId = "err-body-" + b.getKey();
      Http.Response r = gateway.api.chat("err-body", sessionId, "Why is the sky blue?", false);
      assertEquals(502, r.status(), b.getKey() + ": " + r.body());
      JsonNode error = r.json().path("error");
      assertEquals("upstream_error", error.path("type").asText(), r.body());
      assertEquals("upstream_unavailable", error.path("code").asText(), r.body());
      assertTrue(error.path("message").asText().contains("answered 200 with an error object"), r.body());
      assertFalse(r.body().contains("jane@example.com"), "the server's message is not passed on: " + r.body());

      JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
      JsonNode answer = s.path("messages").get(1);
      assertEquals("", answer.path("content").asText(), answer.toString());
      String recorded = answer.path("inference").path("error").asText();
      assertTrue(recorded.contains("error object (type " + (b.getKey().equals("vllm") ? "EngineDeadError, code 503"
          : "InternalServerError, code 500") + ")"), b.getKey() + ": a failed turn: " + answer);
      assertFalse(s.toString().contains("jane@example.com") || s.toString().contains("engine of"),
          "only the server's type and code are stored: " + s);
    }

    // The OpenAI SDK raises it as the server error it is; it read a completion without choices before.
    upstream.answer(new ScriptedUpstream.Script(List.of(VLLM_ERROR), false, true));
    OpenAIClient client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(gateway.uri("/v1").toString())
        .putHeader("X-Agent-Id", "err-body").putHeader("X-Session-Id", "err-body-sdk").maxRetries(0).build();
    InternalServerException e = assertThrows(InternalServerException.class, () -> client.chat().completions().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("Why?").build()));
    assertEquals(502, e.statusCode());

    JsonNode v1 = gateway.api.get("/v1/models/err-body/traffic").json().path("versions").get(0);
    assertEquals(3, v1.path("errors").asInt(), "each counts against the version: " + v1);
    assertTrue(gateway.api.get("/metrics").body()
            .contains("otl_gateway_upstream_errors_total{agent=\"err-body\",version=\"v1\",kind=\"status\"} 3"),
        "the failures are counted for the canary's guardrail");
  }

  @Test
  void aCandidateAnsweringWithAnErrorObjectFallsBackToTheStable() throws Exception {
    String agent = "err-body-canary";
    Http.Response v1 = gateway.api.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\","
        + "\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + gateway.simulator.baseUrl() + "/v1\"}");
    assertEquals(201, v1.status(), v1.body());
    gateway.awaitState(agent, "v1", "STABLE");
    Http.Response v2 = gateway.api.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"v2\",\"artifact\":\"file:///models/v2\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, v2.status(), v2.body());
    gateway.awaitState(agent, "v2", "CANARY");
    upstream.answer(new ScriptedUpstream.Script(List.of(PROXY_ERROR), false, true));
    int onCandidate = 0;
    for (int i = 0; i < 20; i++) {
      String sessionId = "err-body-canary-" + i;
      if (!gateway.api.get("/v1/models/" + agent + "/route?sessionId=" + sessionId).json().path("version").asText()
          .equals("v2")) {
        continue;
      }
      onCandidate++;
      Http.Response r = gateway.api.chat(agent, sessionId, "hi", false);
      assertEquals(200, r.status(), sessionId + ": " + r.body());
      assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(""), r.body());
      assertTrue(r.json().path("choices").get(0).path("message").path("content").isTextual(), r.body());
    }
    assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    JsonNode traffic = gateway.api.get("/v1/models/" + agent + "/traffic").json().path("versions");
    for (JsonNode v : traffic) {
      if (v.path("version").asText().equals("v2")) {
        assertEquals(onCandidate, v.path("errors").asInt(), "the candidate's failures count against it: " + traffic);
      }
    }
  }

  /**
   * Trial trial-gw: a streamed call answered 200 with one JSON body (an error object, or a whole answer from a
   * server that does not stream) was passed through as it was: the openai Python client read an empty stream and
   * raised nothing, and the turn was recorded as an empty answer with {@code aborted} true, though the agent had
   * stayed. It is the version's failure now, as that body is for a call not streamed.
   */
  @Test
  void aStreamedCallAnsweredWithOneJsonBodyIsA502AndAFailedTurn() throws Exception {
    String agent = "err-body-stream";
    Http.Response reg = gateway.api.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + upstream.baseUrl() + "\"}");
    assertEquals(201, reg.status(), reg.body());
    gateway.awaitState(agent, "v1", "STABLE");
    Map<String, String> bodies = Map.of(
        "error", PROXY_ERROR, "whole", ScriptedUpstream.textAnswer("whole-1", "not streamed"));
    for (var b : bodies.entrySet()) {
      upstream.answer(ScriptedUpstream.Script.json(b.getValue()));
      String sessionId = "err-body-stream-" + b.getKey();
      Http.Response r = gateway.api.chat(agent, sessionId, "Why is the sky blue?", true);
      assertEquals(502, r.status(), b.getKey() + ": " + r.body());
      JsonNode error = r.json().path("error");
      assertEquals("upstream_unavailable", error.path("code").asText(), r.body());
      assertTrue(error.path("message").asText().contains(b.getKey().equals("error")
          ? "answered 200 with an error object" : "not an event stream (text/event-stream)"), r.body());

      JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
      JsonNode answer = s.path("messages").get(1).path("inference");
      assertTrue(answer.path("error").isTextual(), "a failed turn: " + s);
      assertTrue(answer.path("aborted").isNull() || answer.path("aborted").isMissingNode(), "the agent stayed: " + s);
    }
    JsonNode v1 = gateway.api.get("/v1/models/" + agent + "/traffic").json().path("versions").get(0);
    assertEquals(2, v1.path("errors").asInt(), "each counts against the version: " + v1);
  }
}
