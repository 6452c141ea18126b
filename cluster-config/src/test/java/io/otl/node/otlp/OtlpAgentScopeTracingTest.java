package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * AgentScope Python's own tracing, its spans as {@code agentscope/tracing/_extractor.py} writes them sent over
 * OTLP/HTTP: the user's message only on the {@code invoke_agent} span
 * ({@code gen_ai.input.messages}, parts with a {@code name}), the agent's reply in its {@code gen_ai.output.messages},
 * chat spans with only their answer and the formatter's message list in {@code agentscope.function.input}. The
 * session held the answers and tool calls, no system prompt and no user message, and the SFT line had neither.
 */
class OtlpAgentScopeTracingTest {
  private static final String TOKEN = "otlp-agentscope-token";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-agentscope")), true)));
    http = new Http(node.httpPort()).withToken(TOKEN);
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static final String OPENAI_PROMPT_1 = "[{\"role\":\"system\",\"content\":\"You are Friday.\"},"
      + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is 2+3?\"}]}]";
  private static final String OPENAI_PROMPT_2 = "[{\"role\":\"system\",\"content\":\"You are Friday.\"},"
      + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is 2+3?\"}]},"
      + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call-1\",\"type\":\"function\","
      + "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]},"
      + "{\"role\":\"tool\",\"tool_call_id\":\"call-1\",\"name\":\"add\",\"content\":[{\"type\":\"text\",\"text\":\"5\"}]}]";
  private static final String DASHSCOPE_PROMPT = "[{\"role\":\"system\",\"content\":[{\"text\":\"You are Friday.\"}]},"
      + "{\"role\":\"user\",\"content\":[{\"text\":\"What is 2+3?\"}]}]";

  /**
   * The OpenAI formatter: the chat spans' prompt gives the system prompt and the history; the agent span, exported
   * after its chat spans (it ends last), adds nothing they hold. The SFT line has the system prompt and the user.
   */
  @Test
  void openAiFormatterSessionsHoldTheSystemPromptAndTheUsersMessage() throws Exception {
    String conv = "as-run-openai";
    List<List<SpanData>> requests = turn(conv, OPENAI_PROMPT_1, OPENAI_PROMPT_2);
    for (List<SpanData> request : requests) assertEquals(0, rejected(post(request)));
    List<String> expected = List.of("system: You are Friday.", "user: What is 2+3?", "assistant: ", "tool: 5",
        "assistant: 2+3 is 5.");
    assertEquals(expected, messages(conv));
    for (List<SpanData> request : requests) assertEquals(0, rejected(post(request)));
    assertEquals(expected, messages(conv), "resent: nothing stored twice");

    Http.Response done = http.post("/v1/sessions/" + conv + "/events", "{\"agentId\":\"friday\",\"events\":"
        + "[{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}");
    assertEquals(202, done.status(), done.body());
    String[] lines = new String[1];
    FeedTestSupport.await("the session in the SFT export", Duration.ofSeconds(60), () -> {
      Http.Response r = http.post("/v1/exports/friday?format=sft", "");
      String[] all = r.body().split("\n");
      lines[0] = r.status() == 200 && all.length > 1 ? all[1] : null;
      return lines[0] != null;
    });
    JsonNode line = JSON.readTree(lines[0]);
    List<String> roles = new ArrayList<>();
    line.get("messages").forEach(m -> roles.add(m.get("role").asText()));
    assertEquals(List.of("system", "user", "assistant", "tool", "assistant"), roles, line.toString());
    assertEquals("You are Friday.", line.get("messages").get(0).get("content").asText());
    assertEquals("What is 2+3?", line.get("messages").get(1).get("content").asText());
  }

  /**
   * Another provider's formatter (DashScope's content blocks): the prompt is not read, the user's message and the
   * reply come from the agent span, the reply once (the last chat span's answer is that reply).
   */
  @Test
  void otherFormattersSessionsHoldTheUsersMessageFromTheAgentSpan() throws Exception {
    String conv = "as-run-dashscope";
    List<SpanData> all = new ArrayList<>();
    turn(conv, DASHSCOPE_PROMPT, DASHSCOPE_PROMPT).forEach(all::addAll);
    assertEquals(0, rejected(post(all)));
    assertEquals(0, rejected(post(all)));
    assertEquals(List.of("user: What is 2+3?", "assistant: ", "assistant: 2+3 is 5."), messages(conv));
  }

  /**
   * One turn: the chat spans and the tool span in one request (they end first), the agent span in the next. The
   * resource names the agent as the agent span does: the first request, without it, starts the session.
   */
  private static List<List<SpanData>> turn(String conv, String prompt1, String prompt2) {
    GenAiAgent.Collect exported = new GenAiAgent.Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), "friday"))))
        .addSpanProcessor(SimpleSpanProcessor.create(exported)).build();
    Tracer tracer = provider.get("agentscope");
    Span agent = tracer.spanBuilder("invoke_agent Friday")
        .setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.conversation.id", conv)
        .setAttribute("gen_ai.agent.id", "friday")
        .setAttribute("gen_ai.agent.name", "Friday")
        .setAttribute("gen_ai.agent.description", "A ReAct agent.")
        .setAttribute("gen_ai.input.messages", "[{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"content\": "
            + "\"What is 2+3?\"}], \"name\": \"user\", \"finish_reason\": \"stop\"}]")
        .setAttribute("agentscope.function.input", "{\"args\": [{\"id\": \"m1\", \"name\": \"user\", \"content\": "
            + "\"What is 2+3?\", \"role\": \"user\", \"metadata\": null}], \"kwargs\": {}}")
        .startSpan();
    try (Scope s = agent.makeCurrent()) {
      chat(tracer, conv, prompt1, "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"call-1\", "
          + "\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}], \"finish_reason\": \"stop\"}]");
      tracer.spanBuilder("execute_tool add").setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.tool.call.id", "call-1")
          .setAttribute("gen_ai.tool.name", "add").setAttribute("gen_ai.tool.call.arguments", "{\"a\": 2, \"b\": 3}")
          .setAttribute("gen_ai.tool.call.result", "5").startSpan().end();
      chat(tracer, conv, prompt2, "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": "
          + "\"2+3 is 5.\"}], \"finish_reason\": \"stop\"}]");
    }
    List<SpanData> children = exported.take();
    agent.setAttribute("gen_ai.output.messages", "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", "
        + "\"content\": \"2+3 is 5.\"}], \"name\": \"Friday\", \"finish_reason\": \"stop\"}]");
    agent.end();
    List<List<SpanData>> requests = List.of(children, exported.take());
    provider.close();
    return requests;
  }

  private static void chat(Tracer tracer, String conv, String prompt, String output) {
    tracer.spanBuilder("chat qwen-max").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv)
        .setAttribute("gen_ai.provider.name", "dashscope").setAttribute("gen_ai.request.model", "qwen-max")
        .setAttribute("agentscope.function.input", "{\"args\": [" + prompt + "], \"kwargs\": {\"tools\": [], "
            + "\"tool_choice\": \"auto\"}}")
        .setAttribute("gen_ai.response.id", "resp-" + Long.toString(System.nanoTime(), 36))
        .setAttribute("gen_ai.output.messages", output)
        .startSpan().end();
  }

  private static List<String> messages(String conv) throws Exception {
    JsonNode session = http.get("/v1/sessions/" + conv).json();
    List<String> out = new ArrayList<>();
    session.get("messages").forEach(m -> out.add(m.get("role").asText() + ": " + m.get("content").asText()));
    return out;
  }

  private static HttpResponse<String> post(List<SpanData> spans) throws Exception {
    assertTrue(!spans.isEmpty());
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    TraceRequestMarshaler.create(spans).writeJsonTo(body);
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/traces"))
            .header("Content-Type", "application/json").header("Authorization", "Bearer " + TOKEN)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r;
  }

  private static long rejected(HttpResponse<String> r) throws Exception {
    JsonNode partial = JSON.readTree(r.body()).path("partialSuccess");
    assertTrue(partial.isMissingNode() || partial.isObject(), r.body());
    return partial.path("rejectedSpans").asLong(0);
  }
}
