package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * RFC 9110 §10.1.1: an {@code Expect} the server does not meet may be refused with 417. pekko-http meets
 * {@code 100-continue} and ignored any other, so {@code Expect: bogus} on a write was a 202, stored
 * (trial t141). Now a 417 on both listeners, in each path's error shape, and nothing is processed;
 * {@code 100-continue} still gets its interim 100 and the upload is stored.
 */
class ExpectHeaderTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("expect-header")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static RawHttp.Answer post(int port, String path, String expect, String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return RawHttp.exchange(port, "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: " + expect
        + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length, bytes, 30_000);
  }

  private static String events(String eventId) {
    return "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"eventId\":\"" + eventId
        + "\",\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  @Test
  void anExpectationOtherThan100ContinueIsA417AndNothingIsStored() throws Exception {
    for (String expect : new String[] {"bogus", "100-continue, bogus"}) {
      RawHttp.Answer r = post(node.httpPort(), "/v1/sessions/expect-bogus/events", expect, events("e1"));
      assertEquals(417, r.status(), expect + ": " + r.head() + r.body());
      JsonNode error = JSON.readTree(r.body());
      assertEquals("expectation_failed", error.path("error").asText(), r.body());
      assertTrue(error.path("message").asText().contains("meets 100-continue only"), r.body());
    }
    assertEquals(404, new Http(node.httpPort()).get("/v1/sessions/expect-bogus").status(), "nothing stored");

    // the gateway's path answers in OpenAI's error object, as its other refusals
    RawHttp.Answer gateway = post(node.httpPort(), "/v1/chat/completions", "bogus",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertEquals(417, gateway.status(), gateway.head() + gateway.body());
    assertEquals("expectation_failed", JSON.readTree(gateway.body()).path("error").path("code").asText(), gateway.body());

    // OTLP, on the API port and its own: a google.rpc.Status (JSON for a JSON request)
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      RawHttp.Answer otlp = post(port, "/v1/traces", "bogus", "{\"resourceSpans\":[]}");
      assertEquals(417, otlp.status(), port + ": " + otlp.head() + otlp.body());
      JsonNode status = JSON.readTree(otlp.body());
      assertEquals(3, status.path("code").asInt(), otlp.body());
      assertTrue(status.path("message").asText().contains("meets 100-continue only"), otlp.body());
    }
  }

  @Test
  void expect100ContinueStillGetsTheInterimAnswerAndTheUploadIsStored() throws Exception {
    StringBuilder batch = new StringBuilder("{\"agentId\":\"a\",\"events\":[");
    for (int i = 0; i < 10; i++) {
      batch.append(i == 0 ? "" : ",").append("{\"type\":\"message\",\"eventId\":\"big-").append(i)
          .append("\",\"role\":\"user\",\"content\":\"").append("x".repeat(40_000)).append("\"}");
    }
    byte[] body = batch.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    // The session's first write waits for its shard; on a loaded machine that outlasted the ask (503).
    Http http = new Http(node.httpPort());
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (http.post("/v1/sessions/expect-continue/events", events("warm-up")).status() == 503
        && System.nanoTime() < deadline) {
      Thread.sleep(500);
    }
    try (Socket s = RawHttp.open(node.httpPort(), 30_000)) {
      OutputStream out = s.getOutputStream();
      out.write(("POST /v1/sessions/expect-continue/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          + "Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      assertEquals("HTTP/1.1 100 Continue", line(in));
      while (!line(in).isEmpty()) {
        // the interim answer's own headers (Server, Date)
      }
      out.write(body);
      out.flush();
      RawHttp.Answer r = RawHttp.read(in);
      assertEquals(202, r.status(), r.head() + r.body());
      assertEquals(10, JSON.readTree(r.body()).path("accepted").asInt(), r.body());
      assertEquals(11, http.get("/v1/sessions/expect-continue").json().get("messages").size());
    }
  }

  private static String line(InputStream in) throws Exception {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) line.write(b);
    return line.toString(StandardCharsets.ISO_8859_1).strip();
  }
}
