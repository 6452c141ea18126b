package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A batch with a {@code result} before a message contradicts itself: the result completes the session,
 * after which only feedback is taken. It was a 409 "session s was completed at <now>", naming a
 * completion that never happened (the request is refused whole, the session stays ACTIVE). It is a 400
 * naming both inputs; the same message sent after a stored result stays the 409 of a completed session.
 */
class ResultInMidBatchTest {

  @Test
  void aMessageAfterTheResultOfItsOwnRequestIsA400NamingBoth() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "result-mid-batch-" + UUID.randomUUID()));
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true))) {
      Http api = new Http(node.httpPort());
      assertEquals(202, api.post("/v1/sessions/mid-1/events", "{\"agentId\":\"mid-agent\",\"events\":["
          + "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}").status());

      Http.Response r = api.post("/v1/sessions/mid-1/events", "{\"agentId\":\"mid-agent\",\"events\":["
          + "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"hello\"},"
          + "{\"type\":\"result\",\"status\":\"SUCCESS\"},"
          + "{\"type\":\"message\",\"role\":\"user\",\"content\":\"thanks\"}]}");
      assertEquals(400, r.status(), r.body());
      assertEquals("invalid_request", r.json().path("error").asText());
      assertEquals("events[2] (message) comes after the result at events[1] of this request, and a result"
          + " completes the session: after it only feedback is accepted; send the result last",
          r.json().path("message").asText());
      Http.Response session = api.get("/v1/sessions/mid-1");
      assertEquals("ACTIVE", session.json().path("status").asText(), "nothing of the request was stored");
      assertEquals(1, session.json().path("counts").path("messages").asInt());

      // Feedback after the result in one request is what a completed session takes.
      assertEquals(202, api.post("/v1/sessions/mid-1/events", "{\"agentId\":\"mid-agent\",\"events\":["
          + "{\"type\":\"result\",\"status\":\"SUCCESS\"},{\"type\":\"feedback\",\"kind\":\"THUMBS_UP\"}]}").status());
      Http.Response late = api.post("/v1/sessions/mid-1/events", "{\"agentId\":\"mid-agent\",\"events\":["
          + "{\"type\":\"message\",\"role\":\"user\",\"content\":\"more\"}]}");
      assertEquals(409, late.status(), late.body());
      assertFalse(late.json().path("message").asText().contains("this request"), late.body());
    }
  }
}
