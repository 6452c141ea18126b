package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import org.junit.jupiter.api.Test;

/**
 * A path no route takes (a typo of a documented one) is a 404 whose message says so and where the
 * routes are listed, over real HTTP; it read "The requested resource could not be found." only, as an
 * unknown session might (trial t18). The path is not echoed: it may hold personal data.
 */
class UnknownRouteMessageTest {

  @Test
  void aPathNoRouteTakesIsNamedAsSuch() throws Exception {
    try (TrainingNode node = TrainingNode.start(
        TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("unknown-route")), true))) {
      Http http = new Http(node.httpPort());
      for (String path : new String[] {"/v1/session/13812345678", "/v1/nothing", "/nothing"}) {
        Http.Response r = http.get(path);
        assertEquals(404, r.status(), path + ": " + r.body());
        assertEquals("not_found", r.json().get("error").asText(), r.body());
        String message = r.json().get("message").asText();
        assertTrue(message.contains("no route of this node takes this method and path"), message);
        assertTrue(message.contains("GET /v1/openapi.json"), message);
        assertFalse(message.contains("13812345678"), message);
      }
      Http.Response session = http.get("/v1/sessions/s-unknown");
      assertEquals(404, session.status(), session.body());
      assertTrue(session.json().get("message").asText().contains("session s-unknown is unknown"), session.body());
    }
  }
}
