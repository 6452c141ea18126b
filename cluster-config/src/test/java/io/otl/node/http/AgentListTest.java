package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/agents}: a new user who ran the README's gateway call opened the console and read "No agents
 * yet": the overview found agents only through their training jobs. The journal's agents (model versions,
 * a training coordinator) are listed; an agent whose sessions are all still active is not, yet.
 */
class AgentListTest {

  private static List<String> agents(Http http) {
    Http.Response r = http.get("/v1/agents");
    assertEquals(200, r.status(), r.body());
    List<String> ids = new ArrayList<>();
    for (JsonNode a : r.json().path("agents")) ids.add(a.path("agentId").asText());
    return ids;
  }

  @Test
  void listsTheAgentsTheJournalKnowsAfterAGatewayCallACompletedSessionOrARegistration() throws Exception {
    Path dir = Files.createTempDirectory(Path.of("target"), "agent-list");
    var config = ConfigFactory.parseMap(Map.of(
            "agentscope.training.simulator.enabled", true,
            "agentscope.training.simulator.port", 0,
            "agentscope.training.simulator.work-dir", dir.resolve("sim").toString()))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true));
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      assertEquals(List.of(), agents(http));

      // The README's first call: the gateway serves v0 from the configuration and journals it.
      Http.Response chat = http.chat("gw-agent", "gw-1", "Hi", false);
      assertEquals(200, chat.status(), chat.body());

      // A completed session over the events API reaches the agent's coordinator; an active one does not.
      assertEquals(202, http.post("/v1/sessions/done-1/events", """
          {"agentId":"events-agent","events":[
            {"type":"message","eventId":"m1","role":"user","content":"q"},
            {"type":"message","eventId":"m2","role":"assistant","content":"a"},
            {"type":"result","status":"SUCCESS"}]}""").status());
      assertEquals(202, http.post("/v1/sessions/open-1/events", """
          {"agentId":"active-agent","events":[{"type":"message","eventId":"m1","role":"user","content":"q"}]}""")
          .status());
      Http.Response reg = http.post("/v1/models/hand-agent/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
      assertEquals(201, reg.status(), reg.body());

      List<String> listed = Await.until("the three agents listed", () -> agents(http),
          ids -> ids.contains("events-agent"));
      assertEquals(List.of("events-agent", "gw-agent", "hand-agent"), listed, "sorted, the active-only agent left out");
      // What each has, so that a client asks only for that (the console's 404s of trial t111).
      JsonNode entries = http.get("/v1/agents").json().path("agents");
      assertEquals(true, entries.get(0).path("training").asBoolean(), entries.toString());
      assertEquals(false, entries.get(1).path("training").asBoolean(true), entries.toString());
      assertEquals(true, entries.get(1).path("models").asBoolean(), entries.toString());
      assertEquals(false, entries.get(2).path("training").asBoolean(true), entries.toString());
      assertEquals(true, entries.get(2).path("models").asBoolean(), entries.toString());

      Http.Response misspelt = http.get("/v1/agents?agent=gw-agent");
      assertEquals(400, misspelt.status(), misspelt.body());
      assertTrue(misspelt.body().contains("agent"), misspelt.body());
    }
  }
}
