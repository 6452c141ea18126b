package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A hook rebuilt after the application restarted (or built only to rate, as "Through the gateway"
 * shows, without {@code .agentId}) rates a conversation the node already holds. Trial t151: thumbs,
 * rate, feedback and complete threw {@code IllegalStateException: session … was never seen by this
 * hook and no agentId is set} into the caller's code, although the node needs no agentId for a
 * session it knows; they now send without one, and a session the node does not know is counted
 * in dropped().
 */
class FeedbackWithoutAgentIdTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TestNode.start(TestNode.dir("no-agent-id"));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static void recordConversation(String sessionId) throws Exception {
    node.dataCollector().record(sessionId, "support-bot",
        new SessionInput.Message("u1", null, "user", "Where is order 4711?", null, null),
        new SessionInput.Message("a1", null, "assistant", "It has shipped.", "chatcmpl-1", 10L))
        .toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private static AgentSession.State stored(String sessionId) throws Exception {
    return node.dataCollector().trajectory(sessionId).toCompletableFuture().get(20, TimeUnit.SECONDS).orElseThrow();
  }

  private static void rateAndComplete(OtlTrainingHook training, String sessionId) throws Exception {
    training.thumbs(sessionId, true);
    training.feedback(sessionId, "THUMBS_DOWN", null, "fb-msg", "chatcmpl-1");
    training.complete(sessionId, true, "answered");
    assertTrue(training.flush(Duration.ofSeconds(20)));
    assertEquals(0, training.dropped());
    AgentSession.State s = stored(sessionId);
    assertEquals("COMPLETED", s.status().name());
    assertEquals("support-bot", s.agentId());
    assertEquals(2, s.feedback().size());
  }

  @Test
  void anEmbeddedHookWithoutAgentIdRatesAndCompletesASessionTheNodeHolds() throws Exception {
    recordConversation("known-1");
    try (OtlTrainingHook training = OtlTraining.builder(TrajectorySink.embedded(node.dataCollector())).build()) {
      rateAndComplete(training, "known-1");
    }
  }

  @Test
  void anHttpHookWithoutAgentIdRatesAndCompletesASessionTheNodeHolds() throws Exception {
    recordConversation("known-2");
    try (OtlTrainingHook training =
        OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:" + node.httpPort())).build()) {
      rateAndComplete(training, "known-2");
    }
  }

  @Test
  void aSessionTheNodeDoesNotHoldIsDroppedNotThrown() throws Exception {
    try (OtlTrainingHook training = OtlTraining.builder(TrajectorySink.embedded(node.dataCollector())).build()) {
      training.thumbs("never-recorded", true);
      assertTrue(training.flush(Duration.ofSeconds(20)));
      assertEquals(1, training.dropped());
    }
    assertTrue(node.dataCollector().trajectory("never-recorded").toCompletableFuture().get(20, TimeUnit.SECONDS).isEmpty());
  }
}
