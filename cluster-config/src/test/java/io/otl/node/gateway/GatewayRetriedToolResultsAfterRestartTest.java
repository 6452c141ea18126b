package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link GatewayRetriedToolResultsTest} on a node that does not know the session (restarted between the failed
 * call and its retry, as another node of the cluster would be): it asks the session what it holds, whose messages
 * and tool calls come in two lists, and tells the tool results stored after the model's call by their write.
 */
class GatewayRetriedToolResultsAfterRestartTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "retried-tools-restart";

  private static String callAnswer() {
    return "{\"id\":\"chatcmpl-call\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
        + "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_r1\",\"type\":\"function\","
        + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Rome\\\"}\"}}]},"
        + "\"finish_reason\":\"tool_calls\"}]}";
  }

  private static Http.Response chat(GatewayTestNode gateway, String session, ArrayNode messages) {
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages);
    body.putArray("tools").addObject().put("type", "function").putObject("function").put("name", "get_weather");
    return gateway.api.postWithHeaders("/v1/chat/completions", body.toString().getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
  }

  private static JsonNode session(GatewayTestNode gateway, String id, String answer) throws InterruptedException {
    JsonNode last = null;
    for (int i = 0; i < 150; i++) {
      Http.Response r = gateway.api.get("/v1/sessions/" + id);
      if (r.status() == 200) {
        last = r.json();
        for (JsonNode m : last.path("messages")) if (answer.equals(m.path("content").asText())) return last;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("session " + id + " never held " + answer + "; last: " + last);
  }

  @Test
  void theRetryOfAFailedCallAfterARestartStoresTheToolResultsOnce() throws Exception {
    try (ScriptedUpstream upstream = new ScriptedUpstream()) {
      GatewayTestNode gateway = GatewayTestNode.start("gateway-retried-tools-restart", Map.of())
          .servingAt(AGENT, upstream.baseUrl());
      try {
        String session = "retry-restart";
        ArrayNode messages = JSON.createArrayNode();
        messages.addObject().put("role", "system").put("content", "Be brief.");
        messages.addObject().put("role", "user").put("content", "Weather in Rome?");
        upstream.then(ScriptedUpstream.Script.json(callAnswer()));
        Http.Response first = chat(gateway, session, messages);
        assertEquals(200, first.status(), first.body());
        messages.add(first.json().path("choices").path(0).path("message"));
        messages.addObject().put("role", "tool").put("tool_call_id", "call_r1").put("content", "rain, 14 C");
        upstream.then(ScriptedUpstream.Script.status(503));
        assertEquals(502, chat(gateway, session, messages).status());
        JsonNode failed = session(gateway, session, "");
        // The call is stored with the answer that made it; the failed request's result is attached before the restart.
        for (int i = 0; i < 100 && !failed.path("toolCalls").path(0).path("output").isTextual(); i++) {
          Thread.sleep(100);
          failed = gateway.api.get("/v1/sessions/" + session).json();
        }
        assertEquals(1, failed.path("toolCalls").size(), failed.toString());

        gateway = gateway.restarted();
        upstream.then(ScriptedUpstream.Script.json("{\"id\":\"chatcmpl-a\",\"object\":\"chat.completion\",\"created\":1,"
            + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Rain.\"},"
            + "\"finish_reason\":\"stop\"}]}"));
        Http.Response retried = chat(gateway, session, messages);
        assertEquals(200, retried.status(), retried.body());
        JsonNode s = session(gateway, session, "Rain.");
        List<String> calls = new ArrayList<>();
        for (JsonNode c : s.path("toolCalls")) calls.add(c.path("callId").asText() + "=" + c.path("output").asText());
        assertEquals(List.of("call_r1=rain, 14 C"), calls, "the tool call once: " + s);
      } finally {
        gateway.close();
      }
    }
  }
}
