package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * One client address holding more idle connections than pekko-http's max-connections locked every
 * other client out: their connections waited in the backlog, unanswered, for as long as the idle
 * ones stayed open. The hostile client here connects from 127.0.0.2 (Linux routes all of 127/8 to
 * loopback), the legitimate one from 127.0.0.1. The node serves 32 connections at once
 * (pekko.http.server.max-connections) and, once 16 are open, lets one address hold 8.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class IdleConnectionLockoutTest {
  private static final int MAX_CONNECTIONS = 32;
  private static final int PER_ADDRESS = 8;
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "pekko.http.server.max-connections", MAX_CONNECTIONS,
            "agentscope.training.http.max-connections-per-address", PER_ADDRESS))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-lockout-")), true)));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  @Order(2)
  void aLegitimateClientIsServedWhileOneAddressHoldsManyIdleConnections() throws Exception {
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < MAX_CONNECTIONS + 16; i++) idle.add(connectFrom("127.0.0.2"));
      // Before the cap: this waited in the backlog until the read timed out.
      RawHttp.Answer legit = RawHttp.exchange(node.httpPort(), "GET /health/live HTTP/1.1\r\nHost: node", null, 15_000);
      assertEquals(200, legit.status(), legit.head());

      // One more connection from the busy address is refused with a reason, and closed.
      try (Socket extra = connectFrom("127.0.0.2")) {
        send(extra, "GET /v1/jobs HTTP/1.1\r\nHost: node");
        RawHttp.Answer refused = RawHttp.read(extra.getInputStream());
        assertEquals(429, refused.status(), refused.head());
        assertTrue(refused.body().contains("\"error\":\"too_many_connections\""), refused.body());
        assertTrue(refused.head().toLowerCase().contains("connection: close"), refused.head());
        assertTrue(extra.getInputStream().read() < 0, "the refused connection stays open");
      }
      // The gateway's path answers in OpenAI's error object, which its clients read.
      try (Socket extra = connectFrom("127.0.0.2")) {
        send(extra, "POST /v1/chat/completions HTTP/1.1\r\nHost: node\r\nContent-Type: application/json\r\n"
            + "Content-Length: 2\r\n\r\n{}");
        RawHttp.Answer refused = RawHttp.read(extra.getInputStream());
        assertEquals(429, refused.status(), refused.head());
        assertTrue(refused.body().contains("\"code\":\"too_many_connections\""), refused.body());
      }
      // Both refusals show on /metrics as the API's other 429s do (trial t111: only in the log). Read here,
      // while the idle connections are open: after they close, servedFrom may meet a refusal of its own
      // until the node has counted them closed, which the count would include.
      java.net.http.HttpResponse<String> metrics = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + node.httpPort() + "/metrics"))
              .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
      assertEquals(200, metrics.statusCode());
      assertTrue(metrics.body().contains("otl_http_requests_total{route=\"overloaded\",status=\"429\"} 2"),
          metrics.body());
      // The connections within the cap are served as usual.
      send(idle.get(0), "GET /health/live HTTP/1.1\r\nHost: node");
      assertEquals(200, RawHttp.read(idle.get(0).getInputStream()).status());
    } finally {
      for (Socket s : idle) s.close();
    }
    // Closed connections give their places back: the address is served again.
    assertEquals(200, servedFrom("127.0.0.2"));
  }

  /** One connection per concurrent request, as java.net.http opens them: on a quiet node, served in full. */
  @Test
  @Order(1)
  void aBurstOverTheCapIsServedWhileTheNodeHasRoom() throws Exception {
    List<Socket> open = new ArrayList<>();
    try {
      for (int i = 0; i < MAX_CONNECTIONS / 2 - 1; i++) open.add(connectFrom("127.0.0.3"));
      for (Socket s : open) {
        send(s, "GET /health/live HTTP/1.1\r\nHost: node");
        assertEquals(200, RawHttp.read(s.getInputStream()).status());
      }
    } finally {
      for (Socket s : open) s.close();
    }
  }

  /** The status of a request from {@code address}, retried while its closed connections are still counted. */
  private static int servedFrom(String address) throws IOException, InterruptedException {
    int status = -1;
    for (int attempt = 0; attempt < 100 && status != 200; attempt++) {
      if (attempt > 0) Thread.sleep(100);
      try (Socket s = connectFrom(address)) {
        send(s, "GET /health/live HTTP/1.1\r\nHost: node");
        status = RawHttp.read(s.getInputStream()).status();
      }
    }
    return status;
  }

  private static Socket connectFrom(String address) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(InetAddress.getByName(address), 0));
    s.connect(new InetSocketAddress("127.0.0.1", node.httpPort()), 5_000);
    s.setSoTimeout(15_000);
    return s;
  }

  private static void send(Socket s, String head) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write((head.contains("\r\n\r\n") ? head : head + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
