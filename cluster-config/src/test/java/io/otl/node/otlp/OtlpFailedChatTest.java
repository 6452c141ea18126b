package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A chat span that failed (status ERROR, or an {@code error.type}) without an answer, through the Java SDK's
 * exporter (trial t40). It was stored as a step "failed: …", while a successful span's answer counts as a
 * model call: an OTLP agent's sessions showed calls and no errors, so a version whose calls failed passed the
 * canary's upstream-error guardrail. It is now recorded as the gateway records a failed call: an empty
 * assistant message whose {@code inference} has the error. docs/connect-opentelemetry.md, "The model call".
 */
class OtlpFailedChatTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "flaky-agent";
  private static final String CUT_AGENT = "cut-agent";
  private static final String QUESTION = "How warm is Paris? Call me at +44 20 7946 0958.";
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-failed-chat")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aFailedChatSpanIsAFailedModelCallThatTheOutcomeCounts() throws Exception {
    String input = "[{\"role\":\"user\",\"content\":\"" + QUESTION + "\"}]";
    // an upstream body in the status message: personal data, and far longer than an error summary
    String upstream = "Error code: 429 - rate limited for alice@example.com " + "x".repeat(2000);
    List<SpanData> spans = spans(tracer -> {
      chat(tracer, "otlp-failed", input, null, span -> span.setAttribute("gen_ai.request.model", "qwen2.5-7b-instruct")
          .setAttribute("error.type", "openai.RateLimitError").setStatus(StatusCode.ERROR, upstream));
      // the agent's retry answers
      chat(tracer, "otlp-failed", input, "[{\"role\":\"assistant\",\"content\":\"21 degrees.\"}]",
          span -> span.setAttribute("gen_ai.response.id", "resp-ok")
              .setAttribute("gen_ai.response.model", "qwen2.5-7b-instruct-0301"));
      // a failed tool stays a failed tool call
      tracer.spanBuilder("execute_tool search").setAttribute("gen_ai.operation.name", "execute_tool")
          .setAttribute("gen_ai.conversation.id", "otlp-failed").setAttribute("gen_ai.agent.name", AGENT)
          .setAttribute("gen_ai.tool.name", "search").setAttribute("error.type", "TimeoutError").startSpan()
          .setStatus(StatusCode.ERROR, "search backend timed out").end();
      // error.type alone (status left unset) marks a failed call too, and no content capture is needed
      chat(tracer, "otlp-failed-type", null, null, span -> span.setAttribute("error.type", "timeout"));
    });
    try (OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()) {
      export(exporter, spans);
      JsonNode first = session("otlp-failed");
      export(exporter, spans); // the exporter's retry of the same batch
      assertEquals(first.get("messages"), session("otlp-failed").get("messages"), "a retried export stores nothing twice");
    }

    JsonNode s = session("otlp-failed");
    JsonNode messages = s.get("messages");
    List<String> got = new ArrayList<>();
    messages.forEach(m -> got.add(m.get("role").asText() + ":" + m.get("content").asText()));
    assertEquals(List.of("user:How warm is Paris? Call me at [PHONE].", "assistant:", "assistant:21 degrees."), got,
        s.toString());
    JsonNode failed = messages.get(1).get("inference");
    String error = failed.get("error").asText();
    assertTrue(error.startsWith("openai.RateLimitError: Error code: 429 - rate limited for [EMAIL] xxx"), error);
    assertTrue(error.length() <= 512, "an error summary, not the upstream body: " + error.length());
    assertEquals("qwen2.5-7b-instruct", failed.get("servedModel").asText(), failed.toString());
    assertTrue(messages.get(1).get("msgId").isNull(), "a failed call has no response to name");
    assertTrue(messages.get(2).get("inference").get("error").isNull(), s.toString());
    assertEquals(0, s.get("steps").size(), "no step 'failed: …' any more: " + s);
    JsonNode tool = s.get("toolCalls").get(0);
    assertFalse(tool.get("success").asBoolean(), "a failed execute_tool span is still a failed tool call");
    assertEquals("TimeoutError: search backend timed out", tool.get("output").get("error").asText());

    JsonNode typeOnly = session("otlp-failed-type").get("messages");
    assertEquals(1, typeOnly.size(), typeOnly.toString());
    assertEquals("timeout", typeOnly.get(0).get("inference").get("error").asText(), typeOnly.toString());

    Http.Response done = http.post("/v1/sessions/otlp-failed/events",
        "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}");
    assertEquals(202, done.status(), done.body());

    // the outcome the canary's guardrails read: two model calls, one of them failed
    JsonNode completed = null;
    for (JsonNode e : http.get("/v1/audit/session/otlp-failed?limit=100").json().get("events")) {
      if (e.get("event").has("outcome")) completed = e.get("event").get("outcome");
    }
    assertTrue(completed != null, "the session completed");
    assertEquals(2, completed.get("modelCalls").asInt(), completed.toString());
    assertEquals(1, completed.get("upstreamErrors").asInt(), completed.toString());

    String timeline = http.get("/v1/audit/session/otlp-failed/timeline").body();
    assertTrue(timeline.contains("assistant: (call FAILED: openai.RateLimitError: Error code: 429"), timeline);
    assertFalse(timeline.contains("7946 0958") || timeline.contains("alice@"), timeline);

    // exports learn the answer, never the failed call's empty message
    String[] sft = new String[1];
    FeedTestSupport.await("the session in the SFT export", Duration.ofSeconds(60), () -> {
      Http.Response r = http.post("/v1/exports/" + AGENT + "?format=sft", "");
      String[] all = r.body().split("\n");
      sft[0] = r.status() == 200 && all.length > 1 ? all[1] : null;
      return sft[0] != null;
    });
    List<String> line = new ArrayList<>();
    JSON.readTree(sft[0]).get("messages").forEach(m -> line.add(m.get("role").asText() + ":" + m.get("content").asText()));
    assertEquals(List.of("user:How warm is Paris? Call me at [PHONE].", "assistant:21 degrees."), line, sft[0]);
    Http.Response rl = http.post("/v1/exports/" + AGENT + "?format=rl", "");
    assertEquals(200, rl.status(), rl.body());
    assertEquals("21 degrees.", JSON.readTree(rl.body().split("\n")[1]).get("reference").asText(), rl.body());
  }

  /**
   * A chat span that failed after part of its answer (a stream cut mid-way: status ERROR, the output
   * messages or the 1.27 completion event holding what arrived) was stored as a clean answer: no error, so
   * the session's outcome counted a successful call and the canary never saw the failure. The partial
   * answer is kept and its call marked failed, as the gateway marks a stream that broke.
   */
  @Test
  void aFailedChatSpanWithAPartialAnswerKeepsTheAnswerAndCountsTheFailure() throws Exception {
    String input = "[{\"role\":\"user\",\"content\":\"Weather in Oslo?\"}]";
    List<SpanData> spans = spans(tracer -> {
      chat(tracer, "otlp-partial", input, "[{\"role\":\"assistant\",\"content\":\"It is 4 deg\"}]",
          span -> span.setAttribute("gen_ai.agent.name", CUT_AGENT) // its own agent: the other test exports AGENT's
              .setAttribute("gen_ai.response.id", "resp-cut").setAttribute("gen_ai.response.model", "qwen")
              .setAttribute("gen_ai.usage.output_tokens", 4L)
              .setAttribute("error.type", "openai.APIConnectionError").setStatus(StatusCode.ERROR, "stream cut"));
      // the conventions up to 1.27: the answer on a gen_ai.content.completion event, the failure in the status
      chat(tracer, "otlp-partial-event", null, null, span -> span.setAttribute("gen_ai.agent.name", CUT_AGENT)
          .addEvent("gen_ai.content.completion", io.opentelemetry.api.common.Attributes.of(
              io.opentelemetry.api.common.AttributeKey.stringKey("gen_ai.completion"),
              "[{\"role\":\"assistant\",\"content\":\"Half an ans\"}]"))
          .setStatus(StatusCode.ERROR, "reset"));
    });
    try (OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build()) {
      export(exporter, spans);
    }
    JsonNode messages = session("otlp-partial").get("messages");
    assertEquals(2, messages.size(), "no extra empty message beside the partial answer: " + messages);
    JsonNode answer = messages.get(1);
    assertEquals("It is 4 deg", answer.get("content").asText(), answer.toString());
    assertEquals("resp-cut", answer.get("msgId").asText(), "per-turn feedback can still name it");
    assertEquals("openai.APIConnectionError: stream cut", answer.get("inference").get("error").asText(), answer.toString());
    assertEquals(4, answer.get("inference").get("completionTokens").asInt(), "the figures stay with the call");
    JsonNode fromEvent = session("otlp-partial-event").get("messages");
    assertEquals(1, fromEvent.size(), fromEvent.toString());
    assertEquals("Half an ans", fromEvent.get(0).get("content").asText(), fromEvent.toString());
    assertEquals("reset", fromEvent.get(0).get("inference").get("error").asText(), fromEvent.toString());

    String timeline = http.get("/v1/audit/session/otlp-partial/timeline").body();
    assertTrue(timeline.contains("assistant: It is 4 deg (call FAILED: openai.APIConnectionError: stream cut)"), timeline);
    Http.Response done = http.post("/v1/sessions/otlp-partial/events",
        "{\"agentId\":\"" + CUT_AGENT + "\",\"events\":[{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"FAILURE\"}]}");
    assertEquals(202, done.status(), done.body());
    JsonNode outcome = null;
    for (JsonNode e : http.get("/v1/audit/session/otlp-partial?limit=100").json().get("events")) {
      if (e.get("event").has("outcome")) outcome = e.get("event").get("outcome");
    }
    assertTrue(outcome != null, "the session completed");
    assertEquals(1, outcome.get("modelCalls").asInt(), outcome.toString());
    assertEquals(1, outcome.get("upstreamErrors").asInt(), "the canary's guardrail sees the failed call: " + outcome);

    // exports leave the partial answer out (its only answer, so no SFT line): it was a line "It is 4 deg"
    String[] body = new String[1];
    FeedTestSupport.await("the cut session judged by the export", Duration.ofSeconds(60), () -> {
      body[0] = http.post("/v1/exports/" + CUT_AGENT + "?format=sft&sftMinReward=-1", "").body();
      return body[0].contains("no-assistant-answer") || body[0].contains("It is 4 deg");
    });
    assertFalse(body[0].contains("It is 4 deg"), body[0]);
  }

  private static List<SpanData> spans(Consumer<Tracer> agent) {
    GenAiAgent.Collect collect = new GenAiAgent.Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect)).build();
    agent.accept(provider.get("my-agent"));
    provider.close();
    return List.copyOf(collect.spans);
  }

  /** A chat span; without input or output, the messages are not captured. */
  private static void chat(Tracer tracer, String conv, String input, String output, Consumer<Span> more) {
    Span span = tracer.spanBuilder("chat qwen2.5-7b-instruct").setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", conv).setAttribute("gen_ai.agent.name", AGENT).startSpan();
    if (input != null) span.setAttribute("gen_ai.input.messages", input);
    if (output != null) span.setAttribute("gen_ai.output.messages", output);
    more.accept(span);
    span.end();
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
