package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A model that takes longer than the server's request-timeout (20 s by default, for the API's quick
 * calls) still answers through the gateway, which waits up to {@code gateway.timeout}: the server cut
 * such a call with 503 "retry the request" (docs promise 504 only after gateway.timeout), and the
 * agent's retry doubled the load. Scaled down here: request-timeout 1 s, the model 2.5 s.
 */
class GatewaySlowAnswerTest {
  private static GatewayTestNode g;

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-slow-answer", Map.of(
        "pekko.http.server.request-timeout", "1s",
        "agentscope.training.gateway.timeout", "8s")).serving("slow");
  }

  @AfterAll
  static void stop() {
    if (g != null) g.close();
  }

  @Test
  void anAnswerSlowerThanTheRequestTimeoutIsDeliveredWithinTheGatewayTimeout() throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    for (boolean stream : new boolean[] {false, true}) {
      String session = "slow-" + stream;
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + g.node.httpPort() + "/v1/chat/completions"))
          .header("Content-Type", "application/json").header("X-Agent-Id", "slow").header("X-Session-Id", session)
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"stream\":" + stream
              + ",\"simulator_delay_ms\":2500,\"messages\":[{\"role\":\"user\",\"content\":\"take your time\"}]}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      assertTrue(stream ? r.body().contains("data: [DONE]") : r.body().contains("take your time"), r.body());
    }
  }
}
