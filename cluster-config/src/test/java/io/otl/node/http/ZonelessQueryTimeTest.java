package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A time without a zone in a query ({@code asOf}, {@code since}, {@code until}) is a 400 that says the zone
 * is missing, as the command line's {@code --as-of}/{@code --since} say it. Trial "trial" sent
 * {@code GET /v1/audit/session/s?asOf=2026-11-20T10:00:00} and was told "asOf is not an ISO-8601 time", which
 * it is (ISO-8601 allows a local time): it looked for a typo, where the command line's answer for the same
 * text named what to add.
 */
class ZonelessQueryTimeTest {

  @Test
  void aTimeWithoutAZoneIsToldSoOnEveryRouteThatTakesOne(@TempDir Path dir) {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());
      Http.Response recorded = http.post("/v1/sessions/s-1/events", "{\"agentId\":\"zone-agent\",\"events\":["
          + "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"},"
          + "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"hello\"},"
          + "{\"type\":\"result\",\"status\":\"SUCCESS\"}]}");
      assertEquals(202, recorded.status(), recorded.body());

      String local = "2026-11-21T08:15:00";
      assertNoZone(http.get("/v1/audit/session/s-1?asOf=" + local), "asOf");
      assertNoZone(http.get("/v1/audit/session/s-1/timeline?asOf=" + local), "asOf");
      assertNoZone(http.post("/v1/exports/zone-agent?format=sft&since=" + local, ""), "since");
      assertNoZone(http.post("/v1/exports/zone-agent?format=sft&until=" + local + ".5", ""), "until");

      // Text that is no time at all keeps its answer.
      Http.Response noon = http.get("/v1/audit/session/s-1?asOf=noon");
      assertEquals(400, noon.status(), noon.body());
      assertTrue(noon.json().get("message").asText().startsWith("asOf is not an ISO-8601 time"), noon.body());
      // And a zone given (the + of an offset typed unencoded) still reads.
      assertEquals(200, http.get("/v1/audit/session/s-1?asOf=2999-01-01T10:00:00+08:00").status());
    }
  }

  private static void assertNoZone(Http.Response r, String param) {
    assertEquals(400, r.status(), r.body());
    assertEquals("invalid_request", r.json().get("error").asText(), r.body());
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith(param + " has no time zone: add Z for UTC or the offset of yours"), message);
    assertFalse(message.contains("08:15"), "the value sent is not repeated: " + message);
  }
}
