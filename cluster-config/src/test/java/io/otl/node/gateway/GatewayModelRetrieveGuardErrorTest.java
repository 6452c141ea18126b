package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.OneSlotNode;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * Design §7.5: the gateway's errors use OpenAI's error object. An agent's {@code GET /v1/models/default}
 * ({@code client.models.retrieve("default")}) is the gateway's, but on a node over {@code http.max-in-flight}
 * it got the API's {@code {"error":"overloaded","message"}}, since the guard gave OpenAI's shape to the
 * fixed gateway paths only (trial t101). The guard now asks the gateway whether it answers the path; the
 * API's {@code GET /v1/models/{agentId}} (no agent named, or the agent's own id) keeps the API's shape. A
 * real node, its one slot held ({@link OneSlotNode}).
 */
class GatewayModelRetrieveGuardErrorTest {

  @Test
  void anOverloadedNodeRefusesAnAgentsModelRetrieveInOpenAisShapeAndTheApisReadInItsOwn() throws Exception {
    try (OneSlotNode node = OneSlotNode.start("retrieve-429"); Socket held = node.holdTheSlot()) {
      Http http = node.http();
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
