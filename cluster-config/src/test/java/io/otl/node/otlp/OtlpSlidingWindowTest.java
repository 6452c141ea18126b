package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An agent that sends the model only its system prompt and its last four messages, recorded with the real
 * OpenTelemetry SDK and its OTLP/HTTP exporter, a request per turn (trial t95). Each chat span's messages
 * were stored at their places in the window: the resent messages were stored again under new positions
 * and a "continue" that landed on the place of a stored "continue" was taken for it (22 messages stored
 * instead of 15, two "continue"s of four lost). docs/connect-opentelemetry.md, "Idempotent".
 */
class OtlpSlidingWindowTest {
  private static final String SYSTEM = "You plan trips.";
  private static final String[][] TURNS = {
      {"Plan three days in Rome.", "Day one: the Colosseum."},
      {"continue", "Day two: the Vatican."},
      {"continue", "Day three: Trastevere."},
      {"Which hotel?", "Hotel Artemide."},
      {"continue", "It is near Termini."},
      {"continue", "Breakfast is included."},
      {"continue", "That is all."}};
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-window")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aSlidingWindowStoresTheConversationOnceWithEveryContinue() {
    List<List<SpanData>> turns = run("otlp-window-1");
    try (OtlpHttpSpanExporter exporter = exporter()) {
      for (List<SpanData> turn : turns) export(exporter, turn);
      List<String> expected = conversation();
      assertEquals(15, expected.size());
      assertEquals(expected, messages("otlp-window-1"));
      // the exporter's retry of every request, and of the whole run at once: nothing twice
      for (List<SpanData> turn : turns) export(exporter, turn);
      export(exporter, turns.stream().flatMap(List::stream).toList());
      assertEquals(expected, messages("otlp-window-1"));
    }
    JsonNode stored = session("otlp-window-1").get("messages");
    // each answer under its own response id, so feedback names the turn it rates
    List<String> msgIds = new ArrayList<>();
    stored.forEach(m -> {
      if ("assistant".equals(m.get("role").asText())) msgIds.add(m.get("msgId").asText());
    });
    assertEquals(List.of("resp-0", "resp-1", "resp-2", "resp-3", "resp-4", "resp-5", "resp-6"), msgIds);
    Http.Response feedback = new Http(node.httpPort()).post("/v1/sessions/otlp-window-1/feedback",
        "{\"kind\":\"THUMBS_UP\",\"msgId\":\"resp-5\"}");
    assertEquals(202, feedback.status(), feedback.body());
  }

  @Test
  void aLaterTurnFirstWithinTheWindowStoresTheSame() {
    List<List<SpanData>> turns = run("otlp-window-2");
    try (OtlpHttpSpanExporter exporter = exporter()) {
      for (int i : new int[] {1, 0, 3, 2, 5, 4, 6}) export(exporter, turns.get(i));
    }
    List<String> got = messages("otlp-window-2");
    assertEquals(15, got.size(), got.toString());
    assertEquals(conversation().stream().sorted().toList(), got.stream().sorted().toList());
    assertEquals(5, got.stream().filter("user: continue"::equals).count(), got.toString());
  }

  private static List<String> conversation() {
    List<String> all = new ArrayList<>(List.of("system: " + SYSTEM));
    for (String[] turn : TURNS) {
      all.add("user: " + turn[0]);
      all.add("assistant: " + turn[1]);
    }
    return all;
  }

  /** The agent's spans, a list per turn (its agent span and its chat span with the window as input). */
  private static List<List<SpanData>> run(String conversationId) {
    GenAiAgent.Collect collect = new GenAiAgent.Collect();
    SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect)).build();
    Tracer tracer = provider.get("window-agent");
    List<String> history = new ArrayList<>();
    List<List<SpanData>> turns = new ArrayList<>();
    for (int i = 0; i < TURNS.length; i++) {
      history.add(message("user", TURNS[i][0]));
      List<String> window = new ArrayList<>(List.of(message("system", SYSTEM)));
      window.addAll(history.subList(Math.max(0, history.size() - 4), history.size()));
      Span agent = tracer.spanBuilder("invoke_agent planner").setAttribute("gen_ai.operation.name", "invoke_agent")
          .setAttribute("gen_ai.conversation.id", conversationId).setAttribute("gen_ai.agent.name", "planner")
          .startSpan();
      try (Scope s = agent.makeCurrent()) {
        tracer.spanBuilder("chat qwen2.5-7b-instruct").setAttribute("gen_ai.operation.name", "chat")
            .setAttribute("gen_ai.conversation.id", conversationId).setAttribute("gen_ai.agent.name", "planner")
            .setAttribute("gen_ai.response.id", "resp-" + i)
            .setAttribute("gen_ai.input.messages", "[" + String.join(",", window) + "]")
            .setAttribute("gen_ai.output.messages", "[" + message("assistant", TURNS[i][1]) + "]")
            .startSpan().end();
      } finally {
        agent.end();
      }
      history.add(message("assistant", TURNS[i][1]));
      turns.add(collect.take());
    }
    provider.close();
    return turns;
  }

  private static String message(String role, String text) {
    return "{\"role\":\"" + role + "\",\"parts\":[{\"type\":\"text\",\"content\":\"" + text + "\"}]}";
  }

  private static OtlpHttpSpanExporter exporter() {
    return OtlpHttpSpanExporter.builder().setEndpoint("http://127.0.0.1:" + node.httpPort() + "/v1/traces").build();
  }

  private static void export(OtlpHttpSpanExporter exporter, List<SpanData> spans) {
    CompletableResultCode result = exporter.export(spans).join(30, TimeUnit.SECONDS);
    assertTrue(result.isSuccess(), "the SDK exporter reports success");
  }

  private static List<String> messages(String id) {
    List<String> got = new ArrayList<>();
    session(id).get("messages").forEach(m -> got.add(m.get("role").asText() + ": " + m.get("content").asText()));
    return got;
  }

  private static JsonNode session(String id) {
    Http.Response r = new Http(node.httpPort()).get("/v1/sessions/" + id);
    assertEquals(200, r.status(), r.body());
    return r.json();
  }
}
