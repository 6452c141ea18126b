package io.otl.node.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Trial t108: {@code /health/ready} answered 200 with {@code "journal":{"ok":true}} while the node's journal
 * table was gone from its schema (a schema renamed or dropped by an operator, the table moved, a role
 * losing its grant), and every write, session read and gateway call answered 503. The check ran
 * {@code SELECT 1}, which tells that the database server answers, not that the journal does; design §7.1
 * says readiness is "journal reachable", and a load balancer kept sending clients to a node that could
 * store nothing. The check now reads the journal table itself.
 */
class ReadinessReadsTheJournalTableTest {

  @Test
  void readinessIsDownWhileTheJournalTableIsAwayAndUpAgainAfter() throws Exception {
    Config pg = TestDatabases.postgres();
    String url = pg.getString("agentscope.training.db.url");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(pg, true))) {
      Http http = new Http(node.httpPort());
      awaitStatus(http, 200, "ready at start");

      try (JournalTableMoved moved = JournalTableMoved.away(url)) {
        Http.Response away = awaitStatus(http, 503, "not ready while the journal table is away");
        assertFalse(away.json().path("checks").path("journal").path("ok").asBoolean(true), away.body());
        assertTrue(away.json().path("checks").path("cluster").path("ok").asBoolean(false), away.body());
        assertEquals("not_ready", away.json().path("error").asText(), away.body());
        // Not the driver's text (the table's and schema's names, the database's host): the health routes
        // need no token. The SQLState says what kind of failure.
        String detail = away.json().path("checks").path("journal").path("detail").asText();
        assertEquals("journal unreachable: SQLState 42P01", detail, away.body());
        assertFalse(away.body().contains("event_journal"), away.body());
      }
      Http.Response back = awaitStatus(http, 200, "ready again once the table is back");
      assertTrue(back.json().path("checks").path("journal").path("ok").asBoolean(false), back.body());
    }
  }

  /** Readiness is cached for a second: wait (up to a minute on a loaded machine) for the expected status. */
  private static Http.Response awaitStatus(Http http, int status, String what) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    Http.Response last = null;
    while (System.nanoTime() < end) {
      last = http.get("/health/ready");
      if (last.status() == status) return last;
      Thread.sleep(250);
    }
    fail("never " + what + " (" + status + "); last answer " + (last == null ? "none" : last.status() + " " + last.body()));
    return last;
  }
}
