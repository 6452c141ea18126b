package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.testing.Http;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Trial t87: the keys of inference providers (Groq {@code gsk_}, Replicate {@code r8_}, GitLab
 * {@code glpat-}, xAI {@code xai-}, NVIDIA {@code nvapi-}) pasted into a conversation reached the journal
 * raw through the events API and the gateway alike. Through both doors each is {@code [SECRET]} now, in
 * what the session answers and the audit reads (DesensitizerProviderKeysTest has the rule's cases and
 * the look-alikes it leaves alone). Keys are assembled at run time: no key-shaped literal in the source.
 */
class ProviderKeysEverywhereTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MIXED = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

  private static String body(int n) {
    return MIXED.repeat(n / MIXED.length() + 1).substring(0, n);
  }

  private static final List<String> KEYS = List.of("gsk_" + body(52), "r8_" + body(37), "glpat-" + "x9Fq-Zt2_bK7mLp4Rw8v",
      "xai-" + body(80), "nvapi-" + body(30) + "-" + body(33), "github_pat_" + "11ABCDEFG0_" + body(59),
      "xoxb-" + "1234567890-1234567890123-" + body(24), "AIza" + body(35), "sk_live_" + body(24), "AKIA" + "IOSFODNN7EXAMPLE",
      "sk-ant-api03-" + body(93), "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0." + body(43));
  private static final String EXPECTED = "keys: " + String.join(" ", KEYS.stream().map(k -> "[SECRET]").toList()) + " thanks";

  @Test
  void providerKeysAreSecretsThroughTheEventsApiAndTheGateway() throws Exception {
    String text = "keys: " + String.join(" ", KEYS) + " thanks";
    try (GatewayTestNode gateway = GatewayTestNode.start("provider-keys", Map.of())) {
      gateway.serving("keys-gw");
      ObjectNode batch = JSON.createObjectNode().put("agentId", "keys-api");
      ArrayNode events = batch.putArray("events");
      events.addObject().put("type", "message").put("eventId", "k1").put("role", "user").put("content", text);
      ObjectNode call = events.addObject().put("type", "tool_call").put("eventId", "k2").put("callId", "c1")
          .put("toolName", "shell").put("success", true);
      call.putObject("input").put("cmd", "env");
      call.putObject("output").put("stdout", text);
      Http.Response posted = gateway.api.post("/v1/sessions/s-keys-api/events", batch.toString());
      assertEquals(202, posted.status(), posted.body());
      Http.Response got = gateway.api.get("/v1/sessions/s-keys-api");
      assertEquals(200, got.status(), got.body());
      assertEquals(EXPECTED, got.json().path("messages").get(0).path("content").asText());
      assertEquals(EXPECTED, got.json().path("toolCalls").get(0).path("output").path("stdout").asText());
      assertNoKey(got, gateway.api.get("/v1/audit/session/s-keys-api"));

      Http.Response answer = gateway.api.chat("keys-gw", "s-keys-gw", text, false);
      assertEquals(200, answer.status(), answer.body());
      JsonNode session = null;
      for (int i = 0; i < 100 && session == null; i++) {
        Http.Response r = gateway.api.get("/v1/sessions/s-keys-gw");
        if (r.status() == 200 && r.json().path("messages").size() >= 2) session = r.json();
        else Thread.sleep(100); // the gateway records the turn once the answer is out
      }
      assertTrue(session != null, "the gateway recorded the turn");
      assertEquals(EXPECTED, session.path("messages").get(0).path("content").asText());
      assertNoKey(gateway.api.get("/v1/sessions/s-keys-gw"), gateway.api.get("/v1/audit/session/s-keys-gw"));
    }
  }

  private static void assertNoKey(Http.Response... responses) {
    for (Http.Response r : responses) {
      assertEquals(200, r.status(), r.body());
      for (String key : KEYS) {
        // the body of each key, as its prefix alone may stand in prose
        assertFalse(r.body().contains(key.substring(key.length() - 20)), key + " in " + r.body());
      }
    }
  }
}
