package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.otl.http.gateway.GatewayRoutes;
import io.otl.node.testing.Await;
import io.otl.node.testing.LogCapture;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client that half-closes its connection after its request (it sends FIN and keeps reading: legal
 * HTTP/1.1, what some proxies and {@code shutdownOutput()} do) gets its whole answer, streamed or not,
 * and its call holds its {@code gateway.max-in-flight} slot until the answer is out. The stream was
 * claimed at the FIN as if the client were gone (review of t156): the client read an empty 200 and its
 * slot was free while the model still wrote. A client whose connection is reset before the first byte
 * is gone: its answer is read to its end, recorded aborted, and holds its slot meanwhile.
 */
class GatewayHalfCloseTest {
  private static GatewayTestNode g;
  private static HttpServer held;

  private static final byte[] ANSWER = ("{\"id\":\"chatcmpl-half\",\"object\":\"chat.completion\",\"created\":1,"
      + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"still here\"},"
      + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);
  private static final byte[] STREAM = ("data: {\"id\":\"chatcmpl-half-sse\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"still here\"},"
      + "\"finish_reason\":null}]}\n\ndata: {\"id\":\"chatcmpl-half-sse\",\"object\":\"chat.completion.chunk\",\"created\":1,"
      + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
      .getBytes(StandardCharsets.UTF_8);
  private static final Held WHOLE = new Held();
  private static final Held STREAMED = new Held();
  private static final Held RESET = new Held();

  /** A model server's call that answers only when the test releases it. */
  private static final class Held {
    final CountDownLatch called = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    /** After the headers, the body waits for this (released at once but for {@link #RESET}). */
    final CountDownLatch body = new CountDownLatch(1);
  }

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-half-close", Map.of("agentscope.training.gateway.max-in-flight", 1))
        .serving("half-probe");
    held = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    held.setExecutor(Executors.newCachedThreadPool());
    held.createContext("/whole/v1/chat/completions", answerOnRelease(WHOLE, "application/json", ANSWER));
    held.createContext("/sse/v1/chat/completions", answerOnRelease(STREAMED, "text/event-stream", STREAM));
    held.createContext("/reset/v1/chat/completions", answerOnRelease(RESET, "text/event-stream", STREAM));
    WHOLE.body.countDown();
    STREAMED.body.countDown();
    held.start();
    serveFrom("half-whole", "/whole/v1");
    serveFrom("half-sse", "/sse/v1");
    serveFrom("half-reset", "/reset/v1");
  }

  @AfterAll
  static void stop() {
    for (Held h : new Held[] {WHOLE, STREAMED, RESET}) {
      h.release.countDown();
      h.body.countDown();
    }
    if (g != null) g.close();
    if (held != null) held.stop(0);
  }

  private static com.sun.net.httpserver.HttpHandler answerOnRelease(Held h, String contentType, byte[] body) {
    return exchange -> {
      exchange.getRequestBody().readAllBytes();
      h.called.countDown();
      try {
        h.release.await(60, TimeUnit.SECONDS);
        exchange.getResponseHeaders().add("Content-Type", contentType);
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().flush();
        h.body.await(60, TimeUnit.SECONDS);
        exchange.getResponseBody().write(body);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.close();
    };
  }

  private static void serveFrom(String agent, String path) throws InterruptedException {
    g.servingAt(agent, "http://127.0.0.1:" + held.getAddress().getPort() + path);
  }

  @Test
  void aStreamReachesAClientThatHalfClosedBeforeItsFirstByte() throws Exception {
    String read = halfClosedCall("half-sse", "half-sse-1", true, STREAMED);
    assertTrue(read.startsWith("HTTP/1.1 200"), read);
    assertTrue(read.contains("still here") && read.contains("data: [DONE]"), read);
  }

  @Test
  void aWholeAnswerReachesAClientThatHalfClosedBeforeIt() throws Exception {
    String read = halfClosedCall("half-whole", "half-whole-1", false, WHOLE);
    assertTrue(read.startsWith("HTTP/1.1 200"), read);
    assertTrue(read.contains("\"content\":\"still here\""), read);
  }

  /**
   * Sends a call, half-closes the connection, and once the node has seen the FIN checks that the call still
   * holds the only slot, then lets the model answer and reads the whole response.
   */
  private static String halfClosedCall(String agent, String session, boolean stream, Held h) throws Exception {
    try (LogCapture gatewayLog = new LogCapture(GatewayRoutes.class);
         Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
      s.setSoTimeout(30_000);
      send(s, agent, session, stream);
      assertTrue(h.called.await(30, TimeUnit.SECONDS), "the model server was never called");
      s.shutdownOutput(); // FIN: the client has sent all it will, and reads on
      Await.until("the node saw the FIN of " + session, Duration.ofSeconds(30), () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session " + session + " ") && l.contains("connection ended")));
      assertEquals(429, probe().statusCode(), "the half-closed client's call holds the only slot");
      h.release.countDown();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /**
   * A client reset before the first byte is gone: the node reads its answer to the end, records it
   * aborted, and the call keeps its slot until then (the drained answer was uncounted).
   */
  @Test
  void aStreamWhoseClientResetKeepsItsSlotUntilItIsRead() throws Exception {
    try (LogCapture gatewayLog = new LogCapture(GatewayRoutes.class)) {
      Socket s = new Socket("127.0.0.1", g.node.httpPort());
      send(s, "half-reset", "half-reset-1", true);
      assertTrue(RESET.called.await(30, TimeUnit.SECONDS), "the model server was never called");
      s.setSoLinger(true, 0);
      s.close(); // RST
      Await.until("the node saw the connection of half-reset-1 end", Duration.ofSeconds(30),
          () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session half-reset-1 ") && l.contains("connection ended")));
      RESET.release.countDown(); // the model's headers: the call is answered, its body still to come
      Await.until("the gateway answered half-reset-1", Duration.ofSeconds(30), () -> g.api.get("/metrics").body(),
          m -> m.contains("otl_gateway_requests_total{agent=\"half-reset\",version=\"v1\",status=\"200\"}"));
      assertEquals(429, probe().statusCode(), "the answer being read for a gone client holds its slot");
      RESET.body.countDown();
    }
    JsonNode answer = g.awaitSession("half-reset-1", j -> j.path("messages").size() == 2).path("messages").get(1);
    assertEquals("still here", answer.path("content").asText(), answer.toString());
    assertEquals("true", answer.path("inference").path("aborted").asText(), answer.toString());
    HttpResponse<String> after = Await.until("the slot is free once the answer was read", Duration.ofSeconds(20),
        GatewayHalfCloseTest::probe, r -> r.statusCode() != 429);
    assertEquals(200, after.statusCode(), after.body());
  }

  /** A call of another agent (the simulator answers it at once): 429 while another call holds the slot. */
  private static HttpResponse<String> probe() {
    try {
      return HttpClient.newHttpClient().send(HttpRequest.newBuilder(g.uri("/v1/chat/completions"))
          .header("X-Agent-Id", "half-probe").header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(
              "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"probe\"}]}"))
          .build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void send(Socket s, String agent, String session, boolean stream) throws IOException {
    byte[] body = ("{\"model\":\"default\",\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"are you there?\"}]}").getBytes(StandardCharsets.UTF_8);
    OutputStream out = s.getOutputStream();
    out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "X-Agent-Id: " + agent + "\r\nX-Session-Id: " + session + "\r\nContent-Length: " + body.length
        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }
}
