package io.otl.node.seeds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The AgentScope article's names, through a real node over HTTP on loopback: its controller's
 * paths ({@code /feedback/rate}, {@code /feedback/thumbs}) and {@code FeedbackType} names, and the
 * master switch {@code agentscope.training.enabled = false} (this node runs with it off, with a
 * threshold of one trajectory, so any trigger that could fire would have fired).
 */
class SeedNamesTest {
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.enabled", false,
            "agentscope.training.training-runner.trigger.type", "threshold,scheduled",
            "agentscope.training.training-runner.trigger.cron", "* * * * * ?",
            "agentscope.training.training-runner.trigger.min-samples", 1,
            "agentscope.training.read-side.rescan-interval", "1s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-seeds-")), true)));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static void session(String sessionId, String agentId) {
    Http.Response r = http.post("/v1/sessions/" + sessionId + "/events", """
        {"agentId":"%s","events":[
          {"type":"message","role":"user","content":"how do I reset my password?"},
          {"type":"message","role":"assistant","content":"Use the link on the sign-in page."},
          {"type":"result","status":"SUCCESS"}]}""".formatted(agentId));
    assertEquals(202, r.status(), r.body());
  }

  private static List<String> kinds(String sessionId) {
    List<String> kinds = new ArrayList<>();
    http.get("/v1/sessions/" + sessionId).json().get("feedback").forEach(f -> kinds.add(f.get("kind").asText()));
    return kinds;
  }

  @Test
  void rootFeedbackPathsAreTheV1RoutesUnderTheArticlesNames() {
    session("seed-s1", "seed-agent");
    Http.Response rate = http.post("/feedback/rate?sessionId=seed-s1&score=4", null);
    assertEquals(200, rate.status(), rate.body());
    assertEquals(1, rate.json().get("accepted").asInt(), rate.body());
    Http.Response thumbs = http.post("/feedback/thumbs?sessionId=seed-s1&helpful=false", null);
    assertEquals(200, thumbs.status(), thumbs.body());
    assertEquals(List.of("RATING", "THUMBS_DOWN"), kinds("seed-s1"));

    // Bad parameters: the same 400 (status and body) as the /v1 twin, and nothing stored.
    for (String query : List.of("rate?sessionId=seed-s1&score=6", "rate?sessionId=seed-s1&score=abc",
        "rate?score=3", "rate?sessionId=a%20b&score=3", "thumbs?sessionId=seed-s1&helpful=maybe",
        "thumbs?helpful=true")) {
      Http.Response seed = http.post("/feedback/" + query, null);
      Http.Response v1 = http.post("/v1/feedback/" + query, null);
      assertEquals(400, seed.status(), query + ": " + seed.body());
      assertEquals("invalid_request", seed.json().get("error").asText(), seed.body());
      assertEquals(v1.status(), seed.status(), query);
      assertEquals(v1.body(), seed.body(), query);
    }
    assertEquals(List.of("RATING", "THUMBS_DOWN"), kinds("seed-s1"), "a refused request stores nothing");
    assertEquals(405, http.send("GET", "/feedback/rate?sessionId=seed-s1&score=4", null).status());
  }

  /** helpful takes what the article's Spring controller (@RequestParam boolean) takes: on/off, yes/no, 1/0. */
  @Test
  void thumbsTakesTheBooleanWordsOfTheArticlesController() {
    session("seed-s3", "seed-agent");
    assertEquals(200, http.post("/feedback/thumbs?sessionId=seed-s3&helpful=on", null).status());
    assertEquals(200, http.post("/v1/feedback/thumbs?sessionId=seed-s3&helpful=OFF", null).status());
    assertEquals(List.of("THUMBS_UP", "THUMBS_DOWN"), kinds("seed-s3"));
  }

  @Test
  void feedbackTypeNamesOfTheArticleAreStoredUnderOurKinds() throws Exception {
    session("seed-s2", "seed-agent");
    for (String body : List.of("{\"kind\":\"USER_RATING\",\"value\":5,\"feedbackId\":\"a1\"}",
        "{\"kind\":\"POSITIVE\",\"feedbackId\":\"a2\"}", "{\"kind\":\"negative\",\"feedbackId\":\"a3\"}")) {
      Http.Response r = http.post("/v1/sessions/seed-s2/feedback", body);
      assertEquals(202, r.status(), body + " → " + r.body());
    }
    Http.Response events = http.post("/v1/sessions/seed-s2/events",
        "{\"agentId\":\"seed-agent\",\"events\":[{\"type\":\"feedback\",\"kind\":\"User_Rating\",\"value\":2,\"feedbackId\":\"a4\"}]}");
    assertEquals(202, events.status(), events.body());
    // The embedding (Java) door.
    node.dataCollector().feedback("seed-s2", null, "POSITIVE", null, "a5").toCompletableFuture().get();
    assertEquals(List.of("RATING", "THUMBS_UP", "THUMBS_DOWN", "RATING", "THUMBS_UP"), kinds("seed-s2"));

    Http.Response unknown = http.post("/v1/sessions/seed-s2/feedback", "{\"kind\":\"LIKE\"}");
    assertEquals(400, unknown.status(), unknown.body());
    assertTrue(unknown.json().get("message").asText().contains("USER_RATING"), unknown.body());
    Http.Response ratingWithoutValue = http.post("/v1/sessions/seed-s2/feedback", "{\"kind\":\"USER_RATING\"}");
    assertEquals(400, ratingWithoutValue.status(), "an alias is checked as its kind: " + ratingWithoutValue.body());
  }

  @Test
  void trainingDisabledStopsEveryTriggerButNotCollection() throws Exception {
    session("seed-off-1", "off-agent");
    session("seed-off-2", "off-agent");
    assertEquals(200, http.post("/feedback/thumbs?sessionId=seed-off-1&helpful=true", null).status());
    // Threshold 1: with training on, the first pooled trajectory would already have started a job.
    JsonNode training = Await.until("both trajectories pooled", () -> okJson(http.get("/v1/training/off-agent")),
        t -> t.get("poolSize").asInt() == 2);
    assertEquals("disabled", training.get("status").asText(), training.toString());
    assertTrue(training.get("activeJob").isNull(), training.toString());
    assertTrue(training.get("nextScheduledRun").isNull(), "no scheduled slot is armed: " + training);
    assertEquals(1, training.get("minSamples").asInt());
    assertTrue(training.has("triggers") && training.has("agentId"), training.toString());

    Http.Response trigger = http.post("/v1/training/off-agent/trigger", null);
    assertEquals(409, trigger.status(), trigger.body());
    assertEquals("conflict", trigger.json().get("error").asText());
    assertTrue(trigger.json().get("message").asText().contains("agentscope.training.enabled = false"), trigger.body());
    assertEquals(0, http.get("/v1/jobs?agentId=off-agent").json().get("jobs").size());
    assertEquals(2, http.get("/v1/training/off-agent").json().get("poolSize").asInt(), "the refusal changed nothing");
  }

  private static JsonNode okJson(Http.Response r) {
    return r.status() == 200 ? r.json() : null;
  }
}
