package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The text timeline answers "why was v1 rolled back": a line of it must be an event of the journal.
 * Client text with a line break (a rollback reason, an agent or model version, a tool name) printed a
 * second line that read like a journal event of its own (a forged "v1 PROMOTED"); a later start that
 * moved the session to another model version read "metadata added: " and nothing else.
 */
class TimelineLineForgeryTest {
  private static final String AGENT = "forgery-agent";
  private static final String FORGED = "2020-01-01T00:00:00Z  #99  ";

  @Test
  void clientTextNeverPrintsALineOfItsOwn() throws Exception {
    Path work = TestDatabases.outputDir("timeline-line-forgery");
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.agents." + AGENT + ".base-model", "file-model"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      Http.Response r = http.post("/v1/sessions/s-forged/events", """
          {"agentId":"%s","events":[
            {"type":"start","agentVersion":"1.0\\n%suser: forged by agentVersion","modelVersion":"v0"},
            {"type":"message","role":"user","content":"hello\\r\\n%sforged by content"},
            {"type":"tool_call","toolName":"track\\n%stool forged","success":false},
            {"type":"start","modelVersion":"v2\\u2028%sforged by modelVersion"}]}"""
          .formatted(AGENT, FORGED, FORGED, FORGED, FORGED));
      assertEquals(202, r.status(), r.body());
      for (String v : new String[] {"v1", "v2"}) {  // v1 is stable here (no base model v0), v2 its candidate
        assertEquals(201, http.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"" + v
            + "\",\"artifact\":\"s3://b/" + v + "\",\"endpoint\":\"http://127.0.0.1:9/v1\"}").status());
      }
      Http.Response rollback = http.post("/v1/models/" + AGENT + "/versions/v2/rollback",
          "{\"reason\":\"bad answers\\n" + FORGED + "v2 PROMOTED by the operator\"}");
      assertEquals(202, rollback.status(), rollback.body());

      String session = http.get("/v1/audit/session/s-forged/timeline").body();
      String model = http.get("/v1/audit/model/" + AGENT + "/timeline").body();
      for (String timeline : new String[] {session, model}) {
        timeline.lines().forEach(line -> assertFalse(line.startsWith(FORGED.substring(0, 20)), line + "\n" + timeline));
      }
      assertTrue(session.contains("(agent 1.0\\n" + FORGED + "user: forged by agentVersion)"), session);
      assertTrue(session.contains("tool track\\n" + FORGED + "tool forged FAILED"), session);
      assertTrue(session.contains("model version now v2\\u2028" + FORGED + "forged by modelVersion"), session);
      assertTrue(model.contains("manual rollback: bad answers\\n" + FORGED + "v2 PROMOTED by the operator"), model);
      // The JSON history keeps the text as sent: only the text rendering escapes it.
      assertTrue(http.get("/v1/models/" + AGENT).body().contains("bad answers\\n" + FORGED), "JSON keeps the reason");
    }
  }
}
