package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The OpenTelemetry Python SDK's OTLP http/protobuf exporter (scripts/python-otel-requirements.txt)
 * feeds the node: a two-turn agent with tool calls, and the Python example of
 * docs/connect-opentelemetry.md run as the document shows it. Skipped loudly when the SDK cannot be
 * installed (failed instead when OTL_REQUIRE_OTEL_PYTHON=true).
 */
class OtlpPythonExporterTest {
  private static final String TOKEN = "python-otlp-token";

  @Test
  void pythonSdkExporterFeedsTrajectories() throws Exception {
    Path python = PythonVenv.python("scripts/python-otel-requirements.txt", "venv-otel", "OTL_REQUIRE_OTEL_PYTHON");
    Path dir = TestDatabases.outputDir("otlp-python");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), true)))) {
      String base = "http://127.0.0.1:" + node.httpPort();
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/otel_genai_agent.py");
      PythonVenv.Result r = PythonVenv.run(python, script, List.of(base, TOKEN, "py-otlp-1"), dir, 120);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = new ObjectMapper().readTree(r.lastLine());
      assertTrue(report.get("first").asBoolean() && report.get("again").asBoolean(), report.toString());

      Http http = new Http(node.httpPort()).withToken(TOKEN);
      JsonNode s = http.get("/v1/sessions/py-otlp-1").json();
      assertEquals("booking-agent", s.get("agentId").asText());
      List<String> roles = new ArrayList<>();
      s.get("messages").forEach(m -> roles.add(m.get("role").asText()));
      assertEquals(List.of("user", "assistant", "tool", "assistant", "user", "assistant"), roles,
          "stored once, though exported twice; the reply that only calls the tool is an empty one");
      assertEquals("py-resp-1", s.get("messages").get(1).get("msgId").asText());
      assertEquals(30, s.get("messages").get(1).get("inference").get("promptTokens").asInt(), "the span's usage");
      assertEquals("Book a table for two, my number is [PHONE].", s.get("messages").get(0).get("content").asText());
      assertFalse(s.toString().contains("900123"), "no raw phone number stored");
      assertEquals("py-resp-3", s.get("messages").get(5).get("msgId").asText());
      JsonNode tools = s.get("toolCalls");
      assertEquals(2, tools.size());
      assertEquals("book_table", tools.get(0).get("toolName").asText());
      assertTrue(tools.get(0).get("success").asBoolean());
      assertEquals("order_taxi", tools.get(1).get("toolName").asText());
      assertFalse(tools.get(1).get("success").asBoolean(), "an ERROR status is a failed tool call");

      List<String> example = ConnectOpenTelemetryExample.rawDocBlock(
          PythonVenv.repoRoot().resolve("docs/connect-opentelemetry.md"), "python");
      Path file = dir.resolve("example.py");
      Files.write(file, example);
      ProcessBuilder pb = new ProcessBuilder(python.toString(), file.toString()).directory(dir.toFile())
          .redirectErrorStream(true).redirectOutput(dir.resolve("example.log").toFile());
      pb.environment().put("OTL_URL", base);
      pb.environment().put("OTL_AUTH_TOKEN", TOKEN);
      Process p = pb.start();
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the example finishes");
      assertEquals(0, p.exitValue(), Files.readString(dir.resolve("example.log"), StandardCharsets.UTF_8));
      JsonNode docSession = http.get("/v1/sessions/session-7").json();
      assertEquals("Hi, I am [EMAIL]", docSession.get("messages").get(0).get("content").asText());
    }
  }
}
