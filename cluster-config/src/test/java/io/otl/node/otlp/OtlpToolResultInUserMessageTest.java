package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Gemini's and Anthropic's APIs answer a tool call in a user message, and their OpenTelemetry
 * instrumentations write it so: {@code {"role":"user","parts":[{"type":"tool_call_response",…}]}}. The
 * tool's JSON was stored as a user message (something the user said, trained on as such); it is a tool
 * message, as docs/connect-opentelemetry.md says of every {@code tool_call_response} part.
 */
class OtlpToolResultInUserMessageTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-tool-in-user")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aToolCallResponseInAUserMessageIsAToolMessage() throws Exception {
    String conv = "otlp-gemini-tool";
    String u1 = "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Weather in Paris?\"}]}";
    String a1 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"get_weather_0\",\"name\":\"get_weather\","
        + "\"arguments\":{\"city\":\"Paris\"}}]}";
    // Anthropic's shape: the tool result and the user's next words in one user message
    String u2 = "{\"role\":\"user\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"get_weather_0\","
        + "\"response\":{\"temp\":21}},{\"type\":\"text\",\"content\":\"In Celsius please\"}]}";
    String a2 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"21 degrees Celsius.\"}],"
        + "\"finish_reason\":\"stop\"}";

    SdkTracerProvider provider = SdkTracerProvider.builder()
        .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()).build())
        .build();
    Tracer tracer = provider.get("gemini-agent");
    chat(tracer, conv, "[" + u1 + "]", "[" + a1 + "]");
    chat(tracer, conv, "[" + String.join(",", u1, a1, u2) + "]", "[" + a2 + "]");
    provider.close();

    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/" + conv).json();
    List<String> messages = new ArrayList<>();
    session.get("messages").forEach(m -> messages.add(m.get("role").asText() + ": " + m.get("content").asText()));
    assertEquals(List.of("user: Weather in Paris?", "assistant: ", "tool: {\"temp\":21}", "user: In Celsius please",
        "assistant: 21 degrees Celsius."), messages, session.toString());
  }

  /**
   * The conventions' example of {@code gen_ai.input.messages} (and instrumentations written from it) names
   * the tool's answer {@code result}, not {@code response} as the JSON schema does: the tool message was
   * dropped without a word, leaving a trajectory whose tool call is never answered (trial t66).
   */
  @Test
  void aToolCallResponseUnderResultIsAToolMessage() throws Exception {
    String conv = "otlp-tool-result-field";
    String u1 = "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Weather in Paris?\"}]}";
    String a1 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"get_weather\","
        + "\"arguments\":{\"location\":\"Paris\"}}]}";
    String t1 = "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\","
        + "\"result\":\"rainy, 57\u00b0F\"}]}";
    String a2 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"Rainy, 57\u00b0F.\"}],"
        + "\"finish_reason\":\"stop\"}";

    SdkTracerProvider provider = SdkTracerProvider.builder()
        .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()).build())
        .build();
    Tracer tracer = provider.get("weather-agent");
    chat(tracer, conv, "[" + u1 + "]", "[" + a1 + "]");
    chat(tracer, conv, "[" + String.join(",", u1, a1, t1) + "]", "[" + a2 + "]");
    provider.close();

    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/" + conv).json();
    List<String> messages = new ArrayList<>();
    session.get("messages").forEach(m -> messages.add(m.get("role").asText() + ": " + m.get("content").asText()));
    assertEquals(List.of("user: Weather in Paris?", "assistant: ", "tool: rainy, 57\u00b0F", "assistant: Rainy, 57\u00b0F."),
        messages, session.toString());
  }

  private static void chat(Tracer tracer, String conv, String input, String output) {
    tracer.spanBuilder("generate_content gemini-2.5-flash").setAttribute("gen_ai.operation.name", "generate_content")
        .setAttribute("gen_ai.provider.name", "gcp.gen_ai").setAttribute("gen_ai.conversation.id", conv)
        .setAttribute("gen_ai.agent.name", "gemini-agent")
        .setAttribute("gen_ai.input.messages", input).setAttribute("gen_ai.output.messages", output)
        .startSpan().end();
  }
}
