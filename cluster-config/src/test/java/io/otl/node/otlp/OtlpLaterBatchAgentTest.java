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
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A later turn whose chat span leaves in a batch of its own. The SDK's batch processor exports spans as
 * they end, so a turn longer than its schedule delay sends its chat span before the agent span that
 * names the agent; the span then carries only the resource's {@code service.name}, which every SDK sets
 * (by default {@code unknown_service:java}). That name was taken as the agent of a session already
 * recorded under its {@code gen_ai.agent.id}, and the whole turn was refused as a conflict.
 */
class OtlpLaterBatchAgentTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-later-batch")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aLaterTurnsChatSpanAloneGoesToTheSessionsAgent() throws Exception {
    GenAiAgent.Collect exported = new GenAiAgent.Collect();
    Tracer tracer = tracer("trip-service", exported);
    String conv = "otlp-later-batch";
    Span agent1 = agentSpan(tracer, conv);
    try (Scope s = agent1.makeCurrent()) {
      chat(tracer, conv, "[{\"role\":\"user\",\"content\":\"Train to Lyon?\"}]", "TGV 6601 at 09:04.");
    } finally {
      agent1.end();
    }
    assertEquals(0, rejected(post(exported.take())), "turn one names its agent");

    Span agent2 = agentSpan(tracer, conv); // still running: its span is not in this batch
    try (Scope s = agent2.makeCurrent()) {
      chat(tracer, conv, "[{\"role\":\"user\",\"content\":\"Train to Lyon?\"},{\"role\":\"assistant\","
          + "\"content\":\"TGV 6601 at 09:04.\"},{\"role\":\"user\",\"content\":\"Book it.\"}]", "Booked.");
    }
    HttpResponse<String> r = post(exported.take());
    assertEquals(0, rejected(r), "the chat span of a recorded session needs no agent: " + r.body());
    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/" + conv).json();
    assertEquals("trip-planner", session.get("agentId").asText());
    List<String> contents = new ArrayList<>();
    session.get("messages").forEach(m -> contents.add(m.get("content").asText()));
    assertEquals(List.of("Train to Lyon?", "TGV 6601 at 09:04.", "Book it.", "Booked."), contents);

    agent2.end();
    assertEquals(0, rejected(post(exported.take())), "its agent span, exported last, is stored too");
    assertEquals(2, new Http(node.httpPort()).get("/v1/sessions/" + conv).json().get("steps").size());
  }

  @Test
  void aNewSessionStillTakesTheServiceNameAsItsAgent() throws Exception {
    GenAiAgent.Collect exported = new GenAiAgent.Collect();
    Tracer tracer = tracer("solo-service", exported);
    chat(tracer, "otlp-later-batch-new", "[{\"role\":\"user\",\"content\":\"Hi\"}]", "Hello.");
    assertEquals(0, rejected(post(exported.take())));
    JsonNode session = new Http(node.httpPort()).get("/v1/sessions/otlp-later-batch-new").json();
    assertEquals("solo-service", session.get("agentId").asText());
    assertEquals(2, session.get("messages").size());
  }

  /**
   * A run's chat span (naming no agent) and its agent span, exported at the same moment in two requests
   * (the SDK's {@code SimpleSpanProcessor} exports each span as it ends, concurrently). The chat span's
   * request found no session and went to start it under {@code service.name}; when the agent span's request
   * started it in between, the chat span was refused as another agent's (trial t80), though a span naming
   * no agent goes to the session's own. Racy by nature: many sessions at once, and none may lose a span.
   */
  @Test
  void aSpanNamingNoAgentIsStoredWhenItsAgentSpanStartsTheSessionMeanwhile() throws Exception {
    GenAiAgent.Collect exported = new GenAiAgent.Collect();
    Tracer tracer = tracer("racing-service", exported);
    List<List<SpanData>> chats = new ArrayList<>();
    List<List<SpanData>> agents = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String conv = "otlp-race-" + i;
      Span agent = agentSpan(tracer, conv);
      try (Scope s = agent.makeCurrent()) {
        chat(tracer, conv, "[{\"role\":\"user\",\"content\":\"Train to Lyon?\"}]", "TGV 6601 at 09:04.");
      }
      agent.end();
      List<SpanData> ended = exported.take();
      assertEquals(2, ended.size());
      chats.add(List.of(ended.get(0)));
      agents.add(List.of(ended.get(1)));
    }
    List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> chatAnswers = new ArrayList<>();
    List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> agentAnswers = new ArrayList<>();
    HttpClient client = HttpClient.newHttpClient();
    for (int i = 0; i < chats.size(); i++) {
      agentAnswers.add(client.sendAsync(request(agents.get(i)), HttpResponse.BodyHandlers.ofString()));
      chatAnswers.add(client.sendAsync(request(chats.get(i)), HttpResponse.BodyHandlers.ofString()));
    }
    for (var answer : chatAnswers) {
      HttpResponse<String> r = answer.get(60, java.util.concurrent.TimeUnit.SECONDS);
      assertEquals(200, r.statusCode(), r.body());
      assertEquals(0, rejected(r), "a span naming no agent is the session's, whoever started it: " + r.body());
    }
    for (var answer : agentAnswers) assertEquals(200, answer.get(60, java.util.concurrent.TimeUnit.SECONDS).statusCode());
  }

  private static Tracer tracer(String service, GenAiAgent.Collect exported) {
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), service))))
        .addSpanProcessor(SimpleSpanProcessor.create(exported))
        .build();
    return provider.get("otl-test-agent");
  }

  private static Span agentSpan(Tracer tracer, String conv) {
    return tracer.spanBuilder("invoke_agent Trip Planner")
        .setAttribute("gen_ai.operation.name", "invoke_agent")
        .setAttribute("gen_ai.conversation.id", conv)
        .setAttribute("gen_ai.agent.id", "trip-planner")
        .setAttribute("gen_ai.agent.name", "Trip Planner")
        .startSpan();
  }

  /** A chat span as the GenAI conventions write it: the conversation id, no gen_ai.agent.*. */
  private static void chat(Tracer tracer, String conv, String input, String answer) {
    tracer.spanBuilder("chat qwen")
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv)
        .setAttribute("gen_ai.input.messages", input)
        .setAttribute("gen_ai.output.messages", "[{\"role\":\"assistant\",\"content\":\"" + answer + "\"}]")
        .startSpan().end();
  }

  private static HttpRequest request(List<SpanData> spans) throws Exception {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    TraceRequestMarshaler.create(spans).writeJsonTo(body);
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.otlpPort() + "/v1/traces"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build();
  }

  private static HttpResponse<String> post(List<SpanData> spans) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(request(spans), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r;
  }

  private static long rejected(HttpResponse<String> r) throws Exception {
    JsonNode partial = JSON.readTree(r.body()).path("partialSuccess");
    assertTrue(partial.isMissingNode() || partial.isObject(), r.body());
    return partial.path("rejectedSpans").asLong(0);
  }
}
