package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A gzip body of {@code POST /v1/traces} is decoded whole or refused. {@code GZIPInputStream} ended
 * silently at bytes after the gzip stream (junk, or a second member cut short): the export was a 200
 * that stored the first member's spans and dropped the rest, where JSON bodies refuse any data after
 * the document; a truncated body was refused with "…not valid gzip: null" (trial t45). Concatenated
 * members, which RFC 1952 allows, are still read in full.
 */
class OtlpStrictGzipTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-strict-gzip")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  /** One chat span of {@code session} in the OTLP JSON encoding. */
  private static byte[] chat(String session, String spanId) throws Exception {
    return ("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\","
        + "\"spanId\":\"" + spanId + "\",\"name\":\"chat\",\"startTimeUnixNano\":\"1700000000000000000\","
        + "\"endTimeUnixNano\":\"1700000001000000000\",\"attributes\":["
        + "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}},"
        + "{\"key\":\"gen_ai.agent.name\",\"value\":{\"stringValue\":\"gzip-agent\"}},"
        + "{\"key\":\"gen_ai.conversation.id\",\"value\":{\"stringValue\":\"" + session + "\"}},"
        + "{\"key\":\"gen_ai.input.messages\",\"value\":{\"stringValue\":"
        + JSON.writeValueAsString("[{\"role\":\"user\",\"content\":\"hi\"}]") + "}}]}]}]}]}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] gzip(byte[] raw) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream z = new GZIPOutputStream(out)) {
      z.write(raw);
    }
    return out.toByteArray();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static Http.Response post(byte[] body) {
    return http.postBytes("/v1/traces", body, "application/json", "Content-Encoding", "gzip");
  }

  @Test
  void bytesAfterTheGzipStreamAreRefusedAndNothingIsStored() throws Exception {
    byte[] first = gzip(chat("gz-junk", "0000000000000001"));
    byte[] second = gzip(chat("gz-junk-2", "0000000000000002"));
    byte[][] bodies = {
        concat(first, "junk".getBytes(StandardCharsets.US_ASCII)),
        concat(first, Arrays.copyOf(second, 12)), // a second member cut inside its first 26 bytes
        concat(first, Arrays.copyOf(second, second.length - 4))};
    for (byte[] body : bodies) {
      Http.Response r = post(body);
      assertEquals(400, r.status(), r.body());
      JsonNode error = r.json();
      assertEquals("invalid_otlp", error.path("error").asText(), r.body());
      String message = error.path("message").asText();
      assertTrue(message.startsWith("Content-Encoding is gzip but the body is not valid gzip: "), message);
      assertFalse(message.endsWith("null"), message);
    }
    assertEquals(404, http.get("/v1/sessions/gz-junk").status(), "nothing stored from a refused export");
    assertEquals(404, http.get("/v1/sessions/gz-junk-2").status());
  }

  @Test
  void aTruncatedGzipBodySaysSo() throws Exception {
    byte[] whole = gzip(chat("gz-cut", "0000000000000003"));
    for (int cut : new int[] {whole.length - 6, 15, 1}) {
      Http.Response r = post(Arrays.copyOf(whole, cut));
      assertEquals(400, r.status(), r.body());
      String message = r.json().path("message").asText();
      assertTrue(message.endsWith("it ends before the gzip stream does (truncated)")
          || message.endsWith("it does not start with a gzip header"), message);
    }
    byte[] corrupted = whole.clone();
    corrupted[corrupted.length - 5] ^= 0x01; // the CRC-32
    assertTrue(post(corrupted).json().path("message").asText().contains("CRC-32"));
    assertEquals(404, http.get("/v1/sessions/gz-cut").status(), "nothing stored");
  }

  @Test
  void concatenatedMembersAreReadInFull() throws Exception {
    assertEquals(200, post(gzip(chat("gz-members", "0000000000000004"))).status());
    // One document split across two members (what `cat a.gz b.gz` makes) decodes to the whole document:
    // a decoder that stopped after the first member would read cut JSON and answer 400.
    byte[] one = chat("gz-members-split", "0000000000000005");
    byte[] split = concat(gzip(Arrays.copyOf(one, 40)), gzip(Arrays.copyOfRange(one, 40, one.length)));
    Http.Response r = post(split);
    assertEquals(200, r.status(), r.body());
    assertEquals(1, http.get("/v1/sessions/gz-members-split").json().path("messages").size());
    assertEquals(1, http.get("/v1/sessions/gz-members").json().path("messages").size(), "the same span, once");
  }
}
