package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A gateway turn's events carry the times they happened: the question when the request arrived, the answer
 * when it ended. Both were stamped with the recording's time, after the answer, so a trajectory (and the
 * console, and an audit "as of" a time) showed the question and an answer that took seconds at one instant.
 */
class GatewayTurnTimesTest {

  @Test
  void theQuestionIsAtTheRequestsArrivalAndTheAnswerAtItsEnd() throws Exception {
    try (GatewayTestNode g = GatewayTestNode.start("gateway-times", Map.of()).serving("timed")) {
      Instant before = Instant.now();
      String body = "{\"model\":\"default\",\"simulator_delay_ms\":1500,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"what time is it?\"}]}";
      Http.Response r = g.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
          "X-Agent-Id", "timed", "X-Session-Id", "timed-1");
      assertEquals(200, r.status(), r.body());
      Instant after = Instant.now();

      JsonNode session = Await.until("the turn recorded", Duration.ofSeconds(20), () -> g.api.get("/v1/sessions/timed-1"),
          s -> s.status() == 200 && s.json().path("messages").size() == 2).json();
      Instant question = Instant.parse(session.path("messages").get(0).path("at").asText());
      Instant answer = Instant.parse(session.path("messages").get(1).path("at").asText());
      long latencyMs = session.path("messages").get(1).path("latencyMs").asLong();
      assertTrue(!question.isBefore(before) && question.isBefore(after), question + " not within the call");
      // The node dates the answer as its question's wall-clock time plus the monotonic time the call
      // took (so question-to-answer is the recorded latency); on this VM the wall clock was seen to
      // slew 1.3 ms against the monotonic one over the 1.5 s call, so the bound allows a few ms.
      assertTrue(!answer.isAfter(after.plusMillis(20)), answer + " after the call ended at " + after);
      // The answer ends after the model server's latency (1.5 s here), not at the question's instant.
      assertTrue(Duration.between(question, answer).toMillis() >= latencyMs && latencyMs >= 1500,
          "question " + question + ", answer " + answer + ", latency " + latencyMs + " ms");
      assertEquals(question.toString(), session.path("startedAt").asText(), "the session starts with its question");
    }
  }
}
