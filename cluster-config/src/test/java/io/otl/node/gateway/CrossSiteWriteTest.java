package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.RawHttp;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trial t34: on a node without auth.token a web page of any site its user opens could POST without a
 * body (no CORS pre-flight for that) and roll back a version: a no-cors fetch to …/rollback was a 202.
 * A browser's write marked {@code Sec-Fetch-Site: cross-site} or {@code same-site} is a 403 and
 * changes nothing; the console's own ({@code same-origin}) and clients that send no such header pass.
 */
class CrossSiteWriteTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode node;

  @BeforeAll
  static void start() throws Exception {
    node = GatewayTestNode.start("cross-site-write", Map.of()).serving("csrf-bot");
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static RawHttp.Answer post(String path, String headers, String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return RawHttp.exchange(node.uri("/").getPort(), "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + headers + "Content-Length: " + bytes.length, bytes, 30_000);
  }

  @Test
  void aBrowsersWriteFromAnotherSiteIsRefusedAndChangesNothing() throws Exception {
    for (String site : new String[] {"cross-site", "same-site", "Cross-Site"}) {
      RawHttp.Answer a = post("/v1/sessions/csrf-0/events", "Origin: http://evil.example\r\nSec-Fetch-Site: " + site
          + "\r\nContent-Type: application/json\r\n", "{\"agentId\":\"csrf-bot\",\"events\":[{\"type\":\"start\"}]}");
      assertEquals(403, a.status(), a.head() + a.body());
      assertEquals("cross_site_request", JSON.readTree(a.body()).path("error").asText(), a.body());
    }
    RawHttp.Answer chat = post("/v1/chat/completions", "Sec-Fetch-Site: cross-site\r\nX-Agent-Id: csrf-bot\r\n"
        + "X-Session-Id: csrf-0\r\nContent-Type: application/json\r\n",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertEquals(403, chat.status(), chat.head() + chat.body());
    assertEquals("cross_site_request", JSON.readTree(chat.body()).path("error").path("code").asText(), chat.body());
    assertEquals(404, node.api.get("/v1/sessions/csrf-0").status(), "nothing stored");
  }

  @Test
  void theConsolesOwnWritesAndApiClientsPass() throws Exception {
    assertEquals(202, post("/v1/sessions/csrf-1/events", "Sec-Fetch-Site: same-origin\r\nContent-Type: application/json\r\n",
        "{\"agentId\":\"csrf-bot\",\"events\":[{\"type\":\"start\",\"eventId\":\"e1\"}]}").status());
    assertEquals(202, post("/v1/sessions/csrf-1/events", "Content-Type: application/json\r\n",
        "{\"agentId\":\"csrf-bot\",\"events\":[{\"type\":\"start\",\"eventId\":\"e2\"}]}").status());
  }
}
