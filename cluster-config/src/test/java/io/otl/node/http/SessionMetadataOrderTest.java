package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A session's metadata keeps its keys in the order they first came, before and after a restart of
 * the node on the same journal. The state held them in a {@code Map.copyOf}, whose order is neither
 * the sent one nor the same from one JVM to the next, so {@code GET /v1/sessions/{id}} listed them
 * one way and, after a restart, another.
 */
class SessionMetadataOrderTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theMetadataKeepsTheOrderItWasSentInAcrossARestart() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "metadata-order-" + UUID.randomUUID()));
    Config settings = TestDatabases.node(TestDatabases.h2(dir), true);
    String session = "meta-" + UUID.randomUUID();
    // Not sorted, and enough keys that a hash order matching the sent one would be a rare accident.
    Map<String, String> first = new LinkedHashMap<>();
    for (String k : List.of("zeta", "alpha", "mike", "bravo", "yankee", "charlie")) first.put(k, k + "-1");
    // A later start adds keys after the first ones and replaces a value in place.
    Map<String, String> later = new LinkedHashMap<>();
    for (String k : List.of("xray", "alpha", "delta", "whiskey", "echo")) later.put(k, k + "-2");
    Map<String, String> expected = new LinkedHashMap<>(first);
    expected.putAll(later);

    Map<String, String> before;
    try (TrainingNode node = TrainingNode.start(settings)) {
      Http api = new Http(node.httpPort());
      ArrayNode events = JSON.createArrayNode();
      events.addObject().put("type", "start").put("eventId", "start-1").set("metadata", JSON.valueToTree(first));
      events.addObject().put("type", "message").put("eventId", "m-1").put("role", "user").put("content", "hi");
      events.addObject().put("type", "start").put("eventId", "start-2").set("metadata", JSON.valueToTree(later));
      ObjectNode body = JSON.createObjectNode().put("agentId", "meta-agent");
      body.set("events", events);
      Http.Response r = api.post("/v1/sessions/" + session + "/events", JSON.writeValueAsString(body));
      assertEquals(202, r.status(), r.body());
      before = metadata(api, session);
    }
    try (TrainingNode node = TrainingNode.start(settings)) {
      Map<String, String> after = metadata(new Http(node.httpPort()), session);
      assertEquals(new ArrayList<>(expected.entrySet()), new ArrayList<>(before.entrySet()), "before the restart");
      assertEquals(new ArrayList<>(expected.entrySet()), new ArrayList<>(after.entrySet()), "after the restart");
    }
  }

  /** The session's metadata as GET shows it, in the order of the JSON object. */
  private static Map<String, String> metadata(Http api, String session) {
    Http.Response r = api.get("/v1/sessions/" + session);
    assertEquals(200, r.status(), r.body());
    Map<String, String> out = new LinkedHashMap<>();
    JsonNode metadata = r.json().path("metadata");
    metadata.fieldNames().forEachRemaining(k -> out.put(k, metadata.path(k).asText()));
    return out;
  }
}
