package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.http.otlp.OtlpRoutes;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What a chat span says of its answer beyond the text (trial t38, the Java SDK's exporter): the model call's
 * figures ({@code gen_ai.usage.*}, {@code gen_ai.response.model}, {@code gen_ai.response.finish_reasons})
 * were not stored, an answer that only called a tool was not stored (feedback naming its
 * {@code gen_ai.response.id} was a 404 forever), and messages of a role the node does not know were dropped
 * without a word. docs/connect-opentelemetry.md, "What becomes what".
 */
class OtlpAnswerDetailsTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-answer-details")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void theAnswersModelCallIsStoredAsTheGatewayStoresItAndOnlyOnce() {
    List<SpanData> spans = spans(tracer -> {
      chat(tracer, "otlp-usage", "[{\"role\":\"user\",\"content\":\"How warm is Paris?\"}]",
          "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"21 degrees.\"}]}]", "resp-u1", span -> span
              .setAttribute("gen_ai.request.model", "qwen2.5-7b-instruct")
              .setAttribute("gen_ai.response.model", "qwen2.5-7b-instruct-0301")
              .setAttribute("gen_ai.usage.input_tokens", 42L)
              .setAttribute("gen_ai.usage.output_tokens", 7L)
              .setAttribute(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons"), List.of("stop")));
      // every figure of the wrong type or out of range: left out, the answer stored all the same
      chat(tracer, "otlp-usage-wrong", "[{\"role\":\"user\",\"content\":\"How warm is Rome?\"}]",
          "[{\"role\":\"assistant\",\"content\":\"23 degrees.\"}]", "resp-w1", span -> span
              .setAttribute("gen_ai.response.model", 3L)
              .setAttribute("gen_ai.usage.input_tokens", "42")
              .setAttribute("gen_ai.usage.output_tokens", 7.0)
              .setAttribute("gen_ai.response.finish_reasons", "stop"));
      chat(tracer, "otlp-usage-wrong", "[{\"role\":\"user\",\"content\":\"How warm is Rome?\"},"
              + "{\"role\":\"assistant\",\"content\":\"23 degrees.\"},{\"role\":\"user\",\"content\":\"And Oslo?\"}]",
          "[{\"role\":\"assistant\",\"content\":\"4 degrees.\"}]", "resp-w2", span -> span
              .setAttribute("gen_ai.usage.input_tokens", -1L)
              .setAttribute("gen_ai.usage.output_tokens", 1L << 40)
              .setAttribute(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons"), List.of("length")));
    });
    try (OtlpHttpSpanExporter exporter = exporter()) {
      export(exporter, spans);
      JsonNode first = session("otlp-usage");
      export(exporter, spans); // the exporter's retry of the same spans
      assertEquals(first.get("messages"), session("otlp-usage").get("messages"), "a retried export stores nothing twice");
    }
    JsonNode answer = session("otlp-usage").get("messages").get(1);
    assertEquals("resp-u1", answer.get("msgId").asText());
    JsonNode call = answer.get("inference");
    assertEquals("qwen2.5-7b-instruct-0301", call.get("servedModel").asText(), "the response's model: " + answer);
    assertEquals(42, call.get("promptTokens").asInt());
    assertEquals(7, call.get("completionTokens").asInt());
    assertEquals("stop", call.get("finishReason").asText());
    assertTrue(call.get("modelVersion").isNull(), "no version is known to this door");

    JsonNode wrong = session("otlp-usage-wrong");
    List<String> texts = new ArrayList<>();
    wrong.get("messages").forEach(m -> texts.add(m.get("role").asText() + ": " + m.get("content").asText()));
    assertEquals(List.of("user: How warm is Rome?", "assistant: 23 degrees.", "user: And Oslo?", "assistant: 4 degrees."),
        texts);
    assertFalse(wrong.get("messages").get(1).has("inference"), "nothing of the wrong type stored: " + wrong);
    JsonNode oslo = wrong.get("messages").get(3).get("inference");
    assertTrue(oslo.get("promptTokens").isNull() && oslo.get("completionTokens").isNull(),
        "counts out of range are left out: " + oslo);
    assertEquals("length", oslo.get("finishReason").asText());
  }

  @Test
  void anAnswerThatOnlyCallsAToolIsStoredSoFeedbackCanNameIt() {
    List<SpanData> spans = GenAiAgent.run("otlp-tool-only");
    try (OtlpHttpSpanExporter exporter = exporter()) {
      export(exporter, spans);
      JsonNode first = session("otlp-tool-only");
      export(exporter, spans);
      assertEquals(first.get("messages"), session("otlp-tool-only").get("messages"), "a re-sent batch stores nothing twice");
    }
    JsonNode s = session("otlp-tool-only");
    List<String> got = new ArrayList<>();
    s.get("messages").forEach(m -> got.add(m.get("role").asText() + ":" + m.get("content").asText()
        + (m.hasNonNull("msgId") ? " #" + m.get("msgId").asText() : "")));
    assertEquals(List.of("user:What is the weather in Paris? My phone is [PHONE].", "assistant: #resp-1",
        "tool:{\"celsius\":21}", "assistant:" + GenAiAgent.ANSWER_1 + " #resp-2",
        "user:Thanks! Send it to [EMAIL] please.", "assistant:" + GenAiAgent.ANSWER_2 + " #resp-3"), got,
        "the tool-call-only answer once, empty, under its response id; turn two's copy of it is the same message");
    assertEquals(7, s.get("messages").get(1).get("inference").get("completionTokens").asInt(), s.toString());

    Http.Response feedback = new Http(node.httpPort()).post("/v1/sessions/otlp-tool-only/feedback",
        "{\"kind\":\"THUMBS_DOWN\",\"msgId\":\"resp-1\"}");
    assertEquals(202, feedback.status(), feedback.body());
    assertEquals("resp-1", session("otlp-tool-only").get("feedback").get(0).get("msgId").asText());
  }

  @Test
  void messagesOfARoleTheNodeDoesNotKnowAreCountedAndNamedNotStored() {
    List<SpanData> spans;
    Logger logger = (Logger) LoggerFactory.getLogger(OtlpRoutes.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    try {
      spans = spans(tracer -> {
        chat(tracer, "otlp-roles", "[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"model\",\"content\":\"Hello\"},"
            + "{\"content\":\"no role, call me at +44 20 7946 0958\"},{\"role\":\"user\",\"content\":\"Bye\"}]",
            "[{\"role\":\"assistant\",\"content\":\"Bye!\"}]", "resp-r1", span -> { });
        // a span whose every message has a role the node does not know: ignored, and said so
        chat(tracer, "otlp-roles", "[{\"role\":\"bot@example.com\",\"content\":\"x\"}]", "[]", "resp-r2", span -> { });
      });
      try (OtlpHttpSpanExporter exporter = exporter()) {
        export(exporter, spans);
      }
      List<String> info = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
          .filter(l -> l.startsWith("OTLP export:")).toList();
      assertEquals(1, info.size(), info.toString());
      String line = info.get(0);
      assertTrue(line.startsWith("OTLP export: 2 spans, 1 mapped, 1 ignored, 0 refused, 3 messages ignored: "), line);
      assertTrue(line.contains("has 2 messages with a role the node does not know (role \"model\")"), line);
      assertTrue(line.contains("has only messages with a role the node does not know"), line);
      // the whole number, not a piece of it: a random 16-hex span id can hold "7946"
      assertFalse(line.contains("7946 0958") || line.contains("example.com") || line.contains("Hello"), "no text: " + line);
    } finally {
      logger.detachAppender(lines);
    }
    List<String> roles = new ArrayList<>();
    session("otlp-roles").get("messages").forEach(m -> roles.add(m.get("role").asText() + ":" + m.get("content").asText()));
    assertEquals(List.of("user:Hi", "user:Bye", "assistant:Bye!"), roles);
    String metrics = new Http(node.httpPort()).get("/metrics").body();
    assertTrue(metrics.contains("otl_otlp_messages_ignored_total 3"), metrics);

    // partial_success, which the Java exporter does not read, says it too (the same spans, as the SDK writes JSON)
    java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
    try {
      TraceRequestMarshaler.create(spans).writeJsonTo(body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    Http.Response r = new Http(node.httpPort()).postBytes("/v1/traces", body.toByteArray(), "application/json");
    assertEquals(200, r.status(), r.body());
    JsonNode partial = r.json().get("partialSuccess");
    assertEquals("0", partial.get("rejectedSpans").asText());
    String message = partial.get("errorMessage").asText();
    assertTrue(message.startsWith("1 spans were ignored: span ") && message.contains("; 3 messages were ignored: span "),
        message);
  }

  private static List<SpanData> spans(Consumer<Tracer> agent) {
    GenAiAgent.Collect collect = new GenAiAgent.Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect)).build();
    agent.accept(provider.get("my-agent"));
    provider.close();
    return List.copyOf(collect.spans);
  }

  private static void chat(Tracer tracer, String conv, String input, String output, String responseId,
      Consumer<Span> more) {
    Span span = tracer.spanBuilder("chat qwen2.5-7b-instruct").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", "my-agent")
        .setAttribute("gen_ai.response.id", responseId)
        .setAttribute("gen_ai.input.messages", input).setAttribute("gen_ai.output.messages", output).startSpan();
    more.accept(span);
    span.end();
  }

  private static OtlpHttpSpanExporter exporter() {
    return OtlpHttpSpanExporter.builder().setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build();
  }

  private static void export(OtlpHttpSpanExporter exporter, List<SpanData> spans) {
    CompletableResultCode result = exporter.export(spans).join(30, TimeUnit.SECONDS);
    assertTrue(result.isSuccess(), "the SDK exporter reports success");
  }

  private static JsonNode session(String id) {
    Http.Response r = new Http(node.httpPort()).get("/v1/sessions/" + id);
    assertEquals(200, r.status(), r.body());
    return r.json();
  }
}
