package io.otl.node.otlp;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A two-turn agent with one tool call, instrumented with the real OpenTelemetry SDK as the GenAI
 * semantic conventions describe (invoke_agent → chat → execute_tool → chat), its spans kept so a
 * test can export the same batch several ways.
 */
public final class GenAiAgent {
  static final String USER_1 = "What is the weather in Paris? My phone is +33 6 12 34 56 78.";
  static final String USER_2 = "Thanks! Send it to alice@example.com please.";
  static final String ANSWER_1 = "It is 21 degrees and sunny in Paris.";
  static final String ANSWER_2 = "Done, I sent it.";

  private GenAiAgent() {}

  /** The finished spans of one run of the agent in {@code conversationId}. */
  static List<SpanData> run(String conversationId) {
    Collect collect = new Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), "weather-service"))))
        .addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    Tracer tracer = provider.get("otl-test-agent");
    String history1 = "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"" + USER_1 + "\"}]}]";
    String toolCall = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call-1\","
        + "\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}]}";
    String toolResult = "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call-1\","
        + "\"response\":{\"celsius\":21}}]}";
    String answer1 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"" + ANSWER_1 + "\"}],"
        + "\"finish_reason\":\"stop\"}";
    String user2 = "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"" + USER_2 + "\"}]}";
    String answer2 = "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"" + ANSWER_2 + "\"}]}";
    String upToTool = history1.substring(0, history1.length() - 1) + "," + toolCall + "," + toolResult + "]";
    String turn2 = upToTool.substring(0, upToTool.length() - 1) + "," + answer1 + "," + user2 + "]";

    Span agent1 = agent(tracer, conversationId);
    try (Scope s = agent1.makeCurrent()) {
      chat(tracer, conversationId, history1, "[" + toolCall + "]", "resp-1");
      Span tool = tracer.spanBuilder("execute_tool get_weather").setSpanKind(SpanKind.INTERNAL)
          .setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.conversation.id", conversationId)
          .setAttribute("gen_ai.tool.name", "get_weather")
          .setAttribute("gen_ai.tool.call.id", "call-1")
          .setAttribute("gen_ai.tool.call.arguments", "{\"city\":\"Paris\"}")
          .setAttribute("gen_ai.tool.call.result", "{\"celsius\":21}")
          .startSpan();
      tool.end();
      chat(tracer, conversationId, upToTool, "[" + answer1 + "]", "resp-2");
    } finally {
      agent1.end();
    }
    Span agent2 = agent(tracer, conversationId);
    try (Scope s = agent2.makeCurrent()) {
      chat(tracer, conversationId, turn2, "[" + answer2 + "]", "resp-3");
    } finally {
      agent2.end();
    }
    provider.close();
    return List.copyOf(collect.spans);
  }

  private static Span agent(Tracer tracer, String conversationId) {
    return tracer.spanBuilder("invoke_agent weather-agent").setSpanKind(SpanKind.INTERNAL)
        .setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.agent.name", "weather-agent")
        .setAttribute("gen_ai.conversation.id", conversationId)
        .startSpan();
  }

  private static void chat(Tracer tracer, String conversationId, String input, String output, String responseId) {
    Span chat = tracer.spanBuilder("chat qwen2.5-7b-instruct").setSpanKind(SpanKind.CLIENT)
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.provider.name", "openai")
        .setAttribute("gen_ai.request.model", "qwen2.5-7b-instruct")
        .setAttribute("gen_ai.response.id", responseId)
        .setAttribute("gen_ai.usage.input_tokens", 42L)
        .setAttribute("gen_ai.usage.output_tokens", 7L)
        .setAttribute("gen_ai.input.messages", input)
        .setAttribute("gen_ai.output.messages", output)
        .setAttribute("gen_ai.tool.definitions", TOOLS)
        .startSpan();
    chat.end();
  }

  /**
   * The tools offered on each chat span, as the conventions write them (JSON text: the Java SDK has no
   * structured attribute values); get_time is offered and never called.
   */
  static final String TOOLS = "[{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"Current weather of a city\","
      + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}},"
      + "{\"type\":\"function\",\"name\":\"get_time\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}]";

  /** A span outside the GenAI conventions (an HTTP server span), which the node ignores. */
  static List<SpanData> unrelated() {
    Collect collect = new Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    provider.get("http").spanBuilder("GET /health").setAttribute("http.request.method", "GET").startSpan().end();
    provider.close();
    return List.copyOf(collect.spans);
  }

  /**
   * A chat span as the Azure AI Inference SDK's tracing writes it: one span event per message, each
   * event's whole body as JSON in {@code gen_ai.event.content} (a choice's under {@code message}).
   */
  static List<SpanData> eventBodiesAsJson(String conversationId) {
    Collect collect = new Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    AttributeKey<String> body = AttributeKey.stringKey("gen_ai.event.content");
    Span chat = provider.get("azure.ai.inference").spanBuilder("chat gpt-4o").setSpanKind(SpanKind.CLIENT)
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conversationId)
        .setAttribute("gen_ai.agent.name", "travel-agent")
        .setAttribute("gen_ai.response.id", "resp-az")
        .startSpan();
    chat.addEvent("gen_ai.system.message", Attributes.of(body, "{\"role\": \"system\", \"content\": \"Be brief.\"}"));
    chat.addEvent("gen_ai.user.message", Attributes.of(body, "{\"role\": \"user\", \"content\": \"" + USER_2 + "\"}"));
    chat.addEvent("gen_ai.tool.message", Attributes.of(body, "{\"content\": {\"sent\": true}, \"id\": \"call-7\"}"));
    chat.addEvent("gen_ai.choice", Attributes.of(body,
        "{\"message\": {\"content\": \"" + ANSWER_2 + "\"}, \"finish_reason\": \"stop\", \"index\": 0}"));
    chat.end();
    provider.close();
    return List.copyOf(collect.spans);
  }

  /**
   * A chat span of the semantic conventions up to 1.27: the prompt and the completion as JSON arrays of
   * messages on the events {@code gen_ai.content.prompt} and {@code gen_ai.content.completion}.
   */
  static List<SpanData> promptAndCompletionEvents(String conversationId) {
    Collect collect = new Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    Span chat = provider.get("semantic-kernel").spanBuilder("chat.completions gpt-4o").setSpanKind(SpanKind.CLIENT)
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conversationId)
        .setAttribute("gen_ai.agent.name", "travel-agent")
        .setAttribute("gen_ai.response.id", "resp-sk")
        .startSpan();
    chat.addEvent("gen_ai.content.prompt", Attributes.of(AttributeKey.stringKey("gen_ai.prompt"),
        "[{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"" + USER_1 + "\"}]"));
    chat.addEvent("gen_ai.content.completion", Attributes.of(AttributeKey.stringKey("gen_ai.completion"),
        "[{\"role\": \"assistant\", \"content\": \"" + ANSWER_1 + "\"}]"));
    chat.end();
    provider.close();
    return List.copyOf(collect.spans);
  }

  /** A failed tool call in {@code conversationId}. */
  static List<SpanData> failedTool(String conversationId) {
    Collect collect = new Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect))
        .build();
    provider.get("agent").spanBuilder("execute_tool search")
        .setAttribute("gen_ai.operation.name", "execute_tool")
        .setAttribute("gen_ai.conversation.id", conversationId)
        .setAttribute("gen_ai.agent.name", "search-agent")
        .setAttribute("gen_ai.tool.name", "search")
        .setAttribute("error.type", "TimeoutError")
        .startSpan().setStatus(StatusCode.ERROR, "search backend timed out").end();
    provider.close();
    return List.copyOf(collect.spans);
  }

  /** Keeps the spans as they end; {@link #take} hands over those ended since the last take (a batch). */
  public static final class Collect implements SpanExporter {
    final List<SpanData> spans = new CopyOnWriteArrayList<>();

    public List<SpanData> take() {
      List<SpanData> batch = List.copyOf(spans);
      spans.removeAll(batch);
      return batch;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
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
  }
}
