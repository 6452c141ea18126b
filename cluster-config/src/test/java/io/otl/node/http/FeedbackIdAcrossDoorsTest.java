package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Feedback is keyed by its {@code feedbackId} (docs/api.md "Sessions"), whichever door and eventId carry
 * it. Trial t105 sent one rating as a Kafka/events-API {@code feedback} event with an {@code eventId} and a
 * {@code feedbackId}, and the same rating again through {@code POST …/feedback} (which has no eventId): the
 * session stored it twice and counted it twice in the reward, because only the eventId was compared. A
 * real node over loopback.
 */
class FeedbackIdAcrossDoorsTest {
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "feedback-id-doors-" + UUID.randomUUID()));
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static String session(boolean completed) {
    String id = "fb-doors-" + UUID.randomUUID();
    Http.Response r = api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":["
        + "{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"hi\"},"
        + "{\"type\":\"message\",\"eventId\":\"m2\",\"role\":\"assistant\",\"content\":\"hello\",\"msgId\":\"a1\"}"
        + (completed ? ",{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"FAILURE\"}" : "") + "]}");
    assertEquals(202, r.status(), r.body());
    return id;
  }

  private static Http.Response feedbackEvent(String id, String eventId, String feedbackId) {
    return api.post("/v1/sessions/" + id + "/events", "{\"agentId\":\"fb-agent\",\"events\":[{\"type\":\"feedback\","
        + "\"eventId\":\"" + eventId + "\",\"feedbackId\":\"" + feedbackId + "\",\"kind\":\"RATING\",\"value\":5}]}");
  }

  private static Http.Response feedbackRoute(String id, String feedbackId) {
    return api.post("/v1/sessions/" + id + "/feedback",
        "{\"kind\":\"RATING\",\"value\":5,\"feedbackId\":\"" + feedbackId + "\"}");
  }

  @Test
  void aFeedbackIdSentAsAnEventAndThenToTheFeedbackRouteIsStoredOnce() {
    String id = session(false);
    Http.Response first = feedbackEvent(id, "evt-fb-1", "fb-1");
    assertEquals(1, first.json().path("accepted").asInt(), first.body());
    Http.Response again = feedbackRoute(id, "fb-1");
    assertEquals(202, again.status(), again.body());
    assertEquals(0, again.json().path("accepted").asInt(), again.body());
    assertEquals(1, again.json().path("duplicates").asInt(), again.body());
    assertEquals(1, api.get("/v1/sessions/" + id).json().path("feedback").size());
  }

  @Test
  void aFeedbackIdSentToTheFeedbackRouteAndThenAsAnEventWithItsOwnEventIdIsStoredOnce() {
    String id = session(false);
    assertEquals(202, feedbackRoute(id, "fb-2").status());
    Http.Response again = feedbackEvent(id, "evt-fb-2", "fb-2");
    assertEquals(1, again.json().path("duplicates").asInt(), again.body());
    assertEquals(1, api.get("/v1/sessions/" + id).json().path("feedback").size());
  }

  @Test
  void lateFeedbackUnderOneFeedbackIdRevisesTheRewardOnce() {
    String id = session(true);
    double before = api.get("/v1/sessions/" + id).json().path("reward").asDouble();
    feedbackEvent(id, "late-1", "fb-3");
    double once = api.get("/v1/sessions/" + id).json().path("reward").asDouble();
    assertNotEquals(before, once, "a failed session's late 5-star rating revises its reward");
    Http.Response again = feedbackEvent(id, "late-2", "fb-3");
    assertEquals(1, again.json().path("duplicates").asInt(), again.body());
    JsonNode stored = api.get("/v1/sessions/" + id).json();
    assertEquals(1, stored.path("feedback").size(), stored.toString());
    assertEquals(once, stored.path("reward").asDouble(), "the rating counts once (before it: " + before + ")");
  }
}
