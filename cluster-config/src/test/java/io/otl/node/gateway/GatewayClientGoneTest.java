package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
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

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-client-gone", Map.of()).serving("gone");
  }

  @AfterAll
  static void stop() {
    if (g != null) g.close();
  }

  @Test
  void anAnswerWhoseClientClosedFirstIsRecordedAborted() throws Exception {
    try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
      send(s, "gone-1", "", 1500);
    } // closed while the model server is still answering
    assertEquals("true", answerOf("gone-1").path("inference").path("aborted").asText());
  }

  @Test
  void anAnswerReadIsDeliveredAlsoWhenTheRequestAsksToClose() throws Exception {
    for (String[] c : new String[][] {{"gone-2", "Connection: close\r\n"}, {"gone-3", ""}}) {
      try (Socket s = new Socket("127.0.0.1", g.node.httpPort())) {
        send(s, c[0], c[1], 300);
        String head = readHead(s.getInputStream());
        assertTrue(head.startsWith("HTTP/1.1 200"), head);
      }
      JsonNode answer = answerOf(c[0]);
      assertTrue(answer.path("inference").path("aborted").isNull(), answer.toString());
    }
  }

  private static void send(Socket s, String session, String extraHeaders, int delayMs) throws IOException {
    byte[] body = ("{\"model\":\"default\",\"simulator_delay_ms\":" + delayMs
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"are you there?\"}]}").getBytes(StandardCharsets.UTF_8);
    OutputStream out = s.getOutputStream();
    out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "X-Agent-Id: gone\r\nX-Session-Id: " + session + "\r\n" + extraHeaders + "Content-Length: " + body.length
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
