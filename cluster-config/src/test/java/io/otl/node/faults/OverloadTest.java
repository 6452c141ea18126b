package io.otl.node.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * {@code http.max-in-flight}: with every slot held, a write gets 429 with {@code Retry-After: 1}
 * and stores nothing; once the slot is free the same write is accepted. The slot is held by an
 * upload left unfinished on a raw socket, so "every slot held" is a state (read on /metrics), not
 * a race between concurrent requests.
 */
class OverloadTest {
  private static final String BODY =
      "{\"agentId\":\"busy-bot\",\"events\":[{\"type\":\"message\",\"eventId\":\"m\",\"role\":\"user\",\"content\":\"hi\"}]}";

  @Test
  void aWriteOverMaxInFlightGets429WithRetryAfterAndChangesNothing() throws Exception {
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.http.max-in-flight", 1,
            "pekko.http.server.request-timeout", "120s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-overload-")), true)))) {
      Http http = new Http(node.httpPort());
      try (Socket held = new Socket("127.0.0.1", node.httpPort())) {
        OutputStream out = held.getOutputStream();
        out.write(("POST /v1/sessions/held/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: 1000\r\n\r\n{\"agentId\":").getBytes(StandardCharsets.UTF_8));
        out.flush();
        DatabaseOutageTest.awaitTrue(() -> inFlight(http) == 1.0, "the unfinished upload holds the one slot");

        Http.Response shed = http.post("/v1/sessions/shed-1/events", BODY);
        assertEquals(429, shed.status(), shed.body());
        assertEquals("1", shed.headers().firstValue("Retry-After").orElse(null), shed.headers().toString());
        assertEquals(429, http.get("/v1/sessions/shed-1").status(), "reads take a slot too");
      }
      DatabaseOutageTest.awaitTrue(() -> inFlight(http) == 0.0, "the slot is released when the upload is dropped");
      assertEquals(404, http.get("/v1/sessions/shed-1").status(), "a shed write stored nothing");
      Http.Response accepted = http.post("/v1/sessions/shed-1/events", BODY);
      assertEquals(202, accepted.status(), accepted.body());
      assertEquals(1, http.get("/v1/sessions/shed-1").json().path("messages").size());
    }
  }

  /** {@code otl_http_in_flight} from /metrics (which takes no slot itself). */
  private static double inFlight(Http http) {
    for (String line : http.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_http_in_flight ")) return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
    }
    throw new AssertionError("no otl_http_in_flight on /metrics");
  }
}
