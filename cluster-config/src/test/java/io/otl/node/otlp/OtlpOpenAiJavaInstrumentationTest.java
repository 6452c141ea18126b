package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.http.otlp.OtlpRoutes;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.KeyValue;
import io.opentelemetry.api.common.Value;
import io.opentelemetry.api.logs.Logger;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * OpenTelemetry's own GenAI instrumentation of the official OpenAI Java SDK
 * ({@code io.opentelemetry.instrumentation:opentelemetry-openai-java-1.1:2.31.1-alpha} on
 * {@code com.openai:openai-java:4.0.0}, content capture on). Its chat spans carry no message: the
 * messages leave as OTLP log records ({@code event.name} {@code gen_ai.user.message}, …,
 * {@code gen_ai.choice}), which the node does not read. Such spans were counted "mapped", stored
 * nothing, and neither the log nor the exporter's answer said why the trajectory had no message.
 *
 * <p>The two bodies under {@code otlp-openai-java/} are the OTLP/HTTP protobuf requests the SDK's
 * exporter sent in a real run (a two-turn weather agent calling a tool each turn, against the
 * simulator's model face), captured byte for byte: {@code no-content.pb} with the instrumentation as
 * its README wires it plus the page's conversation-id processor, an {@code invoke_agent} and
 * {@code execute_tool} spans; {@code bridged.pb} the same run with the page's {@code GenAiEventsToSpan}
 * log record processor, which copies those log events onto the chat span.
 */
class OtlpOpenAiJavaInstrumentationTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-openai-java")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static byte[] fixture(String name) throws Exception {
    try (InputStream in = OtlpOpenAiJavaInstrumentationTest.class.getResourceAsStream("/otlp-openai-java/" + name)) {
      return in.readAllBytes();
    }
  }

  private static Http.Response export(String fixture) throws Exception {
    Http.Response r = new Http(node.httpPort()).postBytes("/v1/traces", fixture(fixture), "application/x-protobuf");
    assertEquals(200, r.status(), r.body());
    return r;
  }

  private static JsonNode session(String id) {
    Http.Response r = new Http(node.httpPort()).get("/v1/sessions/" + id);
    assertEquals(200, r.status(), r.body());
    return r.json();
  }

  @Test
  void chatSpansWithoutTheirMessagesAreIgnoredAndSaySo() throws Exception {
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(OtlpRoutes.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    Http.Response answer;
    try {
      answer = export("no-content.pb");
    } finally {
      logger.detachAppender(lines);
    }
    List<String> info = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
        .filter(l -> l.startsWith("OTLP export:")).toList();
    assertEquals(1, info.size(), "the Java exporter reads no answer: the log says it. " + info);
    assertTrue(info.get(0).startsWith("OTLP export: 7 spans, 3 mapped, 4 ignored, 0 refused: span "), info.get(0));
    assertTrue(info.get(0).contains("(chat) carries no messages") && info.get(0).contains("content capture"), info.get(0));
    assertTrue(answer.body().contains("4 spans were ignored: span ") && answer.body().contains("carries no messages"),
        "partial_success.error_message says it too: " + answer.body());
    JsonNode s = session("oai-java-no-content");
    assertEquals(0, s.get("messages").size());
    assertEquals(2, s.get("toolCalls").size(), "the agent's own execute_tool spans are read as before");
    assertEquals(1, s.get("steps").size());
  }

  @Test
  void itsMessagesCopiedOntoTheChatSpanGiveTheTrajectoryOnceInOrder() throws Exception {
    export("bridged.pb");
    JsonNode first = session("oai-java-bridged");
    export("bridged.pb");
    JsonNode s = session("oai-java-bridged");
    assertEquals(first.get("messages"), s.get("messages"), "a re-sent batch stores nothing twice");
    List<String> roles = new ArrayList<>();
    s.get("messages").forEach(m -> roles.add(m.get("role").asText()));
    assertEquals(List.of("system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"),
        roles, "each chat span re-sends the history: stored once each; a reply that only calls a tool is an empty one");
    JsonNode m = s.get("messages");
    assertEquals("You are a weather bot. Reach me at [EMAIL].", m.get(0).get("content").asText());
    assertEquals("", m.get(2).get("content").asText(), "the reply that only calls the tool");
    assertEquals("sunny, 21 C in Paris", m.get(3).get("content").asText(), "a tool message's {id, content} body");
    assertEquals("chatcmpl-4d2d3da6cd9c479fb535daba90fbebce", m.get(4).get("msgId").asText(),
        "msgId = the chat span's gen_ai.response.id");
    assertEquals("[simulated reply from model version 0] Use get_weather for Rome", m.get(8).get("content").asText());
    assertEquals("chatcmpl-c39396e639fa4f44b5869c8c8625bd1a", m.get(8).get("msgId").asText());
    assertFalse(s.toString().contains("ops@example.com"), "no raw PII stored");
    assertEquals("weather-agent", s.get("agentId").asText());
    assertEquals(2, s.get("toolCalls").size());
    assertEquals("otel", s.path("metadata").path("source").asText());
  }

  @Test
  void thePagesProcessorsAreTheOnesThisTestRunsAndFeedASession() throws Exception {
    Path root = io.otl.node.testing.PythonVenv.repoRoot();
    List<String> source = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(root.resolve(
        "cluster-config/src/test/java/io/otl/node/otlp/GenAiEventsToSpan.java"))) {
      if (line.trim().equals("// [example]")) in = true;
      else if (line.trim().equals("// [/example]")) break;
      else if (in && !line.isBlank()) source.add(line.trim());
    }
    assertEquals(source, javaBlockWith(root.resolve("docs/connect-opentelemetry.md"), "class GenAiEventsToSpan"),
        "docs/connect-opentelemetry.md shows the processors this test runs");

    SdkTracerProvider tracing = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "weather-agent"))))
        .addSpanProcessor(new RunFromBaggage())
        .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()))
        .build();
    SdkLoggerProvider logging = SdkLoggerProvider.builder().addLogRecordProcessor(new GenAiEventsToSpan()).build();
    Tracer tracer = tracing.get("io.opentelemetry.openai-java-1.1");
    Logger events = logging.get("io.opentelemetry.openai-java-1.1");
    try (Scope run = Context.current().with(Baggage.builder().put("gen_ai.conversation.id", "oai-java-page").build())
        .makeCurrent()) {
      // what the instrumentation does per call, as captured: a chat span, its messages as log events in its context
      chat(tracer, events, "chatcmpl-1", List.of(
          event("gen_ai.system.message", Map.of("content", "You are a weather bot. Reach me at ops@example.com.")),
          event("gen_ai.user.message", Map.of("content", "Use get_weather for Paris")),
          event("gen_ai.choice", Map.of("finish_reason", "tool_calls", "message", Map.of("tool_calls", List.of(
              Map.of("id", "call_1", "type", "function", "function", Map.of("name", "get_weather",
                  "arguments", "{\"city\":\"Paris\"}"))))))));
      chat(tracer, events, "chatcmpl-2", List.of(
          event("gen_ai.system.message", Map.of("content", "You are a weather bot. Reach me at ops@example.com.")),
          event("gen_ai.user.message", Map.of("content", "Use get_weather for Paris")),
          event("gen_ai.assistant.message", Map.of("tool_calls", List.of(Map.of("id", "call_1", "type", "function",
              "function", Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\"}"))))),
          event("gen_ai.tool.message", Map.of("id", "call_1", "content", "sunny, 21 C")),
          event("gen_ai.choice", Map.of("finish_reason", "stop", "message", Map.of("content", "Sunny in Paris.")))));
    }
    tracing.close();
    logging.close();
    JsonNode s = session("oai-java-page");
    List<String> got = new ArrayList<>();
    s.get("messages").forEach(m -> got.add(m.get("role").asText() + ":" + m.get("content").asText()
        + (m.hasNonNull("msgId") ? " #" + m.get("msgId").asText() : "")));
    assertEquals(List.of("system:You are a weather bot. Reach me at [EMAIL].", "user:Use get_weather for Paris",
        "assistant: #chatcmpl-1", "tool:sunny, 21 C", "assistant:Sunny in Paris. #chatcmpl-2"), got);
    assertEquals("weather-agent", s.get("agentId").asText(), "the resource's service.name names a new session's agent");
  }

  /**
   * The page's wiring as written: no resource (so {@code service.name} is the SDK's {@code
   * unknown_service:java}), the agent named on the {@code invoke_agent} span and in the baggage. The
   * instrumentation's chat spans and the agent's tool spans end, and are exported, before the agent span,
   * in a request of their own whenever the page's {@code BatchSpanProcessor} runs its schedule (5 s) inside
   * the run (here: each span exported on its own, in the order they ended). When the page's processor
   * copied only the conversation id (trial t80), the chat span's request started the session under {@code
   * unknown_service:java}, and the agent span, naming {@code weather-agent}, was refused (409) in every run.
   */
  @Test
  void thePagesWiringNamesTheAgentOnSpansExportedBeforeTheAgentSpan() throws Exception {
    List<SpanData> ended = java.util.Collections.synchronizedList(new ArrayList<>());
    SdkTracerProvider tracing = SdkTracerProvider.builder()
        .addSpanProcessor(new RunFromBaggage())
        .addSpanProcessor(SimpleSpanProcessor.create(new SpanExporter() {
          @Override
          public CompletableResultCode export(java.util.Collection<SpanData> spans) {
            ended.addAll(spans);
            return CompletableResultCode.ofSuccess();
          }

          @Override
          public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
          }

          @Override
          public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
          }
        }))
        .build();
    SdkLoggerProvider logging = SdkLoggerProvider.builder().addLogRecordProcessor(new GenAiEventsToSpan()).build();
    Tracer tracer = tracing.get("weather-agent");
    Logger events = logging.get("io.opentelemetry.openai-java-1.1");
    String sessionId = "oai-java-wiring";
    Span run = tracer.spanBuilder("invoke_agent weather-agent").setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.agent.name", "weather-agent").setAttribute("gen_ai.conversation.id", sessionId).startSpan();
    try (Scope scope = Context.current().with(run).with(Baggage.builder().put("gen_ai.conversation.id", sessionId)
        .put("gen_ai.agent.name", "weather-agent").build()).makeCurrent()) {
      chat(tracer, events, "chatcmpl-w1", List.of(
          event("gen_ai.user.message", Map.of("content", "Use get_weather for Paris")),
          event("gen_ai.choice", Map.of("finish_reason", "stop", "message", Map.of("content", "Sunny in Paris.")))));
      tracer.spanBuilder("execute_tool get_weather").setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.tool.name", "get_weather").setAttribute("gen_ai.tool.call.id", "call_w1")
          .setAttribute("gen_ai.tool.call.arguments", "{\"city\":\"Paris\"}")
          .setAttribute("gen_ai.tool.call.result", "sunny").startSpan().end();
    } finally {
      run.end();
    }
    tracing.close();
    logging.close();
    assertEquals(3, ended.size());
    try (OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()) {
      for (SpanData span : ended) {
        assertTrue(exporter.export(List.of(span)).join(30, java.util.concurrent.TimeUnit.SECONDS).isSuccess());
      }
    }
    JsonNode s = session(sessionId);
    assertEquals("weather-agent", s.get("agentId").asText(), "the agent the run names, not unknown_service:java: " + s);
    assertEquals(1, s.get("steps").size(), "the agent span is stored, not refused as another agent's: " + s);
    assertEquals("invoke_agent weather-agent", s.get("steps").get(0).get("action").asText());
    assertEquals(1, s.get("toolCalls").size(), s.toString());
    assertEquals(2, s.get("messages").size(), s.toString());
  }

  private record Event(String name, Map<String, Object> body) {}

  private static Event event(String name, Map<String, Object> body) {
    return new Event(name, body);
  }

  private static void chat(Tracer tracer, Logger events, String responseId, List<Event> messages) {
    Span chat = tracer.spanBuilder("chat default").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.provider.name", "openai").setAttribute("gen_ai.request.model", "default").startSpan();
    Context inChat = Context.current().with(chat);
    for (Event e : messages) {
      events.logRecordBuilder().setContext(inChat).setAttribute(AttributeKey.stringKey("event.name"), e.name())
          .setAttribute(AttributeKey.stringKey("gen_ai.provider.name"), "openai").setBody(value(e.body())).emit();
    }
    chat.setAttribute("gen_ai.response.id", responseId);
    chat.end();
  }

  @SuppressWarnings("unchecked")
  private static Value<?> value(Object o) {
    if (o instanceof Map<?, ?> m) {
      List<KeyValue> kvs = new ArrayList<>();
      ((Map<String, Object>) m).forEach((k, v) -> kvs.add(KeyValue.of(k, value(v))));
      return Value.of(kvs.toArray(new KeyValue[0]));
    }
    if (o instanceof List<?> l) return Value.of(l.stream().map(OtlpOpenAiJavaInstrumentationTest::value).toList());
    return Value.of(String.valueOf(o));
  }

  /** The trimmed, non-empty lines of the page's first java block that contains {@code marker}. */
  private static List<String> javaBlockWith(Path markdown, String marker) throws java.io.IOException {
    List<String> block = null;
    for (String line : Files.readAllLines(markdown)) {
      String t = line.trim();
      if (block == null && t.equals("```java")) block = new ArrayList<>();
      else if (block != null && t.equals("```")) {
        if (block.stream().anyMatch(l -> l.contains(marker))) return block;
        block = null;
      } else if (block != null && !t.isEmpty()) block.add(t);
    }
    throw new IllegalStateException("no java block with " + marker + " in " + markdown);
  }
}
