package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Design §7.5: the gateway's errors use OpenAI's error object. An agent's {@code GET /v1/models/default}
 * ({@code client.models.retrieve("default")}) is the gateway's, but on a node over {@code http.max-in-flight}
 * it got the API's {@code {"error":"overloaded","message"}}, since the guard gave OpenAI's shape to the
 * fixed gateway paths only (trial t101). The guard now asks the gateway whether it answers the path; the
 * API's {@code GET /v1/models/{agentId}} (no agent named, or the agent's own id) keeps the API's shape. A
 * real node, the one slot held by an unfinished upload on a raw socket, as in OverloadTest.
 */
class GatewayModelRetrieveGuardErrorTest {

  @Test
  void anOverloadedNodeRefusesAnAgentsModelRetrieveInOpenAisShapeAndTheApisReadInItsOwn() throws Exception {
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.http.max-in-flight", 1,
            "pekko.http.server.request-timeout", "120s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-retrieve-429-")), true)))) {
      Http http = new Http(node.httpPort());
      try (Socket held = new Socket("127.0.0.1", node.httpPort())) {
        OutputStream out = held.getOutputStream();
        out.write(("POST /v1/sessions/held/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: 1000\r\n\r\n{\"agentId\":").getBytes(StandardCharsets.UTF_8));
        out.flush();
        awaitOneInFlight(http);

        for (String model : new String[] {"default", "gpt-4o-mini"}) {
          Http.Response r = http.get("/v1/models/" + model, "X-Agent-Id", "support-bot");
          assertEquals(429, r.status(), r.body());
          JsonNode error = r.json().path("error");
          assertTrue(error.isObject(), "OpenAI's error object for " + model + ": " + r.body());
          assertEquals("rate_limit_exceeded", error.path("type").asText(), r.body());
          assertEquals("overloaded", error.path("code").asText(), r.body());
        }
        for (String[] headers : new String[][] {{}, {"X-Agent-Id", "support-bot"}}) {
          Http.Response api = http.get("/v1/models/support-bot", headers);
          assertEquals(429, api.status(), api.body());
          assertEquals("overloaded", api.json().path("error").asText(), "the API's read keeps its shape: " + api.body());
        }
      }
    }
  }

  /** Until the unfinished upload holds the one slot (a state read on /metrics, which takes none). */
  private static void awaitOneInFlight(Http http) throws InterruptedException {
    for (int i = 0; i < 300 && inFlight(http) != 1.0; i++) Thread.sleep(100);
    assertEquals(1.0, inFlight(http), "the unfinished upload holds the one slot");
  }

  private static double inFlight(Http http) {
    for (String line : http.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_http_in_flight ")) return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
    }
    throw new AssertionError("no otl_http_in_flight on /metrics");
  }
}
