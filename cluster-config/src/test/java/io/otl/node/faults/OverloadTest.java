package io.otl.node.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.Http;
import io.otl.node.testing.OneSlotNode;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * {@code http.max-in-flight}: with every slot held, a write gets 429 with {@code Retry-After: 1}
 * and stores nothing; once the slot is free the same write is accepted ({@link OneSlotNode} holds
 * the slot).
 */
class OverloadTest {
  private static final String BODY =
      "{\"agentId\":\"busy-bot\",\"events\":[{\"type\":\"message\",\"eventId\":\"m\",\"role\":\"user\",\"content\":\"hi\"}]}";

  @Test
  void aWriteOverMaxInFlightGets429WithRetryAfterAndChangesNothing() throws Exception {
    try (OneSlotNode node = OneSlotNode.start("overload")) {
      Http http = node.http();
      try (Socket held = node.holdTheSlot()) {
        Http.Response shed = http.post("/v1/sessions/shed-1/events", BODY);
        assertEquals(429, shed.status(), shed.body());
        assertEquals("1", shed.headers().firstValue("Retry-After").orElse(null), shed.headers().toString());
        assertEquals(429, http.get("/v1/sessions/shed-1").status(), "reads take a slot too");
      }
      DatabaseOutageTest.awaitTrue(() -> node.inFlight() == 0.0, "the slot is released when the upload is dropped");
      assertEquals(404, http.get("/v1/sessions/shed-1").status(), "a shed write stored nothing");
      Http.Response accepted = http.post("/v1/sessions/shed-1/events", BODY);
      assertEquals(202, accepted.status(), accepted.body());
      assertEquals(1, http.get("/v1/sessions/shed-1").json().path("messages").size());
    }
  }
}
