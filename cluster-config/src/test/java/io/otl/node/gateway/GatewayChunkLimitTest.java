package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.RawHttp;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The largest chunk the node takes in one piece is the gateway's or OTLP's body limit, whichever is larger
 * (review t164): pekko-http holds a chunk whole in memory before any route reads it, and the node raised
 * that limit with {@code max-content-length} too, so an operator's 16 MiB for the API let any client make
 * the node hold 16 MiB (twice, with its copy) per body it read, on any route. A chat call up to the
 * gateway's limit still goes as one chunk; one byte more is the gateway's 413, and nothing is stored.
 */
class GatewayChunkLimitTest {
  private static final int GATEWAY_LIMIT = 1536 * 1024;
  private static final int OTLP_LIMIT = 2 * 1024 * 1024;
  private static GatewayTestNode g;

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-chunk-limit", Map.of(
        "agentscope.training.gateway.max-body-bytes", GATEWAY_LIMIT,
        "agentscope.training.otlp.max-decoded-bytes", OTLP_LIMIT,
        "pekko.http.server.parsing.max-content-length", "16m")).serving("chunk-agent");
  }

  @AfterAll
  static void stop() {
    if (g != null) g.close();
  }

  @Test
  void aCallOfTheGatewaysLimitGoesAsOneChunkAndOneByteMoreIsA413() throws Exception {
    RawHttp.Answer within = call("chunk-gw-ok", GATEWAY_LIMIT);
    assertEquals(200, within.status(), within.head() + within.body());
    g.awaitSession("chunk-gw-ok", s -> s.path("messages").size() == 2);

    RawHttp.Answer over = call("chunk-gw-over", GATEWAY_LIMIT + 1);
    assertEquals(413, over.status(), over.head() + over.body());
    assertTrue(over.body().contains("larger than the gateway's limit of " + GATEWAY_LIMIT), over.body());
    assertEquals(404, g.api.get("/v1/sessions/chunk-gw-over").status(), "nothing stored");
  }

  /**
   * A chunk above both limits is refused from its size line, before any of it is held, though the API's
   * max-content-length (16 MiB here) would take a body that large with a Content-Length.
   */
  @Test
  void aChunkAboveTheGatewaysAndOtlpsLimitsIsA413AlsoWhereMaxContentLengthIsHigher() throws Exception {
    byte[] start = (Integer.toHexString(OTLP_LIMIT + 1) + "\r\n{\"agentId\":\"chunk-agent\",").getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer a = RawHttp.exchange(g.node.httpPort(), "POST /v1/sessions/chunk-api-over/events HTTP/1.1\r\n"
        + "Host: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", start, 30_000);
    assertEquals(413, a.status(), a.head() + a.body());
    assertTrue(a.body().contains("max-chunk-size") && a.body().contains("Content-Length"), a.body());
    assertEquals(404, g.api.get("/v1/sessions/chunk-api-over").status(), "nothing stored");
  }

  /** A chat call of exactly {@code size} bytes, sent as one chunk. */
  private static RawHttp.Answer call(String session, int size) throws Exception {
    String head = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    byte[] body = (head + " ".repeat(size - head.length() - 1) + "}").getBytes(StandardCharsets.UTF_8);
    assertEquals(size, body.length);
    ByteArrayOutputStream framed = new ByteArrayOutputStream();
    framed.writeBytes((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    framed.writeBytes(body);
    framed.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    return RawHttp.exchange(g.node.httpPort(), "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        + "Content-Type: application/json\r\nX-Agent-Id: chunk-agent\r\nX-Session-Id: " + session
        + "\r\nTransfer-Encoding: chunked", framed.toByteArray(), 30_000);
  }
}
