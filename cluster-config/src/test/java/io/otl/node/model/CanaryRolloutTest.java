package io.otl.node.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.testing.ManualClock;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Canary rollouts on the real PostgreSQL journal, driven only through the public API, with a clock
 * moved by hand: sessions are routed, served by the version the route names, completed with a
 * result, and their outcomes reach ModelVersion through the trajectory feed.
 */
class CanaryRolloutTest {
  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-20T02:00:00Z"));
  private int sessionSeq;

  private Config settings(Config db) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", java.util.List.of(0.75, 1.0),
            "agentscope.training.model-update.step-duration", "1h",
            "agentscope.training.model-update.min-samples-per-step", 40,
            "agentscope.training.model-update.evaluation-metrics", java.util.List.of("task-success-rate"),
            "agentscope.training.read-side.rescan-interval", "2s"))
        .withFallback(TestDatabases.node(db, true));
  }

  /** Routes and serves {@code count} sessions; version {@code v} succeeds with {@code rates.get(v)}. */
  private void serve(Http http, String agent, int count, Map<String, Double> successRate) {
    for (int i = 0; i < count; i++) {
      String session = agent + "-s" + (sessionSeq++);
      JsonNode route = http.get("/v1/models/" + agent + "/route?sessionId=" + session).json();
      String version = route.get("version").asText();
      // Deterministic outcomes: the first rate·100 of every hundred sessions of a version succeed.
      boolean success = (sessionSeq * 37 % 100) < Math.round(successRate.get(version) * 100);
      Http.Response r = http.post("/v1/sessions/" + session + "/events", """
          {"agentId":"%s","events":[{"type":"start","modelVersion":"%s"},
           {"type":"message","role":"user","content":"q"},{"type":"message","role":"assistant","content":"a","latencyMs":400},
           {"type":"result","status":"%s"}]}""".formatted(agent, version, success ? "SUCCESS" : "FAILURE"));
      assertEquals(202, r.status(), r.body());
    }
  }

  private static JsonNode version(Http http, String agent, String v) {
    for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  private static JsonNode awaitState(Http http, String agent, String v, String state) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      last = version(http, agent, v);
      if (last.get("state").asText().equals(state)) return last;
      Thread.sleep(200);
    }
    throw new AssertionError(v + " never reached " + state + ": " + last);
  }

  /**
   * Waits until ModelVersion has recorded the outcomes of {@code served} sessions in all (every
   * version's online session count): the trajectory feed has delivered everything served so far.
   */
  private static void awaitOutcomes(Http http, String agent, long served) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    long recorded = 0;
    while (System.nanoTime() < deadline) {
      recorded = 0;
      for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
        recorded += x.path("metrics").path("online").path("sessions").asLong();
      }
      if (recorded == served) return;
      assertTrue(recorded < served, recorded + " outcomes recorded for " + served + " sessions served");
      Thread.sleep(200);
    }
    throw new AssertionError("the feed delivered " + recorded + " of " + served + " outcomes");
  }

  private static void register(Http http, String agent, String v) {
    Http.Response r = http.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"file:///models/" + v + "\",\"endpoint\":\"http://infer/" + v + "\"}");
    assertEquals(201, r.status(), r.body());
  }

  @Test
  void aCandidateTenPointsWorseIsRolledBackAtTheFirstStepWithTheFigures() throws Exception {
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(TestDatabases.postgres()), clock)) {
      Http http = new Http(node.httpPort());
      register(http, "worse", "v1");
      awaitState(http, "worse", "v1", "STABLE");
      register(http, "worse", "v2");
      awaitState(http, "worse", "v2", "CANARY");
      serve(http, "worse", 400, Map.of("v1", 0.85, "v2", 0.55));
      JsonNode rolledBack = awaitState(http, "worse", "v2", "ROLLED_BACK");
      String reason = rolledBack.get("history").get(rolledBack.get("history").size() - 1).get("reason").asText();
      assertTrue(reason.contains("task-success-rate"), reason);
      assertTrue(reason.matches("(?s).*\\d\\.\\d+.*"), "the reason carries the numbers: " + reason);
      assertEquals("v1", http.get("/v1/models/worse").json().get("stable").asText());
      assertEquals("v1", http.get("/v1/models/worse/route?sessionId=anyone").json().get("version").asText());
    }
  }

  @Test
  void aRatingSentAfterTheResultCountsForUserSatisfaction() throws Exception {
    // the README's order: the session ends with its result, then the user rates it; the rating
    // reached the reward but never the canary's user-satisfaction (found by a new-user trial)
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(TestDatabases.postgres()), clock)) {
      Http http = new Http(node.httpPort());
      register(http, "rated", "v1");
      awaitState(http, "rated", "v1", "STABLE");
      register(http, "rated", "v2");
      awaitState(http, "rated", "v2", "CANARY");
      int first = sessionSeq;
      serve(http, "rated", 6, Map.of("v1", 1.0, "v2", 1.0));
      awaitOutcomes(http, "rated", 6);
      assertEquals(0, satisfactionSamples(http, "rated"), "no feedback yet");
      for (int i = first; i < sessionSeq; i++) {
        Http.Response r = http.post("/v1/feedback/rate?sessionId=rated-s" + i + "&score=4", null);
        assertEquals(200, r.status(), r.body());
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (satisfactionSamples(http, "rated") < 6 && System.nanoTime() < deadline) Thread.sleep(200);
      assertEquals(6, satisfactionSamples(http, "rated"), http.get("/v1/models/rated").body());
      for (String v : java.util.List.of("v1", "v2")) {
        JsonNode online = version(http, "rated", v).path("metrics").path("online");
        if (online.path("userSatisfactionSamples").asLong() > 0) {
          assertEquals(0.75, online.path("userSatisfaction").asDouble(), 1e-9, v + ": a 4 of 5 is 0.75");
        }
      }
      // a second rating changes the reward, not the canary's figures again
      http.post("/v1/feedback/rate?sessionId=rated-s" + first + "&score=1", null);
      Thread.sleep(3000);
      assertEquals(6, satisfactionSamples(http, "rated"));
    }
  }

  private static long satisfactionSamples(Http http, String agent) {
    long n = 0;
    for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
      n += x.path("metrics").path("online").path("userSatisfactionSamples").asLong();
    }
    return n;
  }

  @Test
  void anEqualCandidateStepsUpSurvivesARestartMidRampAndBecomesStable() throws Exception {
    Config db = TestDatabases.postgres();
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(db), clock)) {
      Http http = new Http(node.httpPort());
      register(http, "equal", "v1");
      awaitState(http, "equal", "v1", "STABLE");
      register(http, "equal", "v2");
      awaitState(http, "equal", "v2", "CANARY");
      serve(http, "equal", 200, Map.of("v1", 0.8, "v2", 0.8));
      // The feed is past every outcome (enough samples for the step): only the step's duration holds it.
      awaitOutcomes(http, "equal", 200);
      assertEquals("CANARY", version(http, "equal", "v2").get("state").asText());
      clock.advance(Duration.ofMinutes(61));
      serve(http, "equal", 10, Map.of("v1", 0.8, "v2", 0.8));
      JsonNode ramp = awaitState(http, "equal", "v2", "RAMP");
      assertEquals(0.75, ramp.get("ratio").asDouble(), 1e-9);
    }
    clock.advance(Duration.ofMinutes(30));
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(db), clock)) {
      Http http = new Http(node.httpPort());
      JsonNode ramp = version(http, "equal", "v2");
      assertEquals("RAMP", ramp.get("state").asText(), "a restart mid-step keeps the step");
      assertEquals(0.75, ramp.get("ratio").asDouble(), 1e-9);
      assertEquals("2026-11-20T04:01:00Z", ramp.get("stepDeadline").asText(), "the step keeps its remaining time");
      serve(http, "equal", 200, Map.of("v1", 0.8, "v2", 0.8));
      awaitOutcomes(http, "equal", 410);
      assertEquals("RAMP", version(http, "equal", "v2").get("state").asText(), "the remaining half hour holds");
      clock.advance(Duration.ofMinutes(31));
      serve(http, "equal", 10, Map.of("v1", 0.8, "v2", 0.8));
      awaitState(http, "equal", "v2", "STABLE");
      assertEquals("v2", http.get("/v1/models/equal").json().get("stable").asText());
    }
  }
}
