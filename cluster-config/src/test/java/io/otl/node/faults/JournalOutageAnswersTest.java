package io.otl.node.faults;

import static io.otl.node.faults.DatabaseOutageTest.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Trial t69: with PostgreSQL stopped, the routes that read the journal directly (training status,
 * trigger, jobs, a job, cancel, logs, policy, agents, a session's route) answered 500
 * {@code internal_error: unexpected failure: JournalUnavailableException} (or
 * {@code IllegalStateException}) and logged an ERROR with a stack trace per request. Design §7.1: 503
 * when the journal is unreachable. Each must now be a 503 with Retry-After and the error body, unless it
 * can answer from memory (before the fix: {@code /v1/jobs}, {@code /v1/agents} and the route were 500s here).
 */
class JournalOutageAnswersTest {

  @Test
  void everyRouteAnswers503WhileTheJournalIsAway() throws Exception {
    Config pg = TestDatabases.postgres();
    try (TcpProxy proxy = TcpProxy.toPostgres(pg)) {
      Config db = proxy.through(pg);
      try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
        Http http = new Http(node.httpPort());
        String run = Long.toString(System.nanoTime(), 36);
        String agent = "jo-" + run;
        String session = "jo-s-" + run;
        assertEquals(202, http.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"" + agent + "\",\"events\":["
            + "{\"type\":\"message\",\"eventId\":\"m\",\"role\":\"user\",\"content\":\"hi\"},"
            + "{\"type\":\"result\",\"eventId\":\"r\",\"status\":\"SUCCESS\"}]}").status());
        awaitTrue(() -> http.get("/v1/training/" + agent).status() == 200, "the agent's coordinator");
        Http.Response trigger = http.post("/v1/training/" + agent + "/trigger", "");
        assertEquals(202, trigger.status(), trigger.body());
        String job = trigger.json().path("jobId").asText();

        proxy.cut();
        String[][] routes = {
            {"GET", "/v1/training/" + agent}, {"GET", "/v1/training/" + agent + "/policy"},
            {"GET", "/v1/jobs"}, {"GET", "/v1/jobs/" + job}, {"GET", "/v1/jobs/" + job + "/logs"},
            {"GET", "/v1/agents"}, {"GET", "/v1/models/" + agent + "/route?sessionId=" + session},
            {"POST", "/v1/training/" + agent + "/trigger"}, {"POST", "/v1/jobs/" + job + "/cancel"}};
        List<String> wrong = new ArrayList<>();
        int unavailable = 0;
        for (String[] r : routes) {
          Http.Response a = r[0].equals("GET") ? http.get(r[1]) : http.post(r[1], "");
          // What a route can answer from memory (a cached directory, a live entity) may still be answered,
          // as it would be with the journal up: a read 200, a trigger or cancel 202 or 409 (a job is active,
          // or already ending). Anything else (a 404 for the job, a 500) is wrong.
          boolean fromMemory = r[0].equals("GET") ? a.status() == 200 : a.status() == 202 || a.status() == 409;
          boolean ok = fromMemory || a.status() == 503 && a.headers().firstValue("Retry-After").isPresent()
              && a.body().contains("\"error\":\"unavailable\"");
          if (!ok) wrong.add(r[0] + " " + r[1] + " -> " + a.status() + " " + a.body());
          if (a.status() == 503) unavailable++;
        }
        assertTrue(wrong.isEmpty(), "another 5xx than 503 while the journal is away: " + wrong);
        assertTrue(unavailable > 0, "no route saw the journal away");
        proxy.restore();
        awaitTrue(() -> http.get("/v1/jobs/" + job).status() == 200, "the job readable again");
      }
    }
  }
}
