package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A tool's arguments and result come as text attributes; the node stores them as JSON when they are JSON.
 * It read them leniently: {@code {"city":"Paris","city":"Lyon"}} was stored as {@code {"city":"Lyon"}} and
 * {@code {"temp":21} {"temp":99}} as {@code {"temp":21}}, the rest lost without a word, where the gateway
 * and the events API keep or refuse such text whole (docs/http-edge.md, strict JSON; trial t131). Text that
 * is not strict JSON is now kept as the text it is.
 */
class OtlpToolArgumentsStrictJsonTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-tool-args-strict")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void argumentsAndResultsThatAreNotStrictJsonAreKeptWholeAsText() throws Exception {
    String conv = "otlp-lenient-args";
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()))
        .build();
    Tracer tracer = provider.get("weather-agent");
    tool(tracer, conv, "call-dup", "{\"city\":\"Paris\",\"city\":\"Lyon\"}", "{\"temp\":21}");
    tool(tracer, conv, "call-trailing", "{\"city\":\"Rome\"}", "{\"temp\":21} {\"temp\":99}");
    provider.close();

    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/" + conv).json();
    Map<String, JsonNode> calls = new HashMap<>();
    session.get("toolCalls").forEach(c -> calls.put(c.get("callId").asText(), c));
    assertEquals(2, calls.size(), session.toString());
    JsonNode dup = calls.get("call-dup");
    assertTrue(dup.get("input").isTextual(), dup.toString());
    assertEquals("{\"city\":\"Paris\",\"city\":\"Lyon\"}", dup.get("input").asText());
    assertEquals(21, dup.get("output").get("temp").asInt(), "strict JSON stays JSON: " + dup);
    JsonNode trailing = calls.get("call-trailing");
    assertEquals("Rome", trailing.get("input").get("city").asText(), trailing.toString());
    assertTrue(trailing.get("output").isTextual(), trailing.toString());
    assertEquals("{\"temp\":21} {\"temp\":99}", trailing.get("output").asText());
  }

  private static void tool(Tracer tracer, String conv, String callId, String arguments, String result) {
    tracer.spanBuilder("execute_tool get_weather").setAttribute("gen_ai.operation.name", "execute_tool")
        .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "weather-agent")
        .setAttribute("gen_ai.tool.name", "get_weather").setAttribute("gen_ai.tool.call.id", callId)
        .setAttribute("gen_ai.tool.call.arguments", arguments).setAttribute("gen_ai.tool.call.result", result)
        .startSpan().end();
  }
}
