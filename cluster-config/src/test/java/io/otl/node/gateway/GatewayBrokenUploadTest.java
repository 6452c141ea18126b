package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.RawHttp;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client that breaks its own upload to {@code POST /v1/chat/completions} gets a 4xx, not a 5xx: a
 * connection closed mid-body was a 500 with a stack trace at ERROR per request (60 such requests
 * wrote 1,500 log lines), and a body trickled past {@code gateway.timeout} a 503 {@code journal_timeout}
 * that blamed the node. A real node; the uploads are raw bytes over loopback.
 */
class GatewayBrokenUploadTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "upload-breaker";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-broken-upload",
        Map.of("agentscope.training.gateway.timeout", "2s")).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static String head(int length) {
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Agent-Id: " + AGENT
        + "\r\nContent-Length: " + length;
  }

  private static int port() {
    return gateway.uri("/").getPort();
  }

  @Test
  void uploadsClosedMidBodyAreNoServerErrors() throws Exception {
    for (int i = 0; i < 20; i++) {
      RawHttp.abort(port(), head(10_000), "{\"model\":\"m\",\"messages\":[".getBytes(StandardCharsets.UTF_8));
    }
    // Each aborted call is answered (to nobody) once the node sees its connection close.
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (answered() < 20 && System.nanoTime() < deadline) Thread.sleep(50);
    String scrape = gateway.api.get("/metrics").body();
    assertFalse(scrape.contains("route=\"POST /v1/chat/completions\",status=\"500\""), scrape);
    assertTrue(scrape.contains("route=\"POST /v1/chat/completions\",status=\"400\"} 20"), scrape);
    assertEquals(200, chatOnce().status());
  }

  /** Chat completions counted on /metrics so far, whatever their status. */
  private static double answered() {
    double sum = 0;
    for (String line : gateway.api.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_http_requests_total{route=\"POST /v1/chat/completions\"")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  @Test
  void aBodyTrickledPastTheGatewayTimeoutIs408() throws Exception {
    long before = gateway.simulatorRequests();
    try (Socket s = RawHttp.open(port(), 30_000)) {
      OutputStream out = s.getOutputStream();
      out.write((head(1000) + "\r\n\r\n{").getBytes(StandardCharsets.UTF_8));
      out.flush();
      // Silent after one byte, well inside the 60 s idle timeout: the 2 s gateway timeout ends it.
      RawHttp.Answer a = RawHttp.read(s.getInputStream());
      assertEquals(408, a.status(), a.head() + a.body());
      assertEquals("request_timeout", JSON.readTree(a.body()).path("error").path("code").asText(), a.body());
      assertTrue(a.head().toLowerCase().contains("connection: close"), a.head());
    }
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(200, chatOnce().status());
  }

  private static RawHttp.Answer chatOnce() throws Exception {
    byte[] body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(StandardCharsets.UTF_8);
    return RawHttp.exchange(port(), head(body.length) + "\r\nConnection: close", body, 30_000);
  }
}
