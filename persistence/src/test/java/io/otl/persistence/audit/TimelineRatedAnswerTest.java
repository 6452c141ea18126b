package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Per-turn feedback rates one answer (its msgId). The timeline showed neither the answer's msgId nor
 * the one a rating was for, so an operator read a session's per-turn ratings as ratings of the whole.
 */
class TimelineRatedAnswerTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");

  @Test
  void anAnswerAndTheFeedbackOnItNameTheSameMsgId() {
    assertEquals("assistant: Paris. (40 ms) [msgId chatcmpl-7]",
        Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, "Paris.", "chatcmpl-7", 40L, null)));
    assertEquals("feedback THUMBS_UP 1.00 (fb-1) [msgId chatcmpl-7]",
        Timeline.describe(new FeedbackRecorded("f", AT, AT, "fb-1", FeedbackKind.THUMBS_UP, 1.0, "api", "chatcmpl-7")));
  }

  @Test
  void feedbackOnTheWholeSessionNamesNoAnswer() {
    assertEquals("feedback THUMBS_UP 1.00 (fb-1)",
        Timeline.describe(new FeedbackRecorded("f", AT, AT, "fb-1", FeedbackKind.THUMBS_UP, 1.0, "api")));
  }
}
