package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * "Who promoted v3?" answered with an identity the node checked (docs/operations.md "Who did it"):
 * with one shared {@code auth.token}, the actor was only what {@code X-Actor} claimed. Each operator
 * now may have a token of their own ({@code auth.operators}); a command sent with it is journaled as
 * by {@code token:<name>}, and an {@code X-Actor} naming someone else is a 400 that changes nothing.
 * The shared token keeps working as before. The embedded API names its caller ({@code java:<name>}).
 * A real node over loopback; every log line it writes is captured and holds no token.
 */
class OperatorTokensTest {
  private static final String SHARED = "shared-t0ken-zz91";
  private static final String ALICE = "alice-t0ken-qq42";
  private static final String BOB = "bob-t0ken-ww77";

  @Test
  void aNamedTokenIsRecordedAsItsOperatorAndNeverLogged() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    Config config = ConfigFactory.parseString("agentscope.training.auth { token = \"" + SHARED
            + "\", protect-reads = true, operators { alice = \"" + ALICE + "\", bob = \"" + BOB + "\" } }")
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-optok-")), true));
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      String v3 = "{\"version\":\"v3\",\"artifact\":\"a3\",\"endpoint\":\"http://127.0.0.1:9/v1\"}";
      assertEquals(201, as(http, SHARED, "carol", "/v1/models/tok/versions",
          "{\"version\":\"v1\",\"artifact\":\"a1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}").status());
      assertEquals(401, as(http, "not-" + ALICE, null, "/v1/models/tok/versions", v3).status());
      assertEquals(201, as(http, ALICE, null, "/v1/models/tok/versions", v3).status());

      // bob's token with X-Actor: alice is refused and changes nothing; X-Actor: bob is fine.
      Http.Response claim = as(http, BOB, "alice", "/v1/models/tok/versions/v3/promote", "");
      assertEquals(400, claim.status(), claim.body());
      assertTrue(claim.body().contains("X-Actor"), claim.body());
      assertEquals("CANARY", version(http, "v3").path("state").asText());
      assertEquals(202, as(http, BOB, "bob", "/v1/models/tok/versions/v3/pause", "").status());
      assertEquals(202, as(http, ALICE, null, "/v1/models/tok/versions/v3/resume", "").status());
      assertEquals(202, as(http, BOB, null, "/v1/models/tok/versions/v3/promote", "").status());

      // An operator's token reads where reads need the token, /metrics included.
      assertEquals(200, http.get("/v1/models/tok", "Authorization", "Bearer " + ALICE).status());
      assertEquals(200, http.get("/metrics", "Authorization", "Bearer " + BOB).status());
      assertEquals(401, http.get("/v1/models/tok").status());

      // The embedded API names its caller too; a name that is no plain name is refused, nothing sent.
      var models = node.modelVersions();
      assertInstanceOf(IllegalArgumentException.class, failure(models.rollback("tok", "v3", null, "eve@example.com")));
      get(models.rollback("tok", "v3", "slow", "dave"));

      JsonNode audit = http.get("/v1/audit/model/tok", "Authorization", "Bearer " + SHARED).json();
      assertEquals("http:carol", OperatorActorTest.actorOf(audit, "VersionRegistered", "v1"));
      assertEquals("token:alice", OperatorActorTest.actorOf(audit, "VersionRegistered", "v3"));
      assertEquals("token:bob", OperatorActorTest.actorOf(audit, "RolloutPaused", "v3"));
      assertEquals("token:alice", OperatorActorTest.actorOf(audit, "RolloutResumed", "v3"));
      assertEquals("token:bob", OperatorActorTest.actorOf(audit, "VersionPromoted", "v3"));
      assertEquals("java:dave", OperatorActorTest.actorOf(audit, "VersionRolledBack", "v3"));
      String timeline = http.get("/v1/audit/model/tok/timeline", "Authorization", "Bearer " + SHARED).body();
      assertTrue(timeline.contains("v3 STABLE (manual promotion by token:bob)"), timeline);

      // A manual trigger from the embedded API: requestedBy java:<name>.
      get(node.dataCollector().record("tok-s1", "tok",
          new SessionInput.Message("u", null, "user", "question", null, null),
          new SessionInput.Message("a", null, "assistant", "answer", null, 400L),
          new SessionInput.Feedback("f", null, "RATING", 5.0, "fb-1", "test"),
          new SessionInput.Result("r", null, "SUCCESS", null)));
      var coordinators = node.trainingCoordinators();
      Await.until("the coordinator of tok", () -> status(coordinators), s -> s);
      assertInstanceOf(IllegalArgumentException.class, failure(coordinators.trigger("tok", "13812345678")));
      String jobId = get(coordinators.trigger("tok", "dave")).jobId();
      JsonNode job = http.get("/v1/audit/coordinator/tok", "Authorization", "Bearer " + SHARED).json();
      assertTrue(job.toString().contains("\"requestedBy\":\"java:dave\""), job.toString());
      assertTrue(job.toString().contains(jobId), job.toString());
      for (String body : List.of(audit.toString(), timeline, job.toString())) {
        for (String t : List.of(SHARED, ALICE, BOB)) assertFalse(body.contains(t), "an answer holds a token: " + body);
      }

      node.system().classicSystem().log().warning("marker-after-operator-tokens");
      Await.until("the log marker", () -> SecretsInLogsTest.lines(captured), l -> l.stream().anyMatch(s -> s.contains("marker-after")));
      for (String line : SecretsInLogsTest.lines(captured)) {
        for (String t : List.of(SHARED, ALICE, BOB)) assertFalse(line.contains(t), "the log holds a token: " + line);
      }
    } finally {
      root.detachAppender(captured);
    }
  }

  /** Operator tokens alone (no shared token) protect the writes: none is open because auth.token is empty. */
  @Test
  void operatorTokensAloneProtectWrites() throws Exception {
    Config config = ConfigFactory.parseMap(Map.of("agentscope.training.auth.operators.alice", ALICE))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-optok2-")), true));
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      String v1 = "{\"version\":\"v1\",\"artifact\":\"a1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}";
      assertEquals(401, http.post("/v1/models/solo/versions", v1).status());
      assertEquals(201, as(http, ALICE, "alice", "/v1/models/solo/versions", v1).status());
      assertEquals("token:alice", OperatorActorTest.actorOf(http.get("/v1/audit/model/solo").json(), "VersionRegistered", "v1"));
      // The gateway is not open either: an operator's token with X-Agent-Id acts as the API token does.
      assertEquals(401, http.get("/v1/models", "X-Agent-Id", "solo").status());
      assertEquals(200, http.get("/v1/models", "X-Agent-Id", "solo", "Authorization", "Bearer " + ALICE).status());
    }
  }

  private static Http.Response as(Http http, String token, String actor, String path, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return actor == null
        ? http.postWithHeaders(path, bytes, "Authorization", "Bearer " + token)
        : http.postWithHeaders(path, bytes, "Authorization", "Bearer " + token, "X-Actor", actor);
  }

  private static JsonNode version(Http http, String version) {
    for (JsonNode v : http.get("/v1/models/tok", "Authorization", "Bearer " + SHARED).json().path("versions")) {
      if (v.path("version").asText().equals(version)) return v;
    }
    throw new AssertionError("no version " + version);
  }

  private static boolean status(io.otl.core.api.TrainingCoordinators coordinators) {
    try {
      return get(coordinators.status("tok")).isPresent();
    } catch (Exception e) {
      return false;
    }
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletionStage<?> stage) {
    return assertThrows(ExecutionException.class, () -> get(stage)).getCause();
  }


}
