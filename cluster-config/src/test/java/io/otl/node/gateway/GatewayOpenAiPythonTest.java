package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.Http;
import io.otl.node.testing.PythonVenv;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The official {@code openai} Python package (pinned in scripts/python-requirements.txt) against the
 * gateway, as docs/gateway.md tells an agent to connect ({@code OpenAI(base_url=…/v1, api_key=<the
 * agent's gateway key>)}): tools, a streamed answer with usage, the answer rated by its response id
 * the moment the stream ends, the task result, and the client's typed errors. The session the node
 * stored is then checked here. Skipped loudly without Python (failed when OTL_REQUIRE_PYTHON=true).
 */
class GatewayOpenAiPythonTest {

  @Test
  void theOpenAiPythonClientRunsAConversationThroughTheGateway() throws Exception {
    PythonVenv.python();
    try (GatewayTestNode gateway = GatewayTestNode.start("openai-python", Map.of(
            "agentscope.training.gateway.agents.py-agent.api-key", "sk-py-agent-key",
            "agentscope.training.training-runner.trigger.min-samples", 1000))
        .serving("py-agent")) {
      Http api = gateway.api;
      String session = "py-" + UUID.randomUUID();

      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/openai_gateway_check.py");
      PythonVenv.Result r = PythonVenv.run(script,
          List.of(gateway.uri("").toString(), "sk-py-agent-key", session), gateway.dir, 120);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = new ObjectMapper().readTree(r.lastLine());

      assertEquals(session, report.path("session_header").asText(), report.toString());
      assertEquals("v1", report.path("version_header").asText(), report.toString());
      assertEquals("get_weather", report.path("tool_called").asText(), report.toString());
      // Forwarded text is never desensitized: the model answered with the address the user gave.
      assertTrue(report.path("streamed_text").asText().contains("jane@example.com"), report.toString());
      assertTrue(report.path("usage_completion_tokens").asInt() > 0, report.toString());
      assertEquals(202, report.path("feedback_status").asInt(), report.toString());
      assertEquals(202, report.path("result_status").asInt(), report.toString());
      assertEquals(400, report.path("bad_request").path("status").asInt(), report.toString());
      assertEquals("invalid_value", report.path("bad_request").path("code").asText(), report.toString());
      assertEquals("messages", report.path("bad_request").path("param").asText(), report.toString());
      assertEquals(401, report.path("wrong_key").path("status").asInt(), report.toString());
      assertEquals("invalid_api_key", report.path("wrong_key").path("code").asText(), report.toString());
      // Another model's retrieve: OpenAI's model_not_found, which the client parses (code was None).
      assertEquals(404, report.path("unknown_model").path("status").asInt(), report.toString());
      assertEquals("model_not_found", report.path("unknown_model").path("code").asText(), report.toString());
      assertEquals("model", report.path("unknown_model").path("param").asText(), report.toString());

      JsonNode stored = api.get("/v1/sessions/" + session).json();
      assertEquals("py-agent", stored.path("agentId").asText(), stored.toString());
      assertEquals("COMPLETED", stored.path("status").asText(), stored.toString());
      assertEquals("v1", stored.path("modelVersion").asText(), stored.toString());
      assertFalse(stored.toString().contains("jane@example.com"), "stored desensitized: " + stored);
      assertEquals("get_weather", stored.path("toolCalls").get(0).path("toolName").asText(), stored.toString());
      JsonNode messages = stored.path("messages");
      JsonNode answer = messages.get(messages.size() - 1);
      assertEquals(report.path("streamed_id").asText(), answer.path("msgId").asText(), stored.toString());
      assertEquals(report.path("streamed_id").asText(), stored.path("feedback").get(0).path("msgId").asText(),
          stored.toString());
      assertEquals(1.0, stored.path("reward").asDouble(), stored.toString());
    }
  }
}
