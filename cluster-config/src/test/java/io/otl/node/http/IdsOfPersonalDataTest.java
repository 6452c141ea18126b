package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Ids the node makes of what a client sent (an input without eventId, an OpenTelemetry message at its
 * position) hashed the text as sent: "call me on 13812345678" was stored as "call me on [PHONE]" beside
 * an id anyone could test the few billion mobile numbers against, and find the one. The ids now hash
 * the text as stored; what earlier builds stored under the old ids is still recognised when sent again.
 */
class IdsOfPersonalDataTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("pii-ids")), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static String sha256Hex(String text, int bytes) throws Exception {
    byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(d, 0, bytes);
  }

  private static String events(String... events) {
    return "{\"agentId\":\"ids-agent\",\"events\":[" + String.join(",", events) + "]}";
  }

  private static final String PHONE_MESSAGE = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"call me on 13812345678\"}";

  @Test
  void anInputWithoutEventIdIsIdentifiedByItsStoredText() throws Exception {
    Http.Response first = api.post("/v1/sessions/ids-1/events", events(PHONE_MESSAGE));
    assertEquals(202, first.status(), first.body());
    JsonNode message = api.get("/v1/sessions/ids-1").json().get("messages").get(0);
    assertEquals("call me on [PHONE]", message.get("content").asText());
    String asSent = "d2:" + sha256Hex("message:{\"content\":\"call me on 13812345678\",\"role\":\"user\"}", 16);
    assertEquals("d3:" + sha256Hex("message:{\"content\":\"call me on [PHONE]\",\"role\":\"user\"}", 16),
        message.get("eventId").asText(), "not " + asSent + ", which gives the number back");
    Http.Response retry = api.post("/v1/sessions/ids-1/events", events(PHONE_MESSAGE));
    assertEquals(0, JSON.readTree(retry.body()).get("accepted").asInt(), "a retry is still one input: " + retry.body());
    assertEquals(1, JSON.readTree(retry.body()).get("duplicates").asInt(), retry.body());
  }

  @Test
  void whatAnEarlierBuildStoredUnderTheIdOfTheTextAsSentIsADuplicate() throws Exception {
    // As a build before this one stored the input: under the d2 id of its text as sent.
    String asSent = "d2:" + sha256Hex("message:{\"content\":\"call me on 13812345678\",\"role\":\"user\"}", 16);
    Http.Response stored = api.post("/v1/sessions/ids-2/events", events(
        "{\"type\":\"message\",\"eventId\":\"" + asSent + "\",\"role\":\"user\",\"content\":\"call me on 13812345678\"}"));
    assertEquals(202, stored.status(), stored.body());
    Http.Response retry = api.post("/v1/sessions/ids-2/events", events(PHONE_MESSAGE));
    assertEquals(1, JSON.readTree(retry.body()).get("duplicates").asInt(), retry.body());
    assertEquals(1, api.get("/v1/sessions/ids-2").json().get("messages").size());
  }

  private static String chatSpan(String session, String spanId) throws Exception {
    String input = JSON.writeValueAsString("[{\"role\":\"system\",\"content\":\"op +44 20 7946 0958\"},"
        + "{\"role\":\"user\",\"content\":\"hi\"}]");
    return "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f13\","
        + "\"spanId\":\"" + spanId + "\",\"name\":\"chat\",\"attributes\":["
        + "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}},"
        + "{\"key\":\"gen_ai.conversation.id\",\"value\":{\"stringValue\":\"" + session + "\"}},"
        + "{\"key\":\"gen_ai.agent.name\",\"value\":{\"stringValue\":\"ids-agent\"}},"
        + "{\"key\":\"gen_ai.input.messages\",\"value\":{\"stringValue\":" + input + "}}]}]}]}]}";
  }

  @Test
  void anOpenTelemetryMessageIsIdentifiedByItsStoredTextAndItsFormerIdStillCounts() throws Exception {
    String asSent = "otlp:m0:" + sha256Hex("system\nop +44 20 7946 0958", 8);
    Http.Response r = api.post("/v1/traces", chatSpan("ids-otel-1", "0000000000000041"));
    assertEquals(200, r.status(), r.body());
    JsonNode system = api.get("/v1/sessions/ids-otel-1").json().get("messages").get(0);
    assertEquals("op [PHONE]", system.get("content").asText());
    assertEquals("otlp:m0:" + sha256Hex("system\nop [PHONE]", 8), system.get("eventId").asText());
    assertFalse(api.get("/v1/audit/session/ids-otel-1").body().contains(asSent), "the id of the text as sent");

    // A session an earlier build fed holds the message under the id of its text as sent; the next chat
    // span re-sends it, as every chat span re-sends the conversation so far.
    Http.Response old = api.post("/v1/sessions/ids-otel-2/events", events(
        "{\"type\":\"message\",\"eventId\":\"" + asSent + "\",\"role\":\"system\",\"content\":\"op +44 20 7946 0958\"}"));
    assertEquals(202, old.status(), old.body());
    assertEquals(200, api.post("/v1/traces", chatSpan("ids-otel-2", "0000000000000042")).status());
    JsonNode messages = api.get("/v1/sessions/ids-otel-2").json().get("messages");
    assertEquals(2, messages.size(), "the system message is not stored twice: " + messages);
    assertEquals(asSent, messages.get(0).get("eventId").asText());
  }
}
