package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OTLP/HTTP specification: an error answer to a protobuf request is a protobuf {@code
 * google.rpc.Status}. The node's 401 (and its 413, 429, 503) came as the API's JSON, which an OTLP
 * client cannot read as one: the Java SDK's exporter (1.68) fell back to dumping the raw body into its
 * log ({@code Response body: {"error":…}}), older ones to {@code Unable to parse response body}. A
 * JSON request's error is the same Status in the JSON encoding.
 */
class OtlpProtobufErrorBodyTest {
  private static final String TOKEN = "otlp-error-token";
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN,
            "agentscope.training.otlp.port", 0, "agentscope.training.otlp.max-decoded-bytes", 4096))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-error-body")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void theJavaExporterReadsTheNodesReasonForA401() {
    String line = ExporterLog.ofOneChatSpan("http://127.0.0.1:" + node.httpPort() + "/v1/traces"); // no token
    assertTrue(line.contains("HTTP status code 401"), line);
    assertTrue(line.contains("Error message: an Authorization: Bearer <token> header is required"), line);
    assertFalse(line.contains("Response body:"), "read as a Status, not dumped raw: " + line);
  }

  @Test
  void errorsToProtobufRequestsAreStatusMessagesOnBothPorts() throws Exception {
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      HttpResponse<byte[]> unauthorized = post(port, "application/x-protobuf", new byte[0], null);
      assertEquals(401, unauthorized.statusCode());
      assertStatus(unauthorized, 16, "Bearer");
      // the challenge HTTP requires of a 401, on the OTLP port as on the API's (BearerSchemeTest)
      assertEquals("Bearer realm=\"otl\"", unauthorized.headers().firstValue("WWW-Authenticate").orElse("(none)"));

      HttpResponse<byte[]> gzipBomb = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/v1/traces"))
          .header("Content-Type", "application/x-protobuf").header("Content-Encoding", "gzip")
          .header("Authorization", "Bearer " + TOKEN)
          .POST(HttpRequest.BodyPublishers.ofByteArray(gzip(new byte[10_000]))).build(),
          HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(413, gzipBomb.statusCode());
      assertStatus(gzipBomb, 8, "otlp.max-decoded-bytes");

    }
  }

  /**
   * A protobuf body that does not parse: the 400 quoted protobuf's parser ("Protocol message end-group tag did
   * not match expected tag."), words about its internals that told an exporter's user nothing. It says what was
   * wrong with the request, in the same Status.
   */
  @Test
  void aBodyThatIsNoProtobufRequestIsToldSoInTheNodesWords() throws Exception {
    byte[][] bodies = {{0x0c}, {0x0a, 0x05, 'a', 'b'}, {0x0a, 0x02, 0x12, (byte) 0xff}, "{\"resourceSpans\":[]}".getBytes()};
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      for (byte[] body : bodies) {
        HttpResponse<byte[]> r = post(port, "application/x-protobuf", body, TOKEN);
        assertEquals(400, r.statusCode());
        assertStatus(r, 3, "the body is not a valid OTLP ExportTraceServiceRequest (protobuf): ");
        String message = StatusBody.message(r.body());
        assertFalse(message.contains("Protocol message") || message.contains("While parsing"), message);
      }
      assertStatus(post(port, "application/x-protobuf", new byte[] {0x0a, 0x05, 'a', 'b'}, TOKEN), 3,
          "it ends inside a field (the body is cut short");
    }
  }

  /**
   * A JSON request's errors are the JSON encoding of the same Status ({@code code}, {@code message},
   * {@code details}), not the API's bare {@code {"error","message"}} (trial t52); the API's {@code
   * error} stays beside them. The HTTP statuses are unchanged.
   */
  @Test
  void errorsToJsonRequestsAreJsonStatusMessagesOnBothPorts() throws Exception {
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      HttpResponse<byte[]> unauthorized = post(port, "application/json", "{}".getBytes(), null);
      assertEquals(401, unauthorized.statusCode());
      assertJsonStatus(unauthorized, 16, "Bearer", "unauthorized");
      assertEquals("Bearer realm=\"otl\"", unauthorized.headers().firstValue("WWW-Authenticate").orElse("(none)"));

      HttpResponse<byte[]> notOtlp = post(port, "application/json", "{\"resourceSpans\":7}".getBytes(), TOKEN);
      assertEquals(400, notOtlp.statusCode());
      assertJsonStatus(notOtlp, 3, "", "invalid_otlp");

      HttpResponse<byte[]> keyTwice = post(port, "application/json",
          "{\"resourceSpans\":[],\"resourceSpans\":[]}".getBytes(), TOKEN);
      assertEquals(400, keyTwice.statusCode());
      assertJsonStatus(keyTwice, 3, "", "invalid_otlp");

      HttpResponse<byte[]> gzipBomb = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/v1/traces"))
          .header("Content-Type", "application/json").header("Content-Encoding", "gzip")
          .header("Authorization", "Bearer " + TOKEN)
          .POST(HttpRequest.BodyPublishers.ofByteArray(gzip(new byte[10_000]))).build(),
          HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(413, gzipBomb.statusCode());
      assertJsonStatus(gzipBomb, 8, "otlp.max-decoded-bytes", "payload_too_large");

      HttpResponse<byte[]> brotli = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/v1/traces"))
          .header("Content-Type", "application/json").header("Content-Encoding", "br")
          .header("Authorization", "Bearer " + TOKEN)
          .POST(HttpRequest.BodyPublishers.ofByteArray("{}".getBytes())).build(),
          HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(415, brotli.statusCode());
      assertJsonStatus(brotli, 3, "br", null);

      // a success is still the ExportTraceServiceResponse, not a Status
      HttpResponse<byte[]> ok = post(port, "application/json", "{\"resourceSpans\":[]}".getBytes(), TOKEN);
      assertEquals(200, ok.statusCode(), new String(ok.body()));
      assertFalse(io.otl.http.Json.MAPPER.readTree(ok.body()).has("code"), new String(ok.body()));
    }
  }

  private static void assertJsonStatus(HttpResponse<byte[]> r, int code, String inMessage, String apiError)
      throws Exception {
    String text = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), text);
    com.fasterxml.jackson.databind.JsonNode status = io.otl.http.Json.MAPPER.readTree(r.body());
    assertTrue(status.path("code").isInt(), text);
    assertEquals(code, status.path("code").asInt(), text);
    assertTrue(status.path("message").isTextual() && !status.path("message").asText().isBlank(), text);
    assertTrue(status.path("message").asText().contains(inMessage), text);
    assertTrue(status.path("details").isArray() && status.path("details").isEmpty(), text);
    if (apiError != null) assertEquals(apiError, status.path("error").asText(), text);
    // the order a proto3 JSON encoder writes: the Status's own fields first
    assertEquals("code", status.fieldNames().next(), text);
  }

  private static void assertStatus(HttpResponse<byte[]> r, int code, String inMessage) throws Exception {
    assertEquals("application/x-protobuf", r.headers().firstValue("Content-Type").orElse(""));
    StatusBody.assertStatus(r.body(), code, inMessage);
  }

  private static HttpResponse<byte[]> post(int port, String type, byte[] body, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/traces"))
        .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) b.header("Authorization", "Bearer " + token);
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static byte[] gzip(byte[] raw) throws Exception {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(out)) {
      z.write(raw);
    }
    return out.toByteArray();
  }
}
