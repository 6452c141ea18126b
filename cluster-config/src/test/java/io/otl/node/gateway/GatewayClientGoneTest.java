package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.otl.http.ClientConnection;
import io.otl.http.gateway.GatewayRoutes;
import io.otl.node.testing.Await;
import io.otl.node.testing.LogCapture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
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
 * An agent that gives up before a non-streamed answer is written (its client timed out and closed the
 * connection) never gets that answer: it is recorded {@code inference.aborted}, as a stream the
 * client leaves is. It was recorded as delivered, and trained on as an answer the agent had seen.
 */
class GatewayClientGoneTest {
  private static GatewayTestNode g;

  private static final byte[] ANSWER = ("{\"id\":\"chatcmpl-held\",\"object\":\"chat.completion\",\"created\":1,"
      + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"too late\"},"
      + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);
  private static final CountDownLatch CALLED = new CountDownLatch(1);
  private static final CountDownLatch RELEASE = new CountDownLatch(1);
  private static HttpServer held;
  private static final byte[] STREAM = ("data: {\"id\":\"chatcmpl-held-sse\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"too late\"},"
      + "\"finish_reason\":null}]}\n\ndata: {\"id\":\"chatcmpl-held-sse\",\"object\":\"chat.completion.chunk\",\"created\":1,"
      + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
      .getBytes(StandardCharsets.UTF_8);
  private static final CountDownLatch STREAM_CALLED = new CountDownLatch(1);
  private static final CountDownLatch STREAM_RELEASE = new CountDownLatch(1);
  private static final CountDownLatch PACED_RELEASE = new CountDownLatch(1);
  private static final CountDownLatch RESET_CALLED = new CountDownLatch(1);
  private static final CountDownLatch RESET_RELEASE = new CountDownLatch(1);

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-client-gone", Map.of()).serving("gone");
    // A model server that answers only when the test says so: the client must have left first.
    held = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    held.setExecutor(Executors.newCachedThreadPool());
    held.createContext("/v1/chat/completions", answerOnRelease(CALLED, RELEASE, "application/json", ANSWER));
    // The same for a streamed answer: its first byte comes after the client has left.
    held.createContext("/sse/v1/chat/completions", answerOnRelease(STREAM_CALLED, STREAM_RELEASE, "text/event-stream", STREAM));
    // The same stream, for a client that resets its connection before the first byte.
    held.createContext("/sse-reset/v1/chat/completions",
        answerOnRelease(RESET_CALLED, RESET_RELEASE, "text/event-stream", STREAM));
    // A stream paced as a model writes it, for a client that stops reading at the finish reason.
    held.createContext("/paced/v1/chat/completions", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
      exchange.sendResponseHeaders(200, 0);
      try {
        for (String event : new String[] {paced("\"one\"", null), paced("\" two\"", null), paced(null, "stop")}) {
          exchange.getResponseBody().write(event.getBytes(StandardCharsets.UTF_8));
          exchange.getResponseBody().flush();
        }
        PACED_RELEASE.await(60, TimeUnit.SECONDS); // the [DONE] once the client has left
        exchange.getResponseBody().write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      } catch (IOException | InterruptedException gone) {
        // the gateway closed its side: nothing more to write
      }
      exchange.close();
    });
    held.start();
    serveFrom("gone-paced", "/paced/v1");
    serveFrom("gone-sse", "/sse/v1");
    serveFrom("gone-reset", "/sse-reset/v1");
    serveFrom("gone-held", "/v1");
  }

  /** Answers {@code body} once the test releases it, having told the test it was called. */
  private static com.sun.net.httpserver.HttpHandler answerOnRelease(CountDownLatch called, CountDownLatch release,
      String contentType, byte[] body) {
    return exchange -> {
      exchange.getRequestBody().readAllBytes();
      called.countDown();
      try {
        release.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.getResponseHeaders().add("Content-Type", contentType);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    };
  }

  /** The agent's only version, STABLE, served by the held model server under {@code path}. */
  private static void serveFrom(String agent, String path) throws InterruptedException {
    assertEquals(201, g.api.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\","
        + "\"endpoint\":\"http://127.0.0.1:" + held.getAddress().getPort() + path + "\"}").status());
    g.awaitState(agent, "v1", "STABLE");
  }

  @AfterAll
  static void stop() {
    RELEASE.countDown();
    PACED_RELEASE.countDown();
    STREAM_RELEASE.countDown();
    RESET_RELEASE.countDown();
    if (g != null) g.close();
    if (held != null) held.stop(0);
  }

  @Test
  void anAnswerWhoseClientClosedFirstIsRecordedAborted() throws Exception {
    try (LogCapture gatewayLog = new LogCapture(GatewayRoutes.class)) {
      try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
        send(s, "gone-held", "gone-1", "", 0);
        assertTrue(CALLED.await(30, TimeUnit.SECONDS), "the model server was never called");
      } // closed while the model server is still answering
      // The node reads the closed connection on its own time: the answer comes only once it has.
      Await.until("the node saw the connection of gone-1 end", Duration.ofSeconds(30), () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session gone-1 ") && l.contains("connection ended")));
      RELEASE.countDown();
    }
    assertEquals("true", answerOf("gone-1").path("inference").path("aborted").asText());
  }

  /**
   * A streamed call whose client gave up before the first byte (openai's timeout on a slow first token,
   * trial t104): the node still writes the whole stream into the half-closed connection, and recorded
   * it as a whole answer the agent had read (exported as training text, no {@code aborted} counted).
   */
  @Test
  void aStreamWhoseClientClosedBeforeItsFirstByteIsRecordedAborted() throws Exception {
    try (LogCapture gatewayLog = new LogCapture(GatewayRoutes.class)) {
      try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
        send(s, "gone-sse", "gone-sse-1", "", 0, true);
        assertTrue(STREAM_CALLED.await(30, TimeUnit.SECONDS), "the model server was never called");
      }
      Await.until("the node saw the connection of gone-sse-1 end", Duration.ofSeconds(30),
          () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session gone-sse-1 ") && l.contains("connection ended")));
      STREAM_RELEASE.countDown();
    }
    JsonNode answer = answerOf("gone-sse-1");
    assertEquals("too late", answer.path("content").asText(), answer.toString());
    assertEquals("true", answer.path("inference").path("aborted").asText(), answer.toString());
  }

  /**
   * The same, but the client's connection is reset (RST: a process killed, a proxy or NAT dropping it)
   * rather than closed (trial t156). pekko-http then drops the response without running its body, so the
   * stream never started: nothing of the call was recorded, not even the question (a closed connection
   * records it and the answer, aborted), the session's {@code result} was a 503 "not recorded yet" until
   * the turn's own time ran out, and the model server's answer was left unread, its pooled connection
   * held for a minute with a WARN line ("Response entity was not subscribed") for each such call.
   */
  @Test
  void aStreamWhoseClientResetBeforeItsFirstByteIsRecordedAborted() throws Exception {
    try (LogCapture gatewayLog = new LogCapture(GatewayRoutes.class)) {
      Socket s = new Socket("127.0.0.1", g.node.httpPort());
      send(s, "gone-reset", "gone-reset-1", "", 0, true);
      assertTrue(RESET_CALLED.await(30, TimeUnit.SECONDS), "the model server was never called");
      s.setSoLinger(true, 0);
      s.close(); // RST
      Await.until("the node saw the connection of gone-reset-1 end", Duration.ofSeconds(30),
          () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session gone-reset-1 ") && l.contains("connection ended")));
      RESET_RELEASE.countDown();
    }
    JsonNode answer = answerOf("gone-reset-1");
    assertEquals("too late", answer.path("content").asText(), answer.toString());
    assertEquals("true", answer.path("inference").path("aborted").asText(), answer.toString());
    long start = System.nanoTime();
    assertEquals(202, g.api.post("/v1/sessions/gone-reset-1/events", "{\"agentId\":\"gone-reset\",\"events\":"
        + "[{\"type\":\"result\",\"status\":\"SUCCESS\",\"eventId\":\"r1\"}]}").status(), "the result is taken");
    assertTrue(System.nanoTime() - start < 3_000_000_000L, "the result waited for a turn that had ended");
  }

  /**
   * openai's streaming loops break at the finish reason: such a client closes its connection before the
   * [DONE] that follows, with the whole answer read. Taken for gone (the check ran on every chunk), its
   * answer was recorded aborted, counted against the version, and stored again from its next call's history.
   */
  @Test
  void aClientThatLeavesAtTheFinishReasonReadTheWholeAnswer() throws Exception {
    int watched;
    try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
      send(s, "gone-paced", "gone-paced-1", "", 0, true);
      InputStream in = s.getInputStream();
      ByteArrayOutputStream read = new ByteArrayOutputStream();
      for (int b; !read.toString(StandardCharsets.UTF_8).contains("\"finish_reason\":\"stop\"") && (b = in.read()) >= 0; ) {
        read.write(b);
      }
      watched = ClientConnection.openWatches();
    } // closed before the model server's [DONE]
    // The [DONE] only once the node has seen the client go (its watch on the connection ended).
    Await.until("the node to see the client of gone-paced-1 go", Duration.ofSeconds(30),
        ClientConnection::openWatches, open -> open < watched);
    PACED_RELEASE.countDown();
    JsonNode answer = answerOf("gone-paced-1");
    assertEquals("one two", answer.path("content").asText(), answer.toString());
    assertTrue(answer.path("inference").path("aborted").isNull(), answer.toString());
  }

  private static String paced(String content, String finish) {
    return "data: {\"id\":\"chatcmpl-paced\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        + "\"choices\":[{\"index\":0,\"delta\":" + (content == null ? "{}" : "{\"content\":" + content + "}")
        + ",\"finish_reason\":" + (finish == null ? "null" : "\"" + finish + "\"") + "}]}\n\n";
  }

  @Test
  void anAnswerReadIsDeliveredAlsoWhenTheRequestAsksToClose() throws Exception {
    for (String[] c : new String[][] {{"gone-2", "Connection: close\r\n"}, {"gone-3", ""}}) {
      try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
        send(s, "gone", c[0], c[1], 300);
        String head = readHead(s.getInputStream());
        assertTrue(head.startsWith("HTTP/1.1 200"), head);
      }
      JsonNode answer = answerOf(c[0]);
      assertTrue(answer.path("inference").path("aborted").isNull(), answer.toString());
    }
  }

  private static void send(Socket s, String agent, String session, String extraHeaders, int delayMs)
      throws IOException {
    send(s, agent, session, extraHeaders, delayMs, false);
  }

  private static void send(Socket s, String agent, String session, String extraHeaders, int delayMs, boolean stream)
      throws IOException {
    byte[] body = ("{\"model\":\"default\",\"stream\":" + stream + ",\"simulator_delay_ms\":" + delayMs
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"are you there?\"}]}").getBytes(StandardCharsets.UTF_8);
    OutputStream out = s.getOutputStream();
    out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "X-Agent-Id: " + agent + "\r\nX-Session-Id: " + session + "\r\n" + extraHeaders + "Content-Length: " + body.length
        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }

  /** The response's status line and headers, read once the answer comes. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) break;
      head.write(b);
    }
    return head.toString(StandardCharsets.US_ASCII);
  }

  private static JsonNode answerOf(String session) throws Exception {
    return Await.until("the turn of " + session + " recorded", Duration.ofSeconds(20),
        () -> g.api.get("/v1/sessions/" + session),
        r -> r.status() == 200 && r.json().path("messages").size() == 2).json().path("messages").get(1);
  }
}
