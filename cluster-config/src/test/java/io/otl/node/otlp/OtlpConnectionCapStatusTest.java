package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connection cap's 429 ({@code http.max-connections-per-address}) to an OTLP export is a {@code
 * google.rpc.Status} in the request's encoding, as every other error answer to {@code POST /v1/traces}
 * is (docs/connect-opentelemetry.md, "Answers"). It came as the API's JSON on both listeners, made
 * before any route, and the Java exporter, which retries a 429, logged the raw body (trial t115). The
 * node serves 4 connections at once and, once 2 are open, lets one address hold 1.
 */
class OtlpConnectionCapStatusTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "pekko.http.server.max-connections", 4,
            "agentscope.training.http.max-connections-per-address", 1,
            "agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-connection-cap")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aRefusedExportGetsAStatusInItsEncodingOnBothListeners() throws Exception {
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      List<Socket> idle = holdIdle(port);
      try {
        byte[][] proto = exchange(port, "POST /v1/traces HTTP/1.1\r\nHost: node\r\nContent-Type: application/x-protobuf\r\n"
            + "Content-Length: 0\r\n\r\n");
        String head = new String(proto[0], StandardCharsets.ISO_8859_1);
        assertTrue(head.startsWith("HTTP/1.1 429"), head);
        assertTrue(head.toLowerCase().contains("content-type: application/x-protobuf"), head);
        assertTrue(head.toLowerCase().contains("retry-after: 1"), head);
        StatusBody.assertStatus(proto[1], 8, "http.max-connections-per-address");

        byte[][] json = exchange(port, "POST /v1/traces HTTP/1.1\r\nHost: node\r\nContent-Type: application/json\r\n"
            + "Content-Length: 2\r\n\r\n{}");
        String jsonHead = new String(json[0], StandardCharsets.ISO_8859_1);
        assertTrue(jsonHead.startsWith("HTTP/1.1 429"), jsonHead);
        com.fasterxml.jackson.databind.JsonNode status = io.otl.http.Json.MAPPER.readTree(json[1]);
        assertEquals(8, status.path("code").asInt(-1), status.toString());
        assertTrue(status.path("message").asText().contains("http.max-connections-per-address"), status.toString());
        assertTrue(status.path("details").isArray(), status.toString());
        assertEquals("too_many_connections", status.path("error").asText(), status.toString());

        // Not an OTLP request: the API's error, as before.
        byte[][] api = exchange(port, "GET /v1/jobs HTTP/1.1\r\nHost: node\r\n\r\n");
        assertTrue(new String(api[1], StandardCharsets.UTF_8).contains("\"error\":\"too_many_connections\""));
      } finally {
        for (Socket s : idle) s.close();
      }
      Thread.sleep(300); // the closed connections give their places back
    }
  }

  @Test
  void theJavaExporterLogsTheReason() throws Exception {
    List<Socket> idle = holdIdle(node.httpPort());
    String line;
    try {
      line = ExporterLog.ofOneChatSpan("http://127.0.0.1:" + node.httpPort() + "/v1/traces");
    } finally {
      for (Socket s : idle) s.close();
    }
    assertTrue(line.contains("HTTP status code 429"), line);
    // the Status's message, not the raw JSON body
    assertTrue(line.contains("Error message: this address has 1 or more connections open"), line);
  }

  /** Two idle connections from this address: the listener is at its cap's threshold, the address over its share. */
  private static List<Socket> holdIdle(int port) throws Exception {
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Socket s = new Socket();
      s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      idle.add(s);
    }
    Thread.sleep(300); // accepted and counted by the node
    return idle;
  }

  /** The head and body of the answer on a new connection, read until the node closes it. */
  private static byte[][] exchange(int port, String request) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      s.setSoTimeout(15_000);
      s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().flush();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      for (int n; (n = in.read(buf)) > 0; ) all.write(buf, 0, n);
      byte[] bytes = all.toByteArray();
      for (int i = 0; i + 3 < bytes.length; i++) {
        if (bytes[i] == '\r' && bytes[i + 1] == '\n' && bytes[i + 2] == '\r' && bytes[i + 3] == '\n') {
          return new byte[][] {Arrays.copyOfRange(bytes, 0, i), Arrays.copyOfRange(bytes, i + 4, bytes.length)};
        }
      }
      throw new AssertionError("no answer head: " + new String(bytes, StandardCharsets.ISO_8859_1));
    }
  }
}
