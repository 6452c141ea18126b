package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ids this door derives (a message's from a hash of its text, a tool call's from its span id) are hex,
 * and ids are checked for personal data as every id is: 16 hex digits read as a phone number about once in
 * 2000. The message "question 37" has the id {@code otlp:m0:ba16821815823cd2} ("16821815823", a mainland
 * mobile), and the session refused every span of the request, and every later chat span, which re-sends
 * it, so the rest of the conversation (trial t66). Such an id now has its digits as letters.
 */
class OtlpOpaqueIdsTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-opaque-ids")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void idsThatReadAsAPhoneNumberDoNotRefuseTheConversation() throws Exception {
    String conv = "otlp-opaque-ids";
    IdGenerator random = IdGenerator.random();
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setIdGenerator(new IdGenerator() {
          int spans;

          @Override
          public String generateSpanId() {
            // the tool span's id (the third span started) holds a mobile number's digits
            return ++spans == 3 ? "ab13812345678cde" : random.generateSpanId();
          }

          @Override
          public String generateTraceId() {
            return random.generateTraceId();
          }
        })
        .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()))
        .build();
    Tracer tracer = provider.get("quiz-agent");
    String u1 = "{\"role\":\"user\",\"content\":\"question 37\"}";
    String a1 = "{\"role\":\"assistant\",\"content\":\"answer 37\"}";
    Span run = tracer.spanBuilder("invoke_agent quiz").setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.agent.name", "quiz-agent").setAttribute("gen_ai.conversation.id", conv).startSpan();
    try (Scope scope = run.makeCurrent()) {
      chat(tracer, conv, "[" + u1 + "]", "[" + a1 + "]");
      // named on every span, as the docs ask: SimpleSpanProcessor sends each span in a request of its own, and
      // this one, reaching the node first, would start the session under service.name
      tracer.spanBuilder("execute_tool lookup").setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "quiz-agent")
          .setAttribute("gen_ai.tool.name", "lookup")
          .setAttribute("gen_ai.tool.call.id", "call_1").setAttribute("gen_ai.tool.call.result", "{\"ok\":true}")
          .startSpan().end();
      chat(tracer, conv, "[" + u1 + "," + a1 + ",{\"role\":\"user\",\"content\":\"next\"}]",
          "[{\"role\":\"assistant\",\"content\":\"done\"}]");
    } finally {
      run.end();
    }
    provider.close();

    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/" + conv).json();
    List<String> messages = new ArrayList<>();
    session.get("messages").forEach(m -> messages.add(m.get("role").asText() + ": " + m.get("content").asText()));
    assertEquals(List.of("user: question 37", "assistant: answer 37", "user: next", "assistant: done"), messages,
        session.toString());
    assertEquals(1, session.get("toolCalls").size(), session.toString());
    assertEquals(1, session.get("steps").size(), session.toString());
  }

  private static void chat(Tracer tracer, String conv, String input, String output) {
    tracer.spanBuilder("chat quiz").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "quiz-agent")
        .setAttribute("gen_ai.input.messages", input).setAttribute("gen_ai.output.messages", output)
        .startSpan().end();
  }
}
