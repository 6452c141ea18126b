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
import io.otl.persistence.readside.FeedSettings;
import io.otl.persistence.readside.TaggedEventFeed;
import io.otl.persistence.readside.TrajectoryFeed;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.Test;

/**
 * A restarted node's trajectory feed redelivers the completions of its last minutes (its first
 * rescan, docs/api.md). Those of sessions that ended before the running rollout began were counted
 * as the stable's sessions of the current step: in an operator trial a canary started a few seconds
 * before a restart was paused for a sample-ratio mismatch ("0 candidate and 263 stable sessions in
 * this step") with no traffic sent since it began. A rollout counts only completions written after
 * it began.
 */
class OutcomesBeforeRolloutTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-20T02:00:00Z"));

  private Config settings(Config db) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(1.0),
            "agentscope.training.model-update.step-duration", "1h",
            "agentscope.training.model-update.min-samples-per-step", 40,
            "agentscope.training.model-update.evaluation-metrics", List.of("task-success-rate"),
            // no timer rescan: the test asks for the restarted feed's first one itself
            "agentscope.training.read-side.rescan-interval", "1h"))
        .withFallback(TestDatabases.node(db, true));
  }

  @Test
  void completionsRedeliveredAfterARestartDoNotJoinARolloutThatBeganAfterThem() throws Exception {
    Config db = TestDatabases.h2(TestDatabases.outputDir("outcomes-before-rollout"));
    String agent = "early";
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(db), clock)) {
      Http http = new Http(node.httpPort());
      register(http, agent, "v1");
      assertEquals("STABLE", version(http, agent, "v1").get("state").asText());
      complete(http, agent, "before", 30, "v1");
      awaitPool(http, agent, 30);
      clock.advance(Duration.ofMinutes(1));
      register(http, agent, "v2");
      assertEquals("CANARY", version(http, agent, "v2").get("state").asText());
    }
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(db), clock)) {
      Http http = new Http(node.httpPort());
      assertTrue(reconcile(node) >= 30, "the restarted feed redelivers the completions of its window");
      JsonNode canary = version(http, agent, "v2");
      assertEquals("CANARY", canary.get("state").asText(), canary.toString());
      assertEquals(0, stepSessions(http, agent, "v1"),
          "completions from before the rollout are not the stable's sessions of its step");

      clock.advance(Duration.ofMinutes(1));
      complete(http, agent, "after", 4, "v1");
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (stepSessions(http, agent, "v1") < 4 && System.nanoTime() < deadline) Thread.sleep(100);
      assertEquals(4, stepSessions(http, agent, "v1"), "completions during the rollout still count");
    }
  }

  private static void register(Http http, String agent, String v) {
    Http.Response r = http.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"hf:org/" + v + "\",\"endpoint\":\"http://infer/" + v + "\"}");
    assertEquals(201, r.status(), r.body());
  }

  private static void complete(Http http, String agent, String prefix, int count, String modelVersion) {
    for (int i = 0; i < count; i++) {
      Http.Response r = http.post("/v1/sessions/" + prefix + "-" + i + "/events", """
          {"agentId":"%s","events":[{"type":"start","modelVersion":"%s"},
           {"type":"message","role":"user","content":"q"},{"type":"message","role":"assistant","content":"a","latencyMs":400},
           {"type":"result","status":"SUCCESS"}]}""".formatted(agent, modelVersion));
      assertEquals(202, r.status(), r.body());
    }
  }

  /** The coordinator took every completion: the feed delivered them before the node stops. */
  private static void awaitPool(Http http, String agent, int size) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      Http.Response r = http.get("/v1/training/" + agent);
      if (r.status() == 200 && r.json().path("poolSize").asInt() >= size) return;
      Thread.sleep(100);
    }
    throw new AssertionError("the pool never reached " + size + ": " + http.get("/v1/training/" + agent).body());
  }

  /** Runs the node's own trajectory feed's rescan now (the singleton's proxy, by its name). */
  private static long reconcile(TrainingNode node) throws Exception {
    ActorRef<TaggedEventFeed.Command> feed = TrajectoryFeed.start(node.system(), "trajectories",
        n -> CompletableFuture.completedFuture(null), FeedSettings.defaults());
    return AskPattern.<TaggedEventFeed.Command, Long>ask(feed, TaggedEventFeed.Reconcile::new, WAIT,
        node.system().scheduler()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private static long stepSessions(Http http, String agent, String v) {
    return version(http, agent, v).path("metrics").path("currentStep").path("sessions").asLong();
  }

  private static JsonNode version(Http http, String agent, String v) {
    for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }
}
