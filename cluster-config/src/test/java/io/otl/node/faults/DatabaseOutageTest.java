package io.otl.node.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The README's failure modes on the real PostgreSQL journal, with the network between node and
 * database cut by a {@link TcpProxy} and restored: while it is cut, writes get 503 with
 * Retry-After (never another 5xx, never a 202) and {@code /health/ready} is 503; once it is back
 * the node takes writes again without a restart, and every event acknowledged before, during or
 * after the outage is stored.
 */
class DatabaseOutageTest {

  private static String body(String eventId) {
    return "{\"agentId\":\"outage-bot\",\"events\":[{\"type\":\"message\",\"eventId\":\"" + eventId
        + "\",\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  @Test
  void aCutDatabaseGives503WithRetryAfterAndNotReadyThenRecoversWithNothingLost() throws Exception {
    Config pg = TestDatabases.postgres();
    try (TcpProxy proxy = TcpProxy.toPostgres(pg)) {
      Config db = proxy.through(pg);
      List<String> acked = new ArrayList<>();
      try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
        Http http = new Http(node.httpPort());
        for (int i = 0; i < 10; i++) {
          Http.Response r = http.post("/v1/sessions/outage-" + i + "/events", body("before"));
          assertEquals(202, r.status(), r.body());
          acked.add("outage-" + i + "/before");
        }
        assertEquals(200, http.get("/health/ready").status());

        proxy.cut();
        // Sessions already in memory and new ones alike: each write is refused with 503 and Retry-After.
        for (int i = 0; i < 12; i++) {
          String session = i % 2 == 0 ? "outage-" + i : "outage-new-" + i;
          Http.Response r = http.post("/v1/sessions/" + session + "/events", body("during-" + i));
          assertEquals(503, r.status(), session + " while the database is cut: " + r.body());
          assertTrue(r.headers().firstValue("Retry-After").isPresent(), "503 without Retry-After: " + r.headers());
        }
        awaitTrue(() -> http.get("/health/ready").status() == 503, "readiness 503 while the database is cut");

        proxy.restore();
        List<Integer> statuses = new ArrayList<>();
        awaitTrue(() -> {
          Http.Response r = http.post("/v1/sessions/outage-1/events", body("after"));
          statuses.add(r.status());
          return r.status() == 202;
        }, "a write acknowledged after the database is back");
        acked.add("outage-1/after");
        assertTrue(statuses.stream().allMatch(s -> s == 202 || s == 503), "answers while recovering: " + statuses);
        awaitTrue(() -> http.get("/health/ready").status() == 200, "ready again");
        // A session whose writes failed during the cut restarts with a back-off (up to 5 s) and
        // recovers first: on a busy machine its first write can still outlast the ask timeout and
        // get a 503, which a client retries. Anything but 202 or 503 fails.
        for (int i = 0; i < 10; i++) {
          String session = "outage-" + i;
          List<Integer> answers = new ArrayList<>();
          awaitTrue(() -> {
            Http.Response r = http.post("/v1/sessions/" + session + "/events", body("later"));
            answers.add(r.status());
            return r.status() == 202;
          }, session + " takes writes again");
          assertTrue(answers.stream().allMatch(s -> s == 202 || s == 503), session + ": " + answers);
          acked.add(session + "/later");
        }
      }
      // A fresh node on the same journal, straight to PostgreSQL: every acknowledged event is there.
      try (TrainingNode node = TrainingNode.start(TestDatabases.node(pg, true))) {
        Http http = new Http(node.httpPort());
        for (String a : acked) {
          String[] parts = a.split("/");
          Http.Response s = http.get("/v1/sessions/" + parts[0]);
          assertEquals(200, s.status(), s.body());
          boolean found = false;
          for (var m : s.json().path("messages")) found |= m.path("eventId").asText().equals(parts[1]);
          assertTrue(found, a + " was acknowledged but is not stored: " + s.body());
        }
      }
    }
  }

  /** Polls a condition; the bound is a hang guard, not a measured duration. */
  static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) fail("never: " + what);
      Thread.sleep(200);
    }
  }
}
