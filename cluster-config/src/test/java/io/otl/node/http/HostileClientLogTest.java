package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.LogCapture;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What an unauthenticated client could make the node write into its log and its 5xx series, one
 * request at a time and as fast as it could send (trial t57, a real node over loopback):
 * <ul>
 *   <li>an upload reset mid-body (RST: a client killed while sending, a proxy or NAT dropping it) was a
 *       500 on every write route and the gateway, with an ERROR line each (1,000 resets wrote 2,000
 *       lines); a connection closed normally (FIN) was already a 400 {@code incomplete_body};</li>
 *   <li>{@code GET /console/..%2F<text>} made pekko-http's resource directive log a WARN line per
 *       request holding the decoded path, whatever personal data the client put in it.</li>
 * </ul>
 */
class HostileClientLogTest {
  private static final int RESETS = 6;
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(
        TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-hostile-log-")), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  /** Each write route's request line and headers, and the label /metrics counts it under. */
  private record Upload(String head, String label) {}

  private static final List<Upload> UPLOADS = List.of(
      new Upload("POST /v1/sessions/reset-s1/events HTTP/1.1\r\nContent-Type: application/json",
          "POST /v1/sessions/{id}/events"),
      new Upload("PUT /v1/training/reset-agent/policy HTTP/1.1\r\nContent-Type: application/json",
          "PUT /v1/training/{id}/policy"),
      new Upload("POST /v1/feedback/rate HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded",
          "POST /v1/feedback/rate"),
      new Upload("POST /v1/traces HTTP/1.1\r\nContent-Type: application/json", "POST /v1/traces"),
      new Upload("POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\nX-Agent-Id: reset-agent",
          "POST /v1/chat/completions"));

  @Test
  void uploadsResetMidBodyAreClientErrorsAndLogNoError() throws Exception {
    try (LogCapture log = LogCapture.everything()) {
      for (Upload u : UPLOADS) {
        for (int i = 0; i < RESETS; i++) {
          int asked = RawHttp.resetMidBody(node.httpPort(), u.head() + "\r\nHost: x\r\nContent-Length: 10000",
              "{\"agentId\":\"reset-agent\",\"events\":[".getBytes(StandardCharsets.UTF_8));
          assertEquals(100, asked, u.label() + ": the node asks for the body before it is reset");
        }
      }
      // Each reset upload is answered (to nobody) and counted once the node sees its connection end.
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (UPLOADS.stream().anyMatch(u -> counted(u.label(), "") < RESETS) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      String scrape = api.get("/metrics").body();
      for (Upload u : UPLOADS) {
        assertEquals(RESETS, counted(u.label(), "400"), u.label() + " counts each reset as a 400:\n" + scrape);
        assertEquals(RESETS, counted(u.label(), ""), u.label() + " has no other status:\n" + scrape);
      }
      assertEquals(List.of(), log.lines("ERROR"), "a client's reset is no error of the node");
    }
    assertEquals(404, api.get("/v1/sessions/reset-s1").status(), "nothing stored");
    assertEquals(202, api.post("/v1/sessions/reset-s2/events",
        "{\"agentId\":\"reset-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}")
        .status(), "the node still takes writes");
  }

  @Test
  void consolePathsThatAreNoFileAre404sThatLogNothing() throws Exception {
    List<String> sent = List.of("/console/..%2Fjane.doe@example.com%2F13812345678",
        "/console/..%2F..%2Fetc%2Fpasswd", "/console/%2e%2e/%2e%2e/jane.doe@example.com",
        "/console/js/..%2F..%2F13812345678", "/console/.hidden", "/console/js%2Fapp.js");
    try (LogCapture log = LogCapture.everything()) {
      for (String path : sent) {
        RawHttp.Answer a = RawHttp.exchange(node.httpPort(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close",
            null, 10_000);
        assertEquals(404, a.status(), path + " → " + a.head());
        assertFalse(a.body().contains("jane.doe") || a.body().contains("13812345678"), a.body());
      }
      // pekko logs through an actor: once this marker is through, every earlier line is too.
      node.system().classicSystem().log().warning("marker-after-console-paths");
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (log.lines().stream().noneMatch(l -> l.contains("marker-after-console-paths"))
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      List<String> lines = log.lines();
      assertTrue(lines.stream().anyMatch(l -> l.contains("marker-after-console-paths")), "log capture works");
      for (String line : lines) {
        assertFalse(line.contains("jane.doe") || line.contains("13812345678") || line.contains("passwd"),
            "the log holds what the client put in the path: " + line);
      }
    }
    assertEquals(200, api.get("/console/js/app.js").status(), "the console's files are still served");
    assertEquals(200, api.get("/console/console.css").status());
  }

  /**
   * pekko-http 1.3.0 answers an HTTP/1.0 request with a chunked body 500 itself, past any handler, and logs two
   * ERROR lines with stack traces for each (trial t60). The node reads request heads before pekko-http's parser
   * ({@code RequestFraming}): such a request is a 400 naming the pair, counted in the rate-limited summary line,
   * with no ERROR line.
   */
  @Test
  void http10ChunkedRequestsAre400AndOneSummaryLine() throws Exception {
    int sent = 20;
    try (LogCapture log = LogCapture.everything()) {
      for (int i = 0; i < sent; i++) {
        RawHttp.Answer a = RawHttp.exchange(node.httpPort(),
            "POST /v1/sessions/h10-" + i + "/events HTTP/1.0\r\nHost: x\r\nContent-Type: application/json"
                + "\r\nTransfer-Encoding: chunked", "0\r\n\r\n".getBytes(StandardCharsets.UTF_8), 10_000);
        assertEquals(400, a.status(), a.head() + a.body());
        assertTrue(a.body().contains("\"invalid_request\"") && a.body().contains("HTTP/1.0 request cannot have a chunked"),
            a.body());
      }
      node.system().classicSystem().log().warning("marker-after-http10-chunked");
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (log.lines().stream().noneMatch(l -> l.contains("marker-after-http10-chunked"))
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      List<String> lines = log.lines();
      assertTrue(lines.stream().anyMatch(l -> l.contains("marker-after-http10-chunked")), "log capture works");
      assertEquals(List.of(), log.lines("ERROR"), "no ERROR line for a client's malformed request");
      assertEquals(1, lines.stream().filter(l -> l.contains("client errors: 400 HTTP/1.0 request with a chunked body"))
          .count(), "one summary line within the interval: " + lines);
    }
    assertEquals(200, api.get("/health/live").status());
    assertEquals(404, api.get("/v1/sessions/h10-0").status(), "nothing stored");
    byte[] event = "{\"agentId\":\"h11-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}"
        .getBytes(StandardCharsets.UTF_8);
    byte[] chunked = (Integer.toHexString(event.length) + "\r\n" + new String(event, StandardCharsets.UTF_8)
        + "\r\n0\r\n\r\n").getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer h11 = RawHttp.exchange(node.httpPort(), "POST /v1/sessions/h11-0/events HTTP/1.1\r\nHost: x"
        + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close", chunked, 10_000);
    assertEquals(202, h11.status(), "the same upload as HTTP/1.1 is taken: " + h11.head() + h11.body());
  }

  /** The route's requests with this status on /metrics ("" = any status). */
  private static long counted(String label, String status) {
    long sum = 0;
    String prefix = "otl_http_requests_total{route=\"" + label + "\",status=\"" + status;
    for (String line : api.get("/metrics").body().split("\n")) {
      if (line.startsWith(prefix)) sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }
}
