package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A tool result longer than {@code data-collector.max-text-length} (a fetched web page). Each chat span
 * re-sends the whole history, so the page was in every later chat span of the session: refused, it took
 * every later answer and question with it (the spans were refused in {@code partial_success}, which the
 * Java SDK's exporter does not read). The text is now stored cut and marked, as the gateway stores it.
 */
class OtlpLongTextTest {
  private static final int LIMIT = 2000;
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.data-collector.max-text-length", LIMIT))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-long-text")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aLongToolResultIsStoredCutAndTheLaterTurnsAreKept() throws Exception {
    String conv = "otlp-long-page";
    String page = "Contact webmaster@example.org. " + "lorem ipsum ".repeat(600); // over the limit
    String result = "{\"page\":\"" + page + "\"}";
    String u1 = "{\"role\":\"user\",\"content\":\"Summarise example.org\"}";
    String a1 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"fetch\","
        + "\"arguments\":{\"url\":\"http://example.org\"}}]}";
    String tool = "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"c1\",\"response\":" + result + "}]}";
    String a2 = "{\"role\":\"assistant\",\"content\":\"A page of lorem ipsum.\"}";
    String u3 = "{\"role\":\"user\",\"content\":\"And its contact?\"}";
    String a3 = "{\"role\":\"assistant\",\"content\":\"The webmaster.\"}";

    SdkTracerProvider provider = SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()))
        .build();
    Tracer tracer = provider.get("web-agent");
    Span run = tracer.spanBuilder("invoke_agent web-agent").setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.agent.name", "web-agent").setAttribute("gen_ai.conversation.id", conv).startSpan();
    try (Scope s = run.makeCurrent()) {
      chat(tracer, conv, "[" + u1 + "]", "[" + a1 + "]");
      // named on every span, as the docs ask: SimpleSpanProcessor sends each span in a request of its own, and
      // this one, reaching the node first, would start the session under service.name
      tracer.spanBuilder("execute_tool fetch").setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "web-agent")
          .setAttribute("gen_ai.tool.name", "fetch")
          .setAttribute("gen_ai.tool.call.id", "c1").setAttribute("gen_ai.tool.call.arguments", "{\"url\":\"http://example.org\"}")
          .setAttribute("gen_ai.tool.call.result", result).startSpan().end();
      chat(tracer, conv, "[" + String.join(",", u1, a1, tool) + "]", "[" + a2 + "]");
      chat(tracer, conv, "[" + String.join(",", u1, a1, tool, a2, u3) + "]", "[" + a3 + "]");
      // the exporter's retry of the last turn
      chat(tracer, conv, "[" + String.join(",", u1, a1, tool, a2, u3) + "]", "[" + a3 + "]");
    } finally {
      run.end();
    }
    provider.close();

    Http http = new Http(node.httpPort());
    JsonNode session = http.get("/v1/sessions/" + conv).json();
    List<String> roles = new ArrayList<>();
    session.get("messages").forEach(m -> roles.add(m.get("role").asText()));
    // the reply that only calls the tool is an empty assistant message (OtlpAnswerDetailsTest)
    assertEquals(List.of("user", "assistant", "tool", "assistant", "user", "assistant"), roles, session.toString());
    assertEquals("The webmaster.", session.get("messages").get(5).get("content").asText());
    assertEquals("web-agent", session.get("agentId").asText());

    JsonNode toolMessage = session.get("messages").get(2);
    String stored = toolMessage.get("content").asText();
    assertEquals(LIMIT, stored.length());
    assertTrue(stored.startsWith("{\"page\":\"Contact [EMAIL]. lorem ipsum"), stored.substring(0, 60));
    assertEquals(result.length(), toolMessage.path("truncated").path("content").asInt(), toolMessage.toString());

    JsonNode call = session.get("toolCalls").get(0);
    assertTrue(call.get("output").isTextual(), "a cut output is stored as the start of its JSON text");
    assertTrue(call.get("output").asText().startsWith("{\"page\":\"Contact [EMAIL]."), call.toString());
    assertTrue(call.path("truncated").path("output").asInt() > LIMIT, call.toString());
    assertEquals("http://example.org", call.get("input").get("url").asText());

    String metrics = http.get("/metrics").body();
    assertTrue(metrics.contains("otl_otlp_spans_total{outcome=\"refused\"} 0"), "no span refused");
    assertFalse(http.get("/v1/sessions/" + conv).body().contains("webmaster@"));
  }

  private static void chat(Tracer tracer, String conv, String input, String output) {
    tracer.spanBuilder("chat qwen").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "web-agent")
        .setAttribute("gen_ai.input.messages", input).setAttribute("gen_ai.output.messages", output)
        .startSpan().end();
  }
}
