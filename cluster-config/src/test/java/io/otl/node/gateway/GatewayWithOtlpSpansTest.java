package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.otlp.GenAiAgent;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/connect-opentelemetry.md, "With the gateway too" (trial t48): an agent whose model's base URL is the
 * node's gateway and whose OpenTelemetry spans name the same session (X-Session-Id = gen_ai.conversation.id)
 * had every message and tool call stored twice, once per door: a two-turn run with a tool call each turn held
 * 14 messages and 4 tool calls. The spans, exported by the real SDK exporter seconds after the gateway
 * recorded each turn, are now duplicates of what the gateway stored.
 */
class GatewayWithOtlpSpansTest {
  private static final String AGENT = "weather-bot";
  private static final String RESULT = "{\"celsius\": 21}";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-with-otlp", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static ObjectNode message(String role, String content) {
    return JSON.createObjectNode().put("role", role).put("content", content);
  }

  /** One call through the gateway, and the chat span an instrumented OpenAI client writes for it. */
  private static JsonNode call(Tracer tracer, String session, ArrayNode messages) {
    ObjectNode body = JSON.createObjectNode().put("model", "default");
    body.set("messages", messages.deepCopy());
    ObjectNode fn = body.putArray("tools").addObject().put("type", "function").putObject("function")
        .put("name", "get_weather");
    fn.putObject("parameters").put("type", "object").putObject("properties").putObject("city").put("type", "string");
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions",
        body.toString().getBytes(StandardCharsets.UTF_8), "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    JsonNode answer = r.json().path("choices").path(0).path("message");
    JsonNode usage = r.json().path("usage");
    Span chat = tracer.spanBuilder("chat default").setSpanKind(SpanKind.CLIENT)
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", session)
        .setAttribute("gen_ai.agent.name", AGENT)
        .setAttribute("gen_ai.request.model", "default")
        .setAttribute("gen_ai.response.id", r.json().path("id").asText())
        .setAttribute("gen_ai.usage.input_tokens", usage.path("prompt_tokens").asLong())
        .setAttribute("gen_ai.usage.output_tokens", usage.path("completion_tokens").asLong())
        .setAttribute("gen_ai.input.messages", messages.toString())
        .setAttribute("gen_ai.output.messages", JSON.createArrayNode().add(answer).toString())
        .startSpan();
    chat.end();
    messages.add(answer);
    return answer;
  }

  /** A turn: the model calls the tool, the agent runs it (an execute_tool span) and sends its result back. */
  private static void turn(Tracer tracer, String session, ArrayNode messages, String question) {
    messages.add(message("user", question));
    JsonNode toolCall = call(tracer, session, messages).path("tool_calls").path(0);
    assertTrue(toolCall.has("id"), "the model called the tool: " + messages);
    tracer.spanBuilder("execute_tool get_weather").setAttribute("gen_ai.operation.name", "execute_tool")
        .setAttribute("gen_ai.conversation.id", session).setAttribute("gen_ai.agent.name", AGENT)
        .setAttribute("gen_ai.tool.name", "get_weather")
        .setAttribute("gen_ai.tool.call.id", toolCall.path("id").asText())
        .setAttribute("gen_ai.tool.call.arguments", toolCall.path("function").path("arguments").asText())
        .setAttribute("gen_ai.tool.call.result", RESULT).startSpan().end();
    messages.add(message("tool", RESULT).put("tool_call_id", toolCall.path("id").asText()));
    call(tracer, session, messages);
  }

  private static JsonNode stored(String session, int messages) throws Exception {
    Await.until(messages + " messages of " + session + " stored", Duration.ofSeconds(15), () -> {
      Http.Response r = gateway.api.get("/v1/sessions/" + session);
      return r.status() == 200 ? r.json().path("messages").size() : 0;
    }, n -> n >= messages);
    return gateway.api.get("/v1/sessions/" + session).json();
  }

  private static void export(OtlpHttpSpanExporter exporter, List<SpanData> spans) {
    assertTrue(exporter.export(spans).join(30, TimeUnit.SECONDS).isSuccess());
  }

  @Test
  void theGatewayAndTheSpansOnOneSessionStoreEachMessageAndToolCallOnce() throws Exception {
    String session = "gw-otel-" + java.util.UUID.randomUUID();
    GenAiAgent.Collect collect = new GenAiAgent.Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    Tracer tracer = provider.get("weather-agent");
    ArrayNode messages = JSON.createArrayNode().add(message("system", "You are a weather agent."));
    try (OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint("http://127.0.0.1:" + gateway.node.httpPort() + "/v1/traces").build()) {
      turn(tracer, session, messages, "Use the tool: the weather in Paris?");
      stored(session, 4); // the gateway records right after each answer; the spans come seconds later
      export(exporter, collect.take());
      turn(tracer, session, messages, "Use the tool again: and in Oslo?");
      stored(session, 7);
      export(exporter, collect.take());
      export(exporter, List.of()); // a no-op
    } finally {
      provider.close();
    }
    Thread.sleep(300); // nothing more arrives (a duplicate would)
    JsonNode s = gateway.api.get("/v1/sessions/" + session).json();
    List<String> got = new ArrayList<>();
    s.path("messages").forEach(m -> got.add(m.path("role").asText() + ":" + m.path("content").asText()));
    assertEquals(7, got.size(), "each message once: " + got);
    assertEquals(2, s.path("toolCalls").size(), "each tool call once: " + s.path("toolCalls"));
    Set<String> msgIds = new HashSet<>();
    for (JsonNode m : s.path("messages")) {
      if (m.path("role").asText().equals("assistant")) {
        assertTrue(msgIds.add(m.path("msgId").asText()), "answer stored twice: " + s.path("messages"));
        assertEquals("v1", m.path("inference").path("modelVersion").asText(), "the gateway's figures: " + m);
      }
    }
    assertEquals(4, msgIds.size(), s.path("messages").toString());
    assertEquals("You are a weather agent.", s.path("messages").path(0).path("content").asText());
    assertEquals("otel", s.path("metadata").path("source").asText(), "the spans reached the session: " + s);
    assertEquals("otel", s.path("metadata").path("source").asText(), "the spans' start is still taken: " + s);
  }
}
