package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * "Who promoted v3?" (design §7.1 audit, docs/operations.md "Who did it"): the operator commands on
 * model versions recorded that a transition was manual but not who asked for it, so neither the audit
 * API nor {@code audit model} could answer. Each now records its actor ({@code http}, or {@code
 * http:<X-Actor>}) in the event it writes; an X-Actor that is no plain name is a 400 that changes
 * nothing. A real node, with the operator token set, over loopback.
 */
class OperatorActorTest {
  private static final String TOKEN = "op-token-1";

  @Test
  void promoteRollbackPauseResumeAndRegisterRecordWhoAskedAndTheAuditShowsIt() throws Exception {
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-actor-")), true)))) {
      Http http = new Http(node.httpPort()).withToken(TOKEN);
      assertEquals(201, as(http, "alice", "/v1/models/act/versions",
          "{\"version\":\"v1\",\"artifact\":\"a1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}").status());
      assertEquals(201, as(http, null, "/v1/models/act/versions",
          "{\"version\":\"v3\",\"artifact\":\"a3\",\"endpoint\":\"http://127.0.0.1:9/v1\"}").status());

      // Refused names: an e-mail address, a phone number, two different values. Nothing is recorded.
      Http.Response email = as(http, "bob@example.com", "/v1/models/act/versions/v3/promote", "");
      assertEquals(400, email.status(), email.body());
      assertTrue(email.body().contains("X-Actor") && !email.body().contains("example.com"), email.body());
      Http.Response phone = as(http, "13812345678", "/v1/models/act/versions/v3/pause", "");
      assertEquals(400, phone.status(), phone.body());
      assertFalse(phone.body().contains("13812345678"), phone.body());
      Http.Response twice = http.postWithHeaders("/v1/models/act/versions/v3/promote", new byte[0],
          "Authorization", "Bearer " + TOKEN, "X-Actor", "bob", "X-Actor", "eve");
      assertEquals(400, twice.status(), twice.body());
      assertEquals("CANARY", version(http, "v3").path("state").asText());

      assertEquals(202, as(http, "carol", "/v1/models/act/versions/v3/pause", "").status());
      assertEquals(202, as(http, "carol", "/v1/models/act/versions/v3/resume", "").status());
      Http.Response promote = as(http, "bob", "/v1/models/act/versions/v3/promote", "");
      assertEquals(202, promote.status(), promote.body());
      assertEquals(202, as(http, null, "/v1/models/act/versions/v3/rollback", "{\"reason\":\"too slow\"}").status());

      JsonNode audit = http.get("/v1/audit/model/act").json();
      assertEquals("http:alice", actorOf(audit, "VersionRegistered", "v1"));
      assertEquals("http", actorOf(audit, "VersionRegistered", "v3"));
      assertEquals("http:carol", actorOf(audit, "RolloutPaused", "v3"));
      assertEquals("http:carol", actorOf(audit, "RolloutResumed", "v3"));
      assertEquals("http:bob", actorOf(audit, "VersionPromoted", "v3"));
      assertEquals("http", actorOf(audit, "VersionRolledBack", "v3"));

      String timeline = http.get("/v1/audit/model/act/timeline").body();
      assertTrue(timeline.contains("v3 STABLE (manual promotion by http:bob)"), timeline);
      assertTrue(timeline.contains("v3 PAUSED (manual by http:carol)"), timeline);
      assertTrue(timeline.contains("v3 RESUMED by http:carol"), timeline);
      assertTrue(timeline.contains("v1 REGISTERED by hand by http:alice"), timeline);
      assertTrue(timeline.contains("v3 ROLLED_BACK (manual by http)"), timeline);
    }
  }

  private static Http.Response as(Http http, String actor, String path, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return actor == null
        ? http.postWithHeaders(path, bytes, "Authorization", "Bearer " + TOKEN)
        : http.postWithHeaders(path, bytes, "Authorization", "Bearer " + TOKEN, "X-Actor", actor);
  }

  private static JsonNode version(Http http, String version) {
    for (JsonNode v : http.get("/v1/models/act").json().path("versions")) {
      if (v.path("version").asText().equals(version)) return v;
    }
    throw new AssertionError("no version " + version);
  }

  /** The actor of the first event of that type for that version; "(none)" when it names none. */
  static String actorOf(JsonNode audit, String type, String version) {
    for (JsonNode e : audit.path("events")) {
      if (e.path("type").asText().equals(type) && e.path("event").path("version").asText().equals(version)) {
        return e.path("event").path("actor").asText("(none)");
      }
    }
    throw new AssertionError("no " + type + " of " + version + " in " + audit);
  }
}
