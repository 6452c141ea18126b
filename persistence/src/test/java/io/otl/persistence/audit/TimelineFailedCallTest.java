package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A failed model call (the gateway's, a failed OTLP chat span) is an empty assistant message with
 * {@code inference.error}: the timeline printed "assistant:  (1200 ms)", an answer that said nothing.
 */
class TimelineFailedCallTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");

  private static String line(String content, String error) {
    InferenceCall call = new InferenceCall(null, "qwen", null, null, null, null, null, error, null, null, null);
    return Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, content, null, 1200L, call));
  }

  @Test
  void aFailedCallSaysSoWithItsError() {
    assertEquals("assistant: (call FAILED: upstream 503) (1200 ms)", line("", "upstream 503"));
    // a stream that broke after it started keeps its text
    assertEquals("assistant: Par (call FAILED: stream broke) (1200 ms)", line("Par", "stream broke"));
  }

  @Test
  void anAnsweredCallIsTheAnswer() {
    assertEquals("assistant: Paris. (1200 ms)", line("Paris.", null));
  }
}
