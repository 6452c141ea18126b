package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An OpenTelemetry session in the SFT export (a new-user trial): the chat span after a tool call
 * re-sends the tool's result as a {@code tool} message, and the {@code execute_tool} span records
 * the same result as the call's output. The export rendered it twice; it must appear once, as the
 * tool message answering the call. Its {@code tools} are the ones the chat spans offered
 * ({@code gen_ai.tool.definitions}).
 */
class OtlpSftExportTest {
  private static final String TOKEN = "otlp-sft-token";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-sft")), true)));
    http = new Http(node.httpPort()).withToken(TOKEN);
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aToolResultIsRenderedOnceInTheSftLine() throws Exception {
    try (OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces")
        .addHeader("Authorization", "Bearer " + TOKEN).build()) {
      exporter.export(GenAiAgent.run("otlp-sft-1")).join(30, TimeUnit.SECONDS);
    }
    Http.Response done = http.post("/v1/sessions/otlp-sft-1/events", "{\"agentId\":\"weather-agent\",\"events\":"
        + "[{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}");
    assertEquals(202, done.status(), done.body());
    String[] lines = new String[1];
    FeedTestSupport.await("the session in the SFT export", Duration.ofSeconds(60), () -> {
      Http.Response r = http.post("/v1/exports/weather-agent?format=sft", "");
      String[] all = r.body().split("\n");
      lines[0] = r.status() == 200 && all.length > 1 ? all[1] : null;
      return lines[0] != null;
    });
    JsonNode line = JSON.readTree(lines[0]);
    List<String> roles = new ArrayList<>();
    int results = 0;
    for (JsonNode m : line.get("messages")) {
      roles.add(m.get("role").asText());
      if (m.path("content").asText().contains("celsius")) results++;
    }
    assertEquals(1, results, "the tool's result once: " + line);
    assertEquals(List.of("user", "assistant", "tool", "assistant", "user", "assistant"), roles, line.toString());
    JsonNode tool = line.get("messages").get(2);
    assertEquals("call-1", tool.get("tool_call_id").asText(), line.toString());
    assertEquals("{\"celsius\":21}", tool.get("content").asText(), line.toString());
    assertEquals("call-1", line.get("messages").get(1).get("tool_calls").get(0).get("id").asText());
    // The chat spans' gen_ai.tool.definitions, not schemas derived from the one call: its description and
    // required field, and the tool offered but never called (the line had only a derived get_weather).
    JsonNode tools = line.get("tools");
    assertEquals(2, tools.size(), tools.toString());
    assertEquals("get_weather", tools.get(0).get("function").get("name").asText(), tools.toString());
    assertEquals("Current weather of a city", tools.get(0).get("function").get("description").asText());
    assertEquals("city", tools.get(0).get("function").get("parameters").get("required").get(0).asText());
    assertEquals("get_time", tools.get(1).get("function").get("name").asText(), tools.toString());
  }
}
