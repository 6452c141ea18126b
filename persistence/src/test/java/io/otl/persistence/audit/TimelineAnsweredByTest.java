package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Trial t88: a session routed to a failing candidate is answered by the stable (fallback). Its
 * timeline said "started …, model v1" and then only the answer, so the audit read it as v1's answer;
 * the version that answered (and the one that failed first) was in the JSON only.
 */
class TimelineAnsweredByTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");

  private static String line(String version, String fallbackFrom) {
    InferenceCall call = new InferenceCall(version, "qwen", 30L, 8, 10, "stop", null, null, fallbackFrom, null, null);
    return Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, "Paris.", "chatcmpl-7", 40L, call));
  }

  @Test
  void aGatewayAnswerNamesTheVersionThatAnsweredIt() {
    assertEquals("assistant: Paris. (40 ms) (version v1) [msgId chatcmpl-7]", line("v1", null));
  }

  @Test
  void aFallbackNamesBothTheStableThatAnsweredAndTheCandidateThatFailed() {
    assertEquals("assistant: Paris. (40 ms) (version v0, fallback from v1) [msgId chatcmpl-7]", line("v0", "v1"));
  }
}
