package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Mistakes in the hook's settings fail where they are made, and feedback without an id is not
 * merged into one: each used to surface only as data silently lost later.
 */
class HookSettingsTest {

  /** An invalid agentId was accepted, and then every batch was refused by the node and dropped. */
  @Test
  void invalidSettingsAreRefusedAtBuildNamingTheSetting() {
    OtlTraining.Builder b = OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:1", null));
    IllegalArgumentException id = assertThrows(IllegalArgumentException.class, () -> b.agentId("support bot!"));
    assertTrue(id.getMessage().startsWith("agentId"), id.getMessage());
    assertThrows(IllegalArgumentException.class, () -> b.agentId("x".repeat(65)));
    IllegalArgumentException attempts = assertThrows(IllegalArgumentException.class,
        () -> b.retries(0, Duration.ofMillis(100)));
    assertTrue(attempts.getMessage().startsWith("maxAttempts"), attempts.getMessage());
    assertThrows(IllegalArgumentException.class, () -> b.retries(3, null));
    assertThrows(IllegalArgumentException.class, () -> b.retries(3, Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> b.maxTextLength(0));
    b.agentId("support-bot").retries(1, Duration.ZERO).agentId(null); // valid, and null = the agent's name
    for (String url : new String[] {"node:8080", "not a url", "ftp://node:8080", "http:///v1", null}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TrajectorySink.http(url, "t"),
          String.valueOf(url));
      assertTrue(e.getMessage().startsWith("baseUrl must be the node's http(s) URL"), e.getMessage());
    }
  }

  /** The gateway's base URL (…/v1, as OpenAI clients take it) posted to /v1/v1/sessions/…: every batch 404, dropped. */
  @Test
  void theGatewaysBaseUrlNamesTheSameNode() throws Exception {
    TrainingNode node = TestNode.start(TestNode.dir("hook-url"));
    try (OtlTrainingHook hook = OtlTraining.builder(
        TrajectorySink.http("http://127.0.0.1:" + node.httpPort() + "/v1/", null)).agentId("url-bot").build()) {
      hook.feedback("url-s-1", "ADOPTED", null, "fb-1");
      assertTrue(hook.flush(Duration.ofSeconds(30)));
      assertEquals(0, hook.dropped());
      assertEquals("url-bot", TestNode.session(node, "url-s-1", s -> s.path("feedback").size() == 1).path("agentId").asText());
    } finally {
      node.close();
    }
  }

  /** Every feedback without an id had the event id "as-fb-null": the second and later were dropped as repeats. */
  @Test
  void feedbackWithoutAnIdIsStoredEachTime() throws Exception {
    TrainingNode node = TestNode.start(TestNode.dir("hook-settings"));
    try (OtlTrainingHook hook = OtlTraining.builder(TrajectorySink.embedded(node.dataCollector()))
        .agentId("fb-bot").build()) {
      hook.feedback("fb-s-1", "ADOPTED", null, null);
      hook.feedback("fb-s-1", "THUMBS_UP", null, null);
      assertTrue(hook.flush(Duration.ofSeconds(30)));
      JsonNode session = TestNode.session(node, "fb-s-1", s -> s.path("feedback").size() >= 2);
      Set<String> kinds = new HashSet<>();
      session.path("feedback").forEach(f -> kinds.add(f.path("kind").asText()));
      assertEquals(Set.of("ADOPTED", "THUMBS_UP"), kinds, session.toString());
      assertEquals(0, hook.dropped());
    } finally {
      node.close();
    }
  }
}
