package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Trial t169, on PostgreSQL over real HTTP: 50 unauthenticated reads of unknown sessions added 118 rows
 * to the journal, since each read started the session's entity and sharding's remember-entities store
 * journals every start and stop. Feedback to unknown sessions and bad input to new ids did the same.
 * They are now answered (with the same status and body as before) without starting any entity, while
 * stored sessions, this node's and those a fresh node finds in the journal, still answer.
 */
class UnknownSessionProbesPostgresTest {
  private static final String EVENTS = "{\"agentId\":\"probe-agent\",\"events\":[%s]}";

  @Test
  void readsFeedbackAndRefusedEventsOfUnknownSessionsWriteNothing() throws Exception {
    String probe = "probe-" + UUID.randomUUID().toString().substring(0, 8);
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.postgres(), true))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 20; i++) {
        Http.Response read = http.get("/v1/sessions/" + probe + "-read-" + i);
        assertEquals(404, read.status(), read.body());
        assertEquals("{\"error\":\"not_found\",\"message\":\"session " + probe + "-read-" + i + " is unknown\"}",
            read.body());
      }
      Http.Response feedback = http.post("/v1/sessions/" + probe + "-fb/feedback", "{\"kind\":\"RATING\",\"value\":4}");
      assertEquals(404, feedback.status(), feedback.body());
      assertTrue(feedback.body().contains("feedback applies to a session already recorded"), feedback.body());
      Http.Response answer = http.post("/v1/sessions/" + probe + "-fb-msg/feedback",
          "{\"kind\":\"THUMBS_UP\",\"msgId\":\"m-1\"}");
      assertEquals(404, answer.status(), answer.body());
      assertTrue(answer.body().contains("feedback naming a msgId applies to a response already recorded"),
          answer.body());
      Http.Response named = http.post("/v1/sessions/" + probe + "-fb-agent/feedback",
          "{\"kind\":\"THUMBS_UP\",\"msgId\":\"m-1\",\"agentId\":\"probe-agent\"}");
      assertEquals(404, named.status(), named.body());
      assertTrue(named.body().contains("msgId is not the msgId of a response recorded in session"), named.body());
      Http.Response rate = http.post("/v1/feedback/rate?sessionId=" + probe + "-rate&score=4", null);
      assertEquals(404, rate.status(), rate.body());
      assertTrue(rate.body().contains("rate and thumbs apply to a session already recorded"), rate.body());
      Http.Response thumbs = http.post("/feedback/thumbs?sessionId=" + probe + "-thumbs&helpful=true", null);
      assertEquals(404, thumbs.status(), thumbs.body());

      Http.Response robot = http.post("/v1/sessions/" + probe + "-robot/events",
          EVENTS.formatted("{\"type\":\"message\",\"role\":\"robot\",\"content\":\"hi\"}"));
      assertEquals(400, robot.status(), robot.body());
      assertTrue(robot.body().contains("events[0].role is not one of the allowed"), robot.body());
      Http.Response nine = http.post("/v1/sessions/" + probe + "-nine/events",
          EVENTS.formatted("{\"type\":\"feedback\",\"kind\":\"RATING\",\"value\":9}"));
      assertEquals(400, nine.status(), nine.body());
      assertTrue(nine.body().contains("events[0].value"), nine.body());
      Http.Response afterResult = http.post("/v1/sessions/" + probe + "-after/events", EVENTS.formatted(
          "{\"type\":\"result\",\"status\":\"SUCCESS\"},{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}"));
      assertEquals(400, afterResult.status(), afterResult.body());
      assertTrue(afterResult.body().contains("comes after the result at events[0]"), afterResult.body());
      Http.Response unknownMsg = http.post("/v1/sessions/" + probe + "-msg/events",
          EVENTS.formatted("{\"type\":\"feedback\",\"kind\":\"THUMBS_UP\",\"msgId\":\"m-1\"}"));
      assertEquals(404, unknownMsg.status(), unknownMsg.body());

      assertEquals(0, rowsNaming(node, probe), "the journal names a probed session");
    }
  }

  @Test
  void aLiveSessionIsReadAndRatedAndAFreshNodeFindsItInTheJournal() throws Exception {
    Config pg = TestDatabases.postgres();
    String session = "live-" + UUID.randomUUID().toString().substring(0, 8);
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(pg, true))) {
      Http http = new Http(node.httpPort());
      Http.Response stored = http.post("/v1/sessions/" + session + "/events", EVENTS.formatted(
          "{\"type\":\"message\",\"eventId\":\"u1\",\"role\":\"user\",\"content\":\"hello\"},"
              + "{\"type\":\"message\",\"eventId\":\"a1\",\"msgId\":\"m-1\",\"role\":\"assistant\",\"content\":\"hi\"}"));
      assertEquals(202, stored.status(), stored.body());
      assertEquals(200, http.get("/v1/sessions/" + session).status());
      Http.Response feedback = http.post("/v1/sessions/" + session + "/feedback", "{\"kind\":\"THUMBS_UP\",\"msgId\":\"m-1\"}");
      assertEquals(202, feedback.status(), feedback.body());
      assertEquals(200, http.post("/v1/feedback/rate?sessionId=" + session + "&score=4", null).status());
    }
    // A fresh node over the same journal remembers nothing of the session: the journal read finds it.
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(pg, true))) {
      Http http = new Http(node.httpPort());
      Http.Response read = http.get("/v1/sessions/" + session);
      assertEquals(200, read.status(), read.body());
      assertEquals(2, read.json().path("messages").size(), read.body());
      Http.Response thumbs = http.post("/v1/feedback/thumbs?sessionId=" + session + "&helpful=true", null);
      assertEquals(200, thumbs.status(), thumbs.body());
      Http.Response bad = http.post("/v1/sessions/" + session + "/events",
          EVENTS.formatted("{\"type\":\"message\",\"role\":\"robot\",\"content\":\"hi\"}"));
      assertEquals(400, bad.status(), bad.body());
    }
  }

  /**
   * Rows of the journal (events and snapshots) whose persistence id or payload names {@code probe}:
   * sharding's remember-entities rows hold the ids of the entities it started.
   */
  private static long rowsNaming(TrainingNode node, String probe) throws Exception {
    long rows = 0;
    try (Connection c = JournalSchema.connect(node.journal())) {
      for (String sql : new String[] {
          "SELECT count(*) FROM event_journal WHERE persistence_id LIKE ? OR position(? in event_payload) > 0",
          "SELECT count(*) FROM snapshot WHERE persistence_id LIKE ? OR position(? in snapshot_payload) > 0"}) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setString(1, "%" + probe + "%");
          ps.setBytes(2, probe.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            rows += rs.getLong(1);
          }
        }
      }
    }
    return rows;
  }
}
