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

  /**
   * A token read from a secret file keeps its last newline ({@code Files.readString}): the JDK refused the
   * header on every request, and every batch was retried and dropped as "the sink failed
   * (IllegalArgumentException)", the conversation lost with no word of why (trial t113).
   */
  @Test
  void aTokenNoHeaderCanCarryIsRefusedAtOnceWithoutShowingIt() {
    for (String token : new String[] {"s3cr3t-token\n", " s3cr3t-token", "s3cr3t-token\r\n", "s3cr3t\ttoken", "s3cr3t\u0000token"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TrajectorySink.http("http://127.0.0.1:1", token), token);
      assertTrue(e.getMessage().startsWith("bearerToken has white space or a control character"), e.getMessage());
      assertTrue(!e.getMessage().contains("s3cr3t"), "the token is not shown: " + e.getMessage());
    }
    TrajectorySink.http("http://127.0.0.1:1", "s3cr3t-token"); // a clean token passes
    TrajectorySink.http("http://127.0.0.1:1", "  "); // blank: no token, as null
  }

  /** A URL without a port named the node as "127.0.0.1:-1" in every drop warning. */
  @Test
  void anUnreachableNodeWithoutAPortIsNamedByItsSchemesPort() {
    // Nothing listens on port 80 of the test machine's loopback: the connection is refused.
    java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> TrajectorySink.http("http://127.0.0.1", null).deliver("url-s-2", "url-bot", java.util.List.of(
            new io.otl.core.session.SessionInput.Message("m1", null, "user", "hi", null, null)))
            .toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS));
    String message = e.getCause().getMessage();
    assertTrue(message.contains("127.0.0.1:80 "), message);
    assertTrue(!message.contains(":-1"), message);
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
