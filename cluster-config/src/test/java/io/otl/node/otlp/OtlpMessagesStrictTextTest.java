package io.otl.node.otlp;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A NUL or a lone surrogate in the text of {@code gen_ai.*.messages} (docs/connect-opentelemetry.md, Answers):
 * the docs said such a span is refused, as the events API refuses the text; the node stored U+FFFD in its place
 * and answered that all was taken (trial t131). Each shape that really carries the character is now refused,
 * naming the attribute, beside a span of the same request that is stored. A lone surrogate has no UTF-8 form,
 * so protobuf can carry one only escaped inside the attribute's JSON text; raw, the decoder reads U+FFFD.
 */
class OtlpMessagesStrictTextTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-strict-text")), true));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  /** The messages attribute's JSON text with the character escaped, or raw in the string value, or structured. */
  @Test
  void otlpJsonSpansWhoseMessagesHoldANulOrALoneSurrogateAreRefused() throws Exception {
    String[] values = {
        JSON.writeValueAsString(java.util.Map.of("stringValue", "[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]")),
        JSON.writeValueAsString(java.util.Map.of("stringValue", "[{\"role\":\"user\",\"content\":\"a\\ud83db\"}]")),
        // the raw character inside the JSON text: a raw NUL is no JSON at all; a lone surrogate is a character
        "{\"stringValue\":\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"a\\u0000b\\\"}]\"}",
        "{\"stringValue\":\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"a\\ud83db\\\"}]\"}",
        structured("a\\u0000b"),
        structured("a\\udc00b")};
    java.util.List<String> outcomes = new java.util.ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      String session = "otlp-strict-text-json-" + i;
      String body = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[" + jsonSpan(session, "00000000000000f0",
          "{\"stringValue\":\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"fine\\\"}]\"}") + ","
          + jsonSpan(session, "00000000000000f1", values[i]) + "]}]}]}";
      HttpResponse<byte[]> r = post("application/json", body.getBytes(UTF_8));
      assertEquals(200, r.statusCode(), new String(r.body(), UTF_8));
      JsonNode partial = JSON.readTree(r.body()).path("partialSuccess");
      outcomes.add(i + ": " + outcome(partial.path("rejectedSpans").asText(), partial.path("errorMessage").asText(),
          session));
    }
    assertEquals(refusedAll(values.length), outcomes);
  }

  /** The other shapes of messages (a message event, OpenLLMetry's indexed attributes) are refused alike. */
  @Test
  void messageEventsAndIndexedAttributesHoldingANulOrALoneSurrogateAreRefused() throws Exception {
    String[] spans = {
        jsonSpan("otlp-strict-text-event", "00000000000000f1", null).replace("\"attributes\":",
            "\"events\":[{\"name\":\"gen_ai.user.message\",\"timeUnixNano\":\"1700000000000000000\","
                + "\"attributes\":[{\"key\":\"content\",\"value\":{\"stringValue\":\"a\\u0000b\"}}]}],"
                + "\"attributes\":"),
        jsonSpan("otlp-strict-text-indexed", "00000000000000f1", null).replace("\"attributes\":[",
            "\"attributes\":[{\"key\":\"gen_ai.prompt.0.role\",\"value\":{\"stringValue\":\"user\"}},"
                + "{\"key\":\"gen_ai.prompt.0.content\",\"value\":{\"stringValue\":\"a\\ud83db\"}},")};
    java.util.List<String> outcomes = new java.util.ArrayList<>();
    for (int i = 0; i < spans.length; i++) {
      HttpResponse<byte[]> r = post("application/json",
          ("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[" + spans[i] + "]}]}]}").getBytes(UTF_8));
      assertEquals(200, r.statusCode(), new String(r.body(), UTF_8));
      JsonNode partial = JSON.readTree(r.body()).path("partialSuccess");
      String error = partial.path("errorMessage").asText();
      Http.Response stored = new Http(node.httpPort()).get("/v1/sessions/" + (i == 0 ? "otlp-strict-text-event"
          : "otlp-strict-text-indexed"));
      outcomes.add("1".equals(partial.path("rejectedSpans").asText()) && error.contains("message 0 (user)")
          && stored.status() == 404 ? "refused" : partial + " " + stored.body().replace("\uFFFD", "U+FFFD"));
    }
    assertEquals(java.util.List.of("refused", "refused"), outcomes);
  }

  @Test
  void protobufSpansWhoseMessagesHoldANulOrAnEscapedLoneSurrogateAreRefused() throws Exception {
    AnyValue[] values = {
        text("[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]"),
        text("[{\"role\":\"user\",\"content\":\"a\\ud83db\"}]"),
        text("[{\"role\":\"user\",\"content\":\"a\u0000b\"}]"),
        structured(text("a\u0000b"))};
    java.util.List<String> outcomes = new java.util.ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      String session = "otlp-strict-text-pb-" + i;
      HttpResponse<byte[]> r = post("application/x-protobuf", request(session, values[i]).toByteArray());
      assertEquals(200, r.statusCode());
      ExportTraceServiceResponse answer = ExportTraceServiceResponse.parseFrom(r.body());
      outcomes.add(i + ": " + outcome(String.valueOf(answer.getPartialSuccess().getRejectedSpans()),
          answer.getPartialSuccess().getErrorMessage(), session));
    }
    assertEquals(refusedAll(values.length), outcomes);
  }

  /**
   * UTF-8 has no form for a lone surrogate: its CESU bytes (ED A0 BD) are malformed UTF-8, which the protobuf
   * decoder refuses in a string field, so the whole request is a 400 and nothing is stored.
   */
  @Test
  void aRawLoneSurrogateInProtobufIsMalformedUtf8AndA400() throws Exception {
    String session = "otlp-strict-text-pb-raw";
    byte[] body = request(session, structured(text("a\u2603b"))).toByteArray();
    byte[] snowman = "\u2603".getBytes(UTF_8);
    int at = indexOf(body, snowman);
    body[at] = (byte) 0xED;
    body[at + 1] = (byte) 0xA0;
    body[at + 2] = (byte) 0xBD;
    HttpResponse<byte[]> r = post("application/x-protobuf", body);
    assertEquals(400, r.statusCode(), new String(r.body(), UTF_8));
    StatusBody.assertStatus(r.body(), 3, "UTF-8");
    assertEquals(404, new Http(node.httpPort()).get("/v1/sessions/" + session).status(), "nothing stored");
  }

  /** "refused" when the span was refused naming the attribute and only the other span's message is stored. */
  private static String outcome(String rejected, String error, String session) {
    JsonNode messages = new Http(node.httpPort()).get("/v1/sessions/" + session).json().get("messages");
    boolean named = error.contains("00000000000000f1") && error.contains("gen_ai.input.messages");
    boolean onlyFine = messages.size() == 1 && "fine".equals(messages.get(0).get("content").asText());
    return "1".equals(rejected) && named && onlyFine ? "refused"
        : "rejected " + rejected + " (" + error + "), stored " + messages.toString().replace("\uFFFD", "U+FFFD");
  }

  private static java.util.List<String> refusedAll(int n) {
    return java.util.stream.IntStream.range(0, n).mapToObj(i -> i + ": refused").toList();
  }

  /** An arrayValue of one kvlistValue message whose content is the given (escaped) JSON string text. */
  private static String structured(String content) {
    return "{\"arrayValue\":{\"values\":[{\"kvlistValue\":{\"values\":["
        + "{\"key\":\"role\",\"value\":{\"stringValue\":\"user\"}},"
        + "{\"key\":\"content\",\"value\":{\"stringValue\":\"" + content + "\"}}]}}]}}";
  }

  private static String jsonSpan(String session, String spanId, String messages) {
    return "{\"traceId\":\"0102030405060708090a0b0c0d0e0f12\",\"spanId\":\"" + spanId + "\",\"name\":\"chat\","
        + "\"startTimeUnixNano\":\"1700000000000000000\",\"endTimeUnixNano\":\"1700000001000000000\",\"attributes\":["
        + "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}},"
        + "{\"key\":\"gen_ai.conversation.id\",\"value\":{\"stringValue\":\"" + session + "\"}},"
        + "{\"key\":\"gen_ai.agent.name\",\"value\":{\"stringValue\":\"strict-agent\"}},"
        + (messages == null ? "{\"key\":\"gen_ai.system\",\"value\":{\"stringValue\":\"openai\"}}]}"
            : "{\"key\":\"gen_ai.input.messages\",\"value\":" + messages + "}]}");
  }

  private static AnyValue text(String s) {
    return AnyValue.newBuilder().setStringValue(s).build();
  }

  private static AnyValue structured(AnyValue content) {
    KeyValueList message = KeyValueList.newBuilder()
        .addValues(KeyValue.newBuilder().setKey("role").setValue(text("user")))
        .addValues(KeyValue.newBuilder().setKey("content").setValue(content)).build();
    return AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder()
        .addValues(AnyValue.newBuilder().setKvlistValue(message))).build();
  }

  private static ExportTraceServiceRequest request(String session, AnyValue messages) {
    return ExportTraceServiceRequest.newBuilder().addResourceSpans(ResourceSpans.newBuilder()
        .addScopeSpans(ScopeSpans.newBuilder()
            .addSpans(span(session, "00000000000000f0", text("[{\"role\":\"user\",\"content\":\"fine\"}]")))
            .addSpans(span(session, "00000000000000f1", messages)))).build();
  }

  private static Span span(String session, String spanId, AnyValue messages) {
    HexFormat hex = HexFormat.of();
    return Span.newBuilder().setTraceId(ByteString.copyFrom(hex.parseHex("0102030405060708090a0b0c0d0e0f13")))
        .setSpanId(ByteString.copyFrom(hex.parseHex(spanId))).setName("chat")
        .setStartTimeUnixNano(1_700_000_000_000_000_000L).setEndTimeUnixNano(1_700_000_001_000_000_000L)
        .addAttributes(KeyValue.newBuilder().setKey("gen_ai.operation.name").setValue(text("chat")))
        .addAttributes(KeyValue.newBuilder().setKey("gen_ai.conversation.id").setValue(text(session)))
        .addAttributes(KeyValue.newBuilder().setKey("gen_ai.agent.name").setValue(text("strict-agent")))
        .addAttributes(KeyValue.newBuilder().setKey("gen_ai.input.messages").setValue(messages)).build();
  }

  private static int indexOf(byte[] body, byte[] part) {
    for (int i = 0; i + part.length <= body.length; i++) {
      if (java.util.Arrays.equals(body, i, i + part.length, part, 0, part.length)) return i;
    }
    throw new AssertionError("not found");
  }

  private static HttpResponse<byte[]> post(String type, byte[] body) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/traces"))
        .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }
}
