package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.PythonVenv;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Trial t110: an agent on the official {@code openai} Python package that resends only the system prompt, the last
 * answer and the new question (a short context window), and asks some questions again after the window dropped
 * them. Every message is stored once, in order: before, a question asked again lost itself and its answer (the
 * same text as the first answer), both taken for the first occurrence's duplicates. Skipped loudly without
 * Python (failed when OTL_REQUIRE_PYTHON=true).
 */
class GatewayWindowPythonTest {

  @Test
  void aShortWindowAgentAskingAgainHasEveryTurnStoredOnce() throws Exception {
    PythonVenv.python();
    try (GatewayTestNode gateway = GatewayTestNode.start("openai-window", Map.of(
            "agentscope.training.gateway.agents.py-agent.api-key", "sk-py-agent-key",
            "agentscope.training.training-runner.trigger.min-samples", 1000))
        .serving("py-agent")) {
      String session = "py-window-" + UUID.randomUUID();
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/openai_window_check.py");
      PythonVenv.Result r = PythonVenv.run(script,
          List.of(gateway.uri("").toString(), "sk-py-agent-key", session), gateway.dir, 120);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = new ObjectMapper().readTree(r.lastLine());
      JsonNode said = report.path("said");
      assertEquals(13, said.size(), said.toString());

      // The turn is recorded a moment after its answer: wait for the last answer (up to 10 s; without it the
      // comparison below shows what is missing).
      String lastId = report.path("last_id").asText();
      JsonNode stored = gateway.api.get("/v1/sessions/" + session).json();
      for (int i = 0; i < 100 && !stored.toString().contains(lastId); i++) {
        Thread.sleep(100);
        stored = gateway.api.get("/v1/sessions/" + session).json();
      }
      List<String> expected = new ArrayList<>();
      for (JsonNode m : said) expected.add(m.get(0).asText() + ": " + m.get(1).asText());
      List<String> got = new ArrayList<>();
      for (JsonNode m : stored.path("messages")) got.add(m.path("role").asText() + ": " + m.path("content").asText());
      assertEquals(expected, got, stored.toString());
    }
  }
}
