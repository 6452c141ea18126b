package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Chunked uploads (trial t156, raw sockets against the jar). pekko-http refuses a chunk larger than its
 * {@code max-chunk-size} (1 MiB), below the gateway's 4 MiB and OTLP's 8 MiB body limits: a 2 MiB trace
 * batch or chat call sent as one chunk was refused; and every framing mistake of the client (a chunk
 * size that is not hex, a chunk not ended by CRLF, that oversized chunk) was answered 400
 * {@code incomplete_body} "the connection closed before the body was complete", while the connection
 * was open and waiting for the answer.
 */
class ChunkedUploadTest {
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-chunked-")), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static byte[] oneChunk(byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    out.writeBytes(body);
    out.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  private static RawHttp.Answer chunked(String requestLine, String headers, byte[] framed) throws Exception {
    return RawHttp.exchange(node.httpPort(), requestLine + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
        + headers + "\r\nTransfer-Encoding: chunked", framed, 30_000);
  }

  @Test
  void aBodyWithinItsRouteLimitIsTakenAsOneChunkOfMoreThanAMebibyte() throws Exception {
    byte[] traces = ("{\"resourceSpans\":[]" + " ".repeat(2 * 1024 * 1024) + "}").getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer otlp = chunked("POST /v1/traces", "", oneChunk(traces));
    assertEquals(200, otlp.status(), "a 2 MiB batch is within otlp.max-decoded-bytes: " + otlp.head() + otlp.body());

    byte[] chat = ("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
        + " ".repeat(2 * 1024 * 1024) + "}").getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer gateway = chunked("POST /v1/chat/completions",
        "\r\nX-Agent-Id: chunk-agent\r\nX-Session-Id: chunk-gw-1", oneChunk(chat));
    // This node serves no model for the agent: the call got past its body to the routing, whose 404 it is.
    assertEquals(404, gateway.status(), "a 2 MiB call is within gateway.max-body-bytes: " + gateway.head() + gateway.body());
    assertTrue(gateway.body().contains("model_not_found"), gateway.body());
  }

  @Test
  void aMalformedChunkedBodyIsSaidSoAndStoresNothing() throws Exception {
    byte[] event = "{\"agentId\":\"chunk-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}"
        .getBytes(StandardCharsets.UTF_8);
    String notHex = "zz\r\n" + new String(event, StandardCharsets.UTF_8) + "\r\n0\r\n\r\n";
    String noCrlf = Integer.toHexString(event.length) + "\r\n" + new String(event, StandardCharsets.UTF_8) + "XX0\r\n\r\n";
    String[][] routes = {
        {"POST /v1/sessions/chunk-bad-1/events", ""},
        {"POST /v1/traces", ""},
        {"POST /v1/chat/completions", "\r\nX-Agent-Id: chunk-agent\r\nX-Session-Id: chunk-bad-gw"}};
    for (String[] route : routes) {
      for (String framed : new String[] {notHex, noCrlf}) {
        RawHttp.Answer a = chunked(route[0], route[1], framed.getBytes(StandardCharsets.UTF_8));
        assertEquals(400, a.status(), route[0] + ": " + a.head() + a.body());
        assertFalse(a.body().contains("incomplete_body") || a.body().contains("connection closed"),
            route[0] + ": the connection is open, the framing is wrong: " + a.body());
        assertTrue(a.body().contains("chunked"), route[0] + " names the chunked framing: " + a.body());
      }
    }
    assertEquals(404, api.get("/v1/sessions/chunk-bad-1").status(), "nothing stored");
    assertEquals(404, api.get("/v1/sessions/chunk-bad-gw").status(), "nothing stored");
  }

  @Test
  void aChunkLargerThanEveryBodyLimitIsA413() throws Exception {
    byte[] start = (Integer.toHexString(64 * 1024 * 1024) + "\r\n{\"agentId\":").getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer a = chunked("POST /v1/sessions/chunk-big-1/events", "", start);
    assertEquals(413, a.status(), a.head() + a.body());
    assertEquals(404, api.get("/v1/sessions/chunk-big-1").status(), "nothing stored");
  }
}
