package io.otl.node.faults;

import static io.otl.node.faults.DatabaseOutageTest.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import org.junit.jupiter.api.Test;

/**
 * Trial t108: while the journal's database failed a read, {@code GET /v1/audit/{kind}/{id}} answered 503 with
 * the database driver's own text ({@code the journal could not be read: reading the journal of
 * AgentSession|s failed: ERROR: relation "event_journal" does not exist\n  Position: 189}; with PostgreSQL
 * down, {@code Connection to <host>:<port> refused …}): the database's host, tables and SQL offsets went to
 * any client, and no line reached the log. Every other route that reads the journal answers such a failure
 * with one message naming the SQLState and logs a WARN a minute (trial t69, {@code JournalOutageAnswersTest});
 * the audit now does the same.
 */
class AuditJournalFailureMessageTest {

  @Test
  void anAuditReadTheDatabaseFailsAnswersTheSameMessageAsEveryOtherRoute() throws Exception {
    Config pg = TestDatabases.postgres();
    String url = pg.getString("agentscope.training.db.url");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(pg, true))) {
      Http http = new Http(node.httpPort());
      String session = "ajf-" + Long.toString(System.nanoTime(), 36);
      assertEquals(202, http.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"ajf\",\"events\":["
          + "{\"type\":\"message\",\"eventId\":\"m\",\"role\":\"user\",\"content\":\"hi\"}]}").status());
      awaitTrue(() -> http.get("/v1/audit/session/" + session).status() == 200, "the session's audit");

      try (JournalTableMoved away = JournalTableMoved.away(url)) {
        for (String path : new String[] {"/v1/audit/session/" + session, "/v1/audit/model/ajf",
            "/v1/audit/session/" + session + "?asOf=2026-01-01T00:00:00Z", "/v1/audit/lineage/session/" + session,
            "/v1/audit/lineage/model/ajf"}) {
          Http.Response a = http.get(path);
          assertEquals(503, a.status(), path + ": " + a.body());
          assertTrue(a.headers().firstValue("Retry-After").isPresent(), path);
          assertEquals("unavailable", a.json().path("error").asText(), a.body());
          String message = a.json().path("message").asText();
          assertTrue(message.startsWith("the journal database failed the request (SQLState 42P01)"), path + ": " + message);
          assertFalse(message.contains("event_journal") || message.contains("Position"),
              path + ": the database's own text reached the client: " + message);
        }
      }
      assertEquals(200, http.get("/v1/audit/session/" + session).status());
    }
  }
}
